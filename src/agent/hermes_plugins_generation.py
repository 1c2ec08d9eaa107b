"""Reading a hermes-plugins generation: the reference reader of docs/generations.md.

Standard library only, importable on its own (Python 3.8+). Two uses:

* An agent (or a Hermes maintainer's test) loads what one profile runs::

      import hermes_plugins_generation as g
      directory, lease = g.acquire("/home/u/.hermes")       # resolves pm/current once
      plan = g.read_plan(directory, "default")
      plan.enabled, plan.plugins_dir, plan.site_packages, plan.grants

  ``lease`` is the open ``generation.json`` with a shared ``flock``: keep it open for as long
  as the plugins run, and ``generations gc`` leaves that generation alone.

* ``hermes-plugins exec -- COMMAND`` puts this directory on ``PYTHONPATH`` (its
  ``sitecustomize`` calls :func:`install`), so an unmodified Hermes Agent discovers the
  generation's plugins instead of ``<home>/plugins``; see docs/integration.md.
"""

import fcntl
import json
import os
import sys

FORMAT = 1

#: Capability id -> the ``_TrustPolicy`` field of ``agent.plugin_llm`` it unlocks.
LLM_CAPABILITIES = {
    "llm.provider_override": "allow_provider_override",
    "llm.model_override": "allow_model_override",
    "llm.agent_id_override": "allow_agent_id_override",
    "llm.profile_override": "allow_profile_override",
}


class GenerationError(ImportError):
    """The generation cannot be read, or does not fit this process."""


def current(home):
    """``pm/current`` resolved once to its generation directory, or None (nothing managed)."""
    link = os.path.join(home, "pm", "current")
    if not os.path.lexists(link):
        return None
    return os.path.realpath(link)


def lease(directory):
    """Opens ``generation.json`` with a shared ``flock`` (the reader's lease) and checks the
    generation was not collected meanwhile. Returns the open file, or None if it was."""
    path = os.path.join(directory, "generation.json")
    try:
        handle = open(path, "rb")
    except FileNotFoundError:
        return None
    fcntl.flock(handle.fileno(), fcntl.LOCK_SH)
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
            os.path.join(directory, python["site_packages"]) if python.get("site_packages") else None
        )

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
        raise GenerationError("cannot read %s: %s" % (path, error))
    return Plan(directory, profile, doc)


def env_file_names(path):
    """Variable names assigned in a dotenv file (``KEY=…``, ``export KEY=…``)."""
    names = set()
    try:
        with open(path, "r", encoding="utf-8", errors="replace") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return names
    for line in lines:
        line = line.strip()
        if line.startswith("export "):
            line = line[len("export "):].lstrip()
        name, sep, _ = line.partition("=")
        name = name.strip()
        if sep and name and not name.startswith("#"):
            names.add(name)
    return names


# --- hermes-plugins exec: making an unmodified Hermes load the plan ---------------------------

_HOOKED = ("hermes_cli.plugins", "agent.plugin_llm")


def install(environ=os.environ):
    """Called by this directory's ``sitecustomize``: when ``hermes-plugins exec`` prepared the
    process (``HERMES_PLUGINS_GENERATION`` set), patch Hermes's plugin discovery as it is
    imported. Does nothing otherwise; reads nothing until Hermes is imported."""
    if "HERMES_PLUGINS_GENERATION" not in environ:
        return
    sys.meta_path.insert(0, _Hook(environ))


class _Hook:
    """A meta-path finder that runs :func:`_patch` after the hooked modules execute."""

    def __init__(self, environ):
        self.environ = environ
        self.plan = None

    def find_spec(self, name, path=None, target=None):
        if name not in _HOOKED:
            return None
        from importlib.machinery import PathFinder

        spec = PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return spec
        spec.loader = _PatchingLoader(spec.loader, self)
        return spec

    def get_plan(self):
        if self.plan is None:
            directory = self.environ.get("HERMES_PLUGINS_GENERATION") or ""
            profile = self.environ.get("HERMES_PLUGINS_PROFILE") or "default"
            if directory:
                self.plan = read_plan(directory, profile)
                self.plan.check_python()
            else:
                self.plan = Plan("", profile, {"format": FORMAT})
                self.plan.plugins_dir = os.path.join(os.devnull, "no-generation")
        return self.plan


class _PatchingLoader:
    def __init__(self, loader, hook):
        self._loader = loader
        self._hook = hook

    def __getattr__(self, name):
        return getattr(self._loader, name)

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        self._loader.exec_module(module)
        plan = self._hook.get_plan()
        if module.__name__ == "hermes_cli.plugins":
            _patch_plugins(module, plan, self._hook.environ)
        else:
            _patch_llm(module, plan)


def _require(module, *names):
    missing = [n for n in names if not hasattr(module, n)]
    if missing:
        raise GenerationError(
            "hermes-plugins exec does not know this Hermes (%s lacks %s): refusing to start "
            "rather than load plugins it cannot pin" % (module.__name__, ", ".join(missing))
        )


def _patch_plugins(module, plan, environ):
    _require(module, "PluginManager", "PluginContext", "_get_enabled_plugins",
             "_get_disabled_plugins", "get_hermes_home")
    _require(module.PluginManager, "_scan_directory")
    if plan.site_packages and plan.site_packages not in sys.path:
        import site

        site.addsitedir(plan.site_packages)  # after the agent's own: Hermes's pins win
    expected_home = environ.get("HERMES_PLUGINS_AGENT_HOME")
    env_file = environ.get("HERMES_PLUGINS_ENV_FILE") or ""

    def check_home():
        actual = os.path.realpath(str(module.get_hermes_home()))
        if expected_home and actual != os.path.realpath(expected_home):
            raise GenerationError(
                "Hermes runs with home %s, but hermes-plugins exec prepared profile %r (%s)"
                % (actual, plan.profile, expected_home)
            )

    scan = module.PluginManager._scan_directory

    def _scan_directory(self, path, source=None, *args, **kwargs):
        if source != "user":
            return scan(self, path, source, *args, **kwargs)
        check_home()
        found = list(scan(self, type(path)(plan.plugins_dir), source, *args, **kwargs))
        if plan.external:
            # External plugins stay where the user put them; nothing else of that
            # directory is loaded (the generation decides what runs).
            keep = set(plan.external)
            found.extend(
                m for m in scan(self, path, source, *args, **kwargs)
                if getattr(m, "key", None) in keep or getattr(m, "name", None) in keep
            )
        return found

    enabled_of_config = module._get_enabled_plugins
    disabled_of_config = module._get_disabled_plugins

    def _get_enabled_plugins():
        configured = enabled_of_config()
        chosen = {k for k in plan.enabled if not plan.missing_env(k, os.environ, env_file)}
        if configured is None and not chosen:
            return None
        return {n for n in (configured or ()) if n not in plan.managed} | chosen

    def _get_disabled_plugins():
        return {n for n in disabled_of_config() if n not in plan.managed}

    register_tool = module.PluginContext.register_tool

    def _register_tool(self, *args, **kwargs):
        import inspect

        manifest = getattr(self, "manifest", None)
        key = getattr(manifest, "key", "") or getattr(manifest, "name", "")
        bound = inspect.signature(register_tool).bind_partial(self, *args, **kwargs)
        if (key in plan.plugins and bound.arguments.get("override")
                and not plan.granted(key, "tools.override")):
            error = getattr(module, "PluginToolOverrideError", PermissionError)
            raise error(
                "plugin %r was not granted tools.override (hermes-plugins capabilities %s "
                "--grant tools.override)" % (key, key)
            )
        return register_tool(self, *args, **kwargs)

    module.PluginManager._scan_directory = _scan_directory
    module._get_enabled_plugins = _get_enabled_plugins
    module._get_disabled_plugins = _get_disabled_plugins
    module.PluginContext.register_tool = _register_tool


def _patch_llm(module, plan):
    _require(module, "_resolve_trust_policy")
    resolve = module._resolve_trust_policy

    def _resolve_trust_policy(plugin_id):
        policy = resolve(plugin_id)
        if plugin_id not in plan.plugins:
            return policy
        import dataclasses

        denied = {
            field: False
            for capability, field in LLM_CAPABILITIES.items()
            if hasattr(policy, field) and not plan.granted(plugin_id, capability)
        }
        return dataclasses.replace(policy, **denied) if denied else policy

    module._resolve_trust_policy = _resolve_trust_policy
