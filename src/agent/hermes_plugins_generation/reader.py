"""Reading a hermes-plugins generation: the reference reader of docs/generations.md.

Standard library only, importable on its own (Python 3.8+), with no import of the rest of its
package: the wheel ships this very file as ``hermes_plugins.generation``. An agent (or a
Hermes maintainer's test) loads what one profile runs::

    from hermes_plugins_generation import reader as g  # the wheel: hermes_plugins.generation
    directory, lease = g.acquire("/home/u/.hermes")     # resolves pm/current once
    plan = g.read_plan(directory, "default")
    plan.enabled, plan.plugins_dir, plan.site_packages, plan.grants

``lease`` is the open ``generation.json`` with a shared ``flock``: keep it open for as long as
the plugins run, and ``generations gc`` leaves that generation alone.

On Windows ``pm/current`` is a small file holding ``generations/<N>`` instead of a symbolic
link, and the shared lock is ``LockFileEx`` over the whole file (what the Rust side's
``File::lock_shared`` takes there).
"""

import json
import os
import sys

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None

FORMAT = 1


class GenerationError(ImportError):
    """The generation cannot be read, or does not fit this process."""


def current(home):
    """``pm/current`` resolved once to its generation directory, or None (nothing managed)."""
    link = os.path.join(home, "pm", "current")
    if not os.path.lexists(link):
        return None
    if os.name == "nt" and not os.path.islink(link):
        try:
            with open(link, encoding="utf-8") as pointer:
                target = pointer.read(4096).strip()
        except FileNotFoundError:
            return None
        return os.path.realpath(os.path.join(home, "pm", target))
    return os.path.realpath(link)


def _lock_shared(handle):
    """Waits for a shared lock on the whole of the open file ``handle``."""
    if fcntl is not None:
        fcntl.flock(handle.fileno(), fcntl.LOCK_SH)
        return
    import ctypes
    import msvcrt
    from ctypes import wintypes

    class Overlapped(ctypes.Structure):
        _fields_ = (
            ("internal", ctypes.c_void_p),
            ("internal_high", ctypes.c_void_p),
            ("offset", wintypes.DWORD),
            ("offset_high", wintypes.DWORD),
            ("event", wintypes.HANDLE),
        )

    kernel32 = ctypes.WinDLL("kernel32", use_last_error=True)
    lock = kernel32.LockFileEx
    lock.argtypes = [
        wintypes.HANDLE,
        wintypes.DWORD,
        wintypes.DWORD,
        wintypes.DWORD,
        wintypes.DWORD,
        ctypes.POINTER(Overlapped),
    ]
    lock.restype = wintypes.BOOL
    # Flags 0: shared, waiting; the range std's lock_shared takes (offset 0, length 2**64-1).
    whole = 0xFFFFFFFF
    if not lock(msvcrt.get_osfhandle(handle.fileno()), 0, 0, whole, whole, Overlapped()):
        raise ctypes.WinError(ctypes.get_last_error())


def lease(directory):
    """Opens ``generation.json`` with a shared ``flock`` (the reader's lease) and checks the
    generation was not collected meanwhile. Returns the open file, or None if it was."""
    path = os.path.join(directory, "generation.json")
    try:
        handle = open(path, "rb")
    except FileNotFoundError:
        return None
    _lock_shared(handle)
    try:
        still_there = os.stat(path).st_ino == os.fstat(handle.fileno()).st_ino
    except FileNotFoundError:
        still_there = False
    if not still_there:
        handle.close()
        return None
    return handle


def acquire(home, attempts=5):
    """The current generation and its lease: ``(directory, lease)``, or ``(None, None)`` when
    nothing is published yet."""
    for _ in range(attempts):
        directory = current(home)
        if directory is None:
            return None, None
        handle = lease(directory)
        if handle is not None:
            return directory, handle
    raise GenerationError("pm/current kept changing while taking the lease under %s" % home)


class Plan:
    """What one profile loads from one generation."""

    def __init__(self, directory, profile, doc):
        if doc.get("format") != FORMAT:
            raise GenerationError(
                "%s: generation format %r is not %d (upgrade the reader)"
                % (directory, doc.get("format"), FORMAT)
            )
        self.directory = directory
        self.number = doc.get("number")
        self.profile = profile
        selection = (doc.get("profiles") or {}).get(profile) or {}
        plugins = doc.get("plugins") or []
        self.plugins = {p["key"]: p for p in plugins}
        #: Keys enabled for the profile, deny already applied.
        self.enabled = [k for k in selection.get("enabled") or [] if k in self.plugins]
        #: Every key and manifest name the generation manages (any profile).
        self.managed = set(self.plugins) | {p.get("name") for p in plugins if p.get("name")}
        #: Granted capability ids per key (absent: none).
        self.grants = {k: set(v) for k, v in (selection.get("grants") or {}).items()}
        #: Enabled plugins the generation does not manage: loaded from the profile's own
        #: ``plugins/`` as they are (their requirements are in the generation's venv).
        self.external = [k for k in selection.get("external") or [] if k not in self.managed]
        #: Where the plugins are: ``plugins/<key>`` links into the store.
        self.plugins_dir = os.path.join(directory, "plugins")
        python = doc.get("python") or {}
        self.python_version = python.get("version") or ""
        self.site_packages = (
            os.path.join(directory, python["site_packages"])
            if python.get("site_packages")
            else None
        )

    def allowed(self, environ, env_file):
        """Enabled keys whose ``requires_env`` names are all set (what may run)."""
        return [k for k in self.enabled if not self.missing_env(k, environ, env_file)]

    def granted(self, key, capability):
        """Whether the profile granted ``capability`` to plugin ``key``."""
        return capability in self.grants.get(key, ())

    def missing_env(self, key, environ, env_file):
        """The ``requires_env`` names of ``key`` set neither in ``environ`` nor in ``env_file``."""
        wanted = self.plugins.get(key, {}).get("requires_env") or []
        if not wanted:
            return []
        known = env_file_names(env_file)
        return [n for n in wanted if n not in environ and n not in known]

    def check_python(self, version_info=sys.version_info):
        """Raises unless this interpreter's ``major.minor`` is the generation's."""
        want = ".".join(self.python_version.split(".")[:2])
        have = "%d.%d" % (version_info[0], version_info[1])
        if want and want != have:
            raise GenerationError(
                "generation %s was built for Python %s, this interpreter is %s: run the agent "
                "with --python of that version, or rebuild the generation for this one"
                % (self.number, want, have)
            )


def read_plan(directory, profile):
    """The :class:`Plan` of ``profile`` in the generation at ``directory``."""
    path = os.path.join(directory, "generation.json")
    try:
        with open(path, "rb") as handle:
            doc = json.loads(handle.read().decode("utf-8"))
    except (OSError, ValueError) as error:
        raise GenerationError("cannot read %s: %s" % (path, error)) from error
    return Plan(directory, profile, doc)


def published(environ):
    """The plan of the process's home and profile (:func:`home_of`) in its current
    generation, or None when nothing is published (read without a lease: for deciding, not
    for loading)."""
    root, profile, _ = home_of(environ)
    directory = current(root)
    if directory is None or not os.path.isfile(os.path.join(directory, "generation.json")):
        return None
    try:
        return read_plan(directory, profile)
    except GenerationError:
        return None


def env_file_names(path):
    """Variable names assigned in a dotenv file (``KEY=…``, ``export KEY=…``)."""
    names = set()
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return names
    for raw in lines:
        line = raw.strip()
        if line.startswith("export "):
            line = line[len("export ") :].lstrip()
        name, sep, _ = line.partition("=")
        name = name.strip()
        if sep and name and not name.startswith("#"):
            names.add(name)
    return names


def home_of(environ=os.environ, for_writing=False):
    """``(root, profile, agent_home)`` of the process: the home Hermes uses (``HERMES_HOME``,
    else ``~/.hermes``), which is a profile's home when it is ``<root>/profiles/<name>`` under
    a root that hermes-plugins manages (``<root>/pm``). ``for_writing`` (a routed ``hermes
    plugins`` command): a profile home of a root nothing manages yet starts managing that root,
    unless the profile's own directory is already a managed root."""
    agent_home = os.path.abspath(
        os.path.expanduser(environ.get("HERMES_HOME") or os.path.join("~", ".hermes"))
    )
    parent = os.path.dirname(agent_home)
    if os.path.basename(parent) == "profiles":
        root = os.path.dirname(parent)
        if os.path.isdir(os.path.join(root, "pm")) or (
            for_writing and not os.path.isdir(os.path.join(agent_home, "pm"))
        ):
            return root, os.path.basename(agent_home), agent_home
    return agent_home, "default", agent_home
