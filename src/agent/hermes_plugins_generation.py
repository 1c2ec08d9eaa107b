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
  generation's plugins instead of ``<home>/plugins``: the general plugin loader
  (``hermes_cli.plugins``), and the loaders that read ``<home>/plugins`` on their own --
  memory providers (``plugins.memory``), model providers (``providers``) and cron scheduler
  providers (``plugins.cron_providers``); see docs/integration.md.

* ``hermes-plugins activate`` writes this file into a Hermes installation's site-packages
  with a ``.pth`` line calling :func:`activate`, so that every process of that installation
  does the same by itself, for the home ``HERMES_HOME`` names (``~/.hermes`` by default) —
  and nothing at all while that home has no published generation.

* In both cases Hermes's own plugin commands are served by hermes-plugins:
  ``hermes plugins install/update/remove/enable/disable/validate`` run the binary with the
  equivalent arguments; ``hermes plugins list`` and the bare ``hermes plugins`` stay Hermes's
  own, reading the generation (:func:`_patch_main`, :func:`_patch_plugins_cmd`).
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
    "llm.task_override": "allow_task_override",  # Hermes 0.22 (agent/plugin_llm.py _TrustPolicy)
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

#: Modules patched right after they execute. ``providers`` must be hooked on its own: Hermes
#: imports every model-provider plugin while ``hermes_cli.config`` is being imported
#: (``_inject_profile_env_vars`` calls ``providers.list_providers()`` at import time), i.e.
#: before ``hermes_cli.plugins`` has finished executing. ``hermes_cli.main`` and
#: ``hermes_cli.plugins_cmd`` are hooked for the ``hermes plugins`` commands.
_HOOKED = (
    "hermes_cli.main",
    "hermes_cli.plugins_cmd",
    "hermes_cli.plugins",
    "agent.plugin_llm",
    "providers",
    "plugins.plugin_loader",
    "plugins.memory",
    "plugins.cron_providers",
    "plugins.context_engine",
    "plugins.computer_use",
)


def install(environ=os.environ):
    """Called by this directory's ``sitecustomize``: when ``hermes-plugins exec`` prepared the
    process (``HERMES_PLUGINS_GENERATION`` set), patch Hermes's plugin discovery as it is
    imported. Does nothing otherwise; reads nothing until Hermes is imported."""
    if "HERMES_PLUGINS_GENERATION" not in environ:
        return
    sys.meta_path.insert(0, _Hook(environ, binary=environ.get("HERMES_PLUGINS_BIN")))


#: The lease an activated process holds on its generation (open for the process's life).
_ACTIVATED_LEASE = None


def activate(environ=os.environ, binary=None):
    """Called by the ``.pth`` line ``hermes-plugins activate`` writes (``binary``: the
    hermes-plugins that wrote it): unless ``exec`` prepared the process already, hook Hermes's
    plugin loaders as :func:`install` does, but decide lazily — at the first hooked import, so
    a process that never loads Hermes's plugins (pip, a script) reads nothing — which home it
    is (:func:`home_of`) and whether that home has a published generation; with none, Hermes's
    discovery is left exactly as it is (its plugin commands are still served by hermes-plugins:
    the user activated it to manage that home)."""
    if "HERMES_PLUGINS_GENERATION" in environ:
        return
    sys.meta_path.insert(0, _Hook(environ, lazy=True, binary=binary))


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


def _lease_for(environ):
    """For an activated process: the environment ``exec`` would have given it, with the
    current generation leased for the process's life; None when nothing is published."""
    global _ACTIVATED_LEASE
    root, profile, agent_home = home_of(environ)
    directory, handle = acquire(root)
    if directory is None:
        return None
    _ACTIVATED_LEASE = handle
    prepared = dict(environ)
    prepared.update({
        "HERMES_PLUGINS_GENERATION": directory,
        "HERMES_PLUGINS_PROFILE": profile,
        "HERMES_PLUGINS_AGENT_HOME": agent_home,
        "HERMES_PLUGINS_ENV_FILE": os.path.join(root, ".env"),
    })
    return prepared


class _Hook:
    """A meta-path finder that runs :func:`_patch` after the hooked modules execute."""

    def __init__(self, environ, lazy=False, binary=None):
        self.environ = environ
        self.plan = None
        #: Activated (not under ``exec``): the generation is found at the first hooked import.
        self.lazy = lazy
        #: The hermes-plugins binary that serves ``hermes plugins …`` (see :func:`_tool`).
        self.binary = binary
        #: The environment the process started with (``environ`` becomes the prepared one).
        self.started = environ

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
        """The plan of the process, read once; None when an activated process's home has
        nothing published (Hermes is then left alone)."""
        if self.lazy:
            self.lazy = False
            prepared = _lease_for(self.environ)
            if prepared is None:
                self.environ = None
                return None
            self.environ = prepared
        if self.environ is None:
            return None
        if self.plan is None:
            directory = self.environ.get("HERMES_PLUGINS_GENERATION") or ""
            profile = self.environ.get("HERMES_PLUGINS_PROFILE") or "default"
            if directory:
                plan = read_plan(directory, profile)
                plan.check_python()
            else:
                plan = Plan("", profile, {"format": FORMAT})
                plan.plugins_dir = os.path.join(os.devnull, "no-generation")
            if plan.site_packages and plan.site_packages not in sys.path:
                import site

                # Here, at the first hooked import, not when hermes_cli.plugins is patched:
                # model providers are imported earlier and need their requirements too.
                site.addsitedir(plan.site_packages)  # after the agent's own: Hermes's pins win
            self.plan = plan
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
        name = module.__name__
        if name == "hermes_cli.main":
            _patch_main(module, self._hook)
            return
        if name == "hermes_cli.plugins_cmd":
            _patch_plugins_cmd(module, self._hook)
            return
        plan = self._hook.get_plan()
        if plan is None:
            return
        if name == "hermes_cli.plugins":
            _patch_plugins(module, plan, self._hook.environ)
        elif name == "agent.plugin_llm":
            _patch_llm(module, plan)
        elif name == "providers":
            _patch_model_providers(module, plan, self._hook.environ)
        elif name == "plugins.plugin_loader":
            _patch_plugin_loader(module, plan, self._hook.environ)
        else:
            _patch_flat_providers(module, plan, self._hook.environ)


def _hermes_version():
    """The installed ``hermes-agent`` version, for messages ("unknown" when not installed)."""
    try:
        # Hermes 0.22+: ``hermes_cli.__version__`` reads the install stamp (hermes_cli/__init__.py).
        return str(sys.modules["hermes_cli"].__version__)
    except Exception:
        pass
    try:
        from importlib.metadata import version

        return version("hermes-agent")
    except Exception:
        return "unknown"


def _require(module, *names):
    missing = [n for n in names if not hasattr(module, n)]
    if missing:
        raise GenerationError(
            "hermes-plugins does not know Hermes %s (%s lacks %s): refusing to start rather "
            "than load plugins it cannot pin (supported: the releases docs/integration.md "
            "names; `hermes-plugins deactivate` restores Hermes's own loading)"
            % (_hermes_version(), module.__name__, ", ".join(missing))
        )


def _patch_plugins(module, plan, environ):
    _require(module, "PluginManager", "PluginContext", "_get_enabled_plugins",
             "_get_disabled_plugins", "get_hermes_home")
    env_file = environ.get("HERMES_PLUGINS_ENV_FILE") or ""

    def check_home():
        _check_home(module.get_hermes_home(), plan, environ)

    def user_manifests(scan, path):
        """The generation's plugins in place of ``path`` (``<home>/plugins``), then the
        profile's external plugins from ``path`` — nothing else of that directory is loaded
        (the generation decides what runs)."""
        check_home()
        found = list(scan(type(path)(plan.plugins_dir)))
        if plan.external:
            keep = set(plan.external)
            found.extend(
                m for m in scan(path)
                if getattr(m, "key", None) in keep or getattr(m, "name", None) in keep
            )
        return found

    discovery = sys.modules.get("hermes_cli.plugins_discovery")
    if hasattr(module.PluginManager, "_collect_directory_manifests") and discovery is not None:
        # Upstream main (after 0.19.0; typed from source, commit 00067189): discovery lives
        # in ``hermes_cli.plugins_discovery``; ``collect_directory_manifests()`` scans
        # ``get_hermes_home()/plugins`` with its module-level ``scan_directory`` (the
        # ``PluginManager._scan_directory`` wrapper is no longer on that path).
        _require(discovery, "scan_directory", "get_hermes_home")
        collect = module.PluginManager._collect_directory_manifests
        scan_directory = discovery.scan_directory

        def _collect_directory_manifests(self, *args, **kwargs):
            found = collect(self, *args, **kwargs)
            user_dir = discovery.get_hermes_home() / "plugins"
            ours = user_manifests(lambda p: scan_directory(p, "user"), user_dir)
            # Same precedence as Hermes (bundled < user < project: later wins on a key).
            source = lambda m: getattr(m, "source", None)
            return ([m for m in found if source(m) == "bundled"] + ours
                    + [m for m in found if source(m) not in ("bundled", "user")])

        module.PluginManager._collect_directory_manifests = _collect_directory_manifests
    else:
        _require(module.PluginManager, "_scan_directory")
    if hasattr(module.PluginManager, "_scan_directory"):
        # 0.13-0.19: the discovery path. 0.22: still what ``hermes plugins doctor <id>``
        # (hermes_cli/plugin_dev.py) uses to find an installed plugin under <home>/plugins.
        scan = module.PluginManager._scan_directory

        def _scan_directory(self, path, source=None, *args, **kwargs):
            if source != "user":
                return scan(self, path, source, *args, **kwargs)
            return user_manifests(lambda p: scan(self, p, source, *args, **kwargs), path)

        module.PluginManager._scan_directory = _scan_directory

    enabled_of_config = module._get_enabled_plugins
    disabled_of_config = module._get_disabled_plugins

    def _get_enabled_plugins():
        configured = enabled_of_config()
        chosen = set(plan.allowed(os.environ, env_file))
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

    module._get_enabled_plugins = _get_enabled_plugins
    module._get_disabled_plugins = _get_disabled_plugins
    if discovery is not None and hasattr(discovery, "_get_enabled_plugins"):
        # Main defines them there and re-exports them: patch both names.
        discovery._get_enabled_plugins = _get_enabled_plugins
        discovery._get_disabled_plugins = _get_disabled_plugins
    module.PluginContext.register_tool = _register_tool
    _patch_capabilities(module, plan)


def _patch_capabilities(module, plan):
    """Hermes 0.22 gates capabilities (``tools.override``, ``gateway.platform_actions``,
    ``ctx.has_capability``) through ``hermes_cli.plugin_capabilities.plugin_capability_granted``,
    which ``hermes_cli.plugins`` imports by name: a plugin the generation manages keeps a
    capability only if the profile granted it in the generation too."""
    capabilities = sys.modules.get("hermes_cli.plugin_capabilities")
    if capabilities is None or not hasattr(capabilities, "plugin_capability_granted"):
        return  # Hermes 0.13 - 0.19: no such module
    granted = capabilities.plugin_capability_granted

    def plugin_capability_granted(plugin_id, capability, *args, **kwargs):
        allowed = granted(plugin_id, capability, *args, **kwargs)
        if allowed and plugin_id in plan.plugins and not plan.granted(plugin_id, capability):
            return False
        return allowed

    plugin_capability_granted.__wrapped__ = granted
    capabilities.plugin_capability_granted = plugin_capability_granted
    if getattr(module, "plugin_capability_granted", None) is granted:
        module.plugin_capability_granted = plugin_capability_granted


def _check_home(home, plan, environ):
    """Refuses a Hermes running with another home than the one ``exec`` prepared."""
    expected_home = environ.get("HERMES_PLUGINS_AGENT_HOME")
    actual = os.path.realpath(str(home))
    if expected_home and actual != os.path.realpath(expected_home):
        raise GenerationError(
            "Hermes runs with home %s, but hermes-plugins exec prepared profile %r (%s)"
            % (actual, plan.profile, expected_home)
        )


class _DirView:
    """Stands in for the one ``<home>/plugins[/model-providers]`` directory that a Hermes
    provider loader scans: ``iterdir()`` yields the chosen plugin directories (real paths,
    named by the last segment of their key, which is the provider name Hermes uses) and
    ``view / name`` finds one of them. A name not in the view maps to a path that cannot
    exist, so nothing outside the selection is ever found."""

    def __init__(self, label, entries, keyed=()):
        self._label = label
        self._entries = {}
        for name, path in entries:
            if name not in self._entries and os.path.isdir(path):
                self._entries[name] = path
        #: ``view / "memory/notes"``: Hermes joins a configured name to ``<home>/plugins`` as
        #: it is, so a category key names ``<home>/plugins/<category>/<dir>``.
        self._keyed = {}
        for key, path in keyed:
            if "/" in key and key not in self._keyed and os.path.isdir(path):
                self._keyed[key] = path

    def is_dir(self):
        return True

    def exists(self):
        return True

    def iterdir(self):
        return iter(list(self._entries.values()))

    def __truediv__(self, name):
        from pathlib import Path

        name = str(name).strip("/")
        found = self._entries.get(name) or self._keyed.get(name)
        return found if found is not None else Path(os.devnull, "not-in-generation", name)

    def __fspath__(self):
        return self._label

    def __str__(self):
        return self._label

    def __repr__(self):
        return "<hermes-plugins view %s: %s>" % (self._label, ", ".join(sorted(self._entries)))


def _leaf(key):
    return key.rsplit("/", 1)[-1]


def _home_plugins(get_hermes_home, plan, environ):
    home = get_hermes_home()
    _check_home(home, plan, environ)
    return os.path.join(str(home), "plugins")


def _managed_dirs(plan, environ):
    """``(key, path)`` of the plugins the generation runs for this profile."""
    env_file = environ.get("HERMES_PLUGINS_ENV_FILE") or ""
    from pathlib import Path

    return [(k, Path(plan.plugins_dir, *k.split("/"))) for k in plan.allowed(os.environ, env_file)]


def _flat_view(plan, environ, own):
    """The generation's plugins as if flat in ``<home>/plugins`` (see
    :func:`_patch_flat_providers`); ``own`` (``"memory/"``) is the calling loader's category."""
    from pathlib import Path

    from hermes_constants import get_hermes_home

    def preference(item):
        key = item[0]
        return 0 if own and key.startswith(own) else 1 if "/" not in key else 2

    home_plugins = _home_plugins(get_hermes_home, plan, environ)
    managed = sorted(_managed_dirs(plan, environ), key=preference)
    entries = [(_leaf(k), p) for k, p in managed]
    entries += [(n, Path(home_plugins, n)) for n in plan.external if "/" not in n]
    keyed = list(managed) + [
        (n, Path(home_plugins, *n.split("/"))) for n in plan.external if "/" in n
    ]
    return _DirView(plan.plugins_dir, entries, keyed)


def _patch_flat_providers(module, plan, environ):
    """The category loaders -- ``plugins.memory``, ``plugins.cron_providers`` (0.19+),
    ``plugins.context_engine`` and ``plugins.computer_use`` (0.22) -- look for user providers
    only in flat ``<home>/plugins/<name>/`` directories, the provider's name being the
    directory's name (``memory.provider: <name>``; a configured ``memory/notes`` is joined to
    ``<home>/plugins`` as it is), and do not read ``plugins.enabled``. Under a generation they
    see, as if flat: every plugin enabled for the profile, whatever its category
    (``memory/engram`` is seen as ``engram``, and found as ``memory/engram`` too), then the
    profile's ``external`` plugins from ``<home>/plugins``. Hermes itself still decides which
    of them are providers (``_is_memory_provider_dir``) and which one is active.

    Several enabled plugins can end in the same name (``engram`` a tools plugin,
    ``context_engine/engram``, ``memory/engram``): the view keeps the first, so the loader's
    own category comes first (``memory/`` for ``plugins.memory``, ``cron_providers/`` for
    the cron loader), then flat keys, then other categories.

    0.13 - 0.19 (and ``plugins.memory`` in 0.22): the module's own ``_get_user_plugins_dir``.
    0.22: ``cron_providers``, ``context_engine`` and ``computer_use`` call
    ``plugins.plugin_loader.user_plugins_dir()`` at call time (:func:`_patch_plugin_loader`)."""
    own = module.__name__.rsplit(".", 1)[-1] + "/"
    if hasattr(module, "_get_user_plugins_dir"):
        _require(module, "_get_user_plugins_dir", "_iter_provider_dirs", "find_provider_dir")

        def _get_user_plugins_dir():
            return _flat_view(plan, environ, own)

        _get_user_plugins_dir._hermes_plugins_view = True
        module._get_user_plugins_dir = _get_user_plugins_dir
        return
    loader = getattr(module, "_loader", None)
    if getattr(loader, "__name__", None) == "plugins.plugin_loader":
        if not getattr(getattr(loader, "user_plugins_dir", None), "_hermes_plugins_view", False):
            raise GenerationError(
                "hermes-plugins does not know Hermes %s (%s reads <home>/plugins through a "
                "plugins.plugin_loader it could not patch)" % (_hermes_version(), module.__name__)
            )
        return
    if hasattr(module, "_iter_provider_dirs"):
        _require(module, "_get_user_plugins_dir")
    # Otherwise: no user directory here (0.19's plugins.context_engine), or not Hermes's.


def _patch_plugin_loader(module, plan, environ):
    """Hermes 0.22's ``plugins/plugin_loader.py``: ``user_plugins_dir()`` is ``<home>/plugins``
    for every category loader (``plugins.memory`` binds it at import as
    ``_get_user_plugins_dir``; the others call it through the module). Under a generation it
    is the view of :func:`_patch_flat_providers`, its own category first for the loader that
    calls it."""
    _require(module, "user_plugins_dir", "iter_plugin_dirs")

    def user_plugins_dir():
        try:
            caller = sys._getframe(1).f_globals.get("__name__") or ""
        except Exception:
            caller = ""
        own = caller.rsplit(".", 1)[-1] + "/" if caller.startswith("plugins.") else ""
        return _flat_view(plan, environ, own)

    user_plugins_dir._hermes_plugins_view = True
    module.user_plugins_dir = user_plugins_dir


def _is_model_provider(key, path):
    """What Hermes counts as a model provider: the ``model-providers`` category, else
    ``kind: model-provider`` in the manifest, else (no ``kind``) an ``__init__.py`` naming
    both ``register_provider`` and ``ProviderProfile`` (hermes_cli/plugins.py
    ``_parse_manifest``)."""
    if key.split("/")[0] == "model-providers":
        return True
    kind = None
    for manifest in ("plugin.yaml", "plugin.yml"):
        try:
            with open(os.path.join(path, manifest), "r", encoding="utf-8", errors="replace") as f:
                lines = f.read().splitlines()
        except OSError:
            continue
        for line in lines:
            if line.startswith("kind:"):
                kind = line.split(":", 1)[1].split("#", 1)[0].strip().strip("'\"").lower()
        break
    if kind is not None:
        return kind == "model-provider"
    try:
        with open(os.path.join(path, "__init__.py"), "r", encoding="utf-8", errors="replace") as f:
            head = f.read(8192)
    except OSError:
        return False
    return "register_provider" in head and "ProviderProfile" in head


def _patch_model_providers(module, plan, environ):
    """``providers`` imports every directory of ``<home>/plugins/model-providers/`` (no
    ``plugins.enabled``), each calling ``register_provider(...)`` on import. Under a
    generation it imports the model providers enabled for the profile (category
    ``model-providers/<dir>`` or flat with ``kind: model-provider``), then the profile's
    ``external`` ones left in ``<home>/plugins/model-providers/``."""
    if not hasattr(module, "_discover_providers"):
        return  # some other top-level ``providers`` package, not Hermes's
    _require(module, "_user_plugins_dir", "_import_plugin_dir", "register_provider")
    from pathlib import Path

    from hermes_constants import get_hermes_home

    def _user_plugins_dir():
        home_plugins = _home_plugins(get_hermes_home, plan, environ)
        entries = [(_leaf(k), p) for k, p in _managed_dirs(plan, environ) if _is_model_provider(k, p)]
        entries += [
            (_leaf(k), Path(home_plugins, *k.split("/")))
            for k in plan.external
            if k.split("/")[0] == "model-providers" and k.count("/") == 1
        ]
        return _DirView(os.path.join(plan.plugins_dir, "model-providers"), entries)

    module._user_plugins_dir = _user_plugins_dir
    if hasattr(module, "_installed_plugins_dir"):
        # Hermes 0.22 (providers/__init__.py ``_scan_home_layer``) also imports every flat
        # ``<home>/plugins/<dir>`` declaring ``kind: model-provider``: the generation's are in
        # the view above already, so only the profile's flat external ones are left there.
        def _installed_plugins_dir():
            home_plugins = _home_plugins(get_hermes_home, plan, environ)
            entries = [(k, Path(home_plugins, k)) for k in plan.external if "/" not in k]
            view = _DirView(home_plugins, entries)
            return view if view._entries else None

        module._installed_plugins_dir = _installed_plugins_dir


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


# --- hermes plugins …: Hermes's own plugin commands, served by hermes-plugins -----------------

#: ``hermes plugins ACTION`` (Hermes 0.13 – 0.19 names and aliases) -> this tool's command.
#: ``validate`` is not a Hermes subcommand; it is taken before Hermes parses the line.
#: ``list``/``ls`` and the bare ``hermes plugins`` (the toggle screen) stay Hermes's own.
_ROUTED = {
    "install": "install",
    "update": "update",
    "remove": "remove",
    "rm": "remove",
    "uninstall": "remove",
    "enable": "enable",
    "disable": "disable",
    "validate": "validate",
}

#: Hermes's flags whose meaning this tool spells differently. Hermes's ``install --force``
#: removes the installed plugin and installs again (this tool's ``--replace``; its own
#: ``--force`` overrides validation errors, which Hermes has no flag for).
_TRANSLATED = {"install": {"--force": "--replace", "-f": "--replace"}}


#: This tool's options that take a value as the next argument (for finding the plugin named
#: on a routed line; ``--opt=value`` needs no entry).
_VALUED = frozenset((
    "--ref", "--grant", "--revoke", "--catalog", "--plan", "--core", "--extra", "--python",
    "--index-url", "--extra-index-url", "--find-links", "--quarantine-days", "--format",
    "--lock-timeout", "--color", "--home", "--profile", "--probe-hermes", "--probe-timeout",
    "--accept-finding",
))


def _operands(arguments):
    """The positional arguments of a routed line (option values skipped)."""
    found = []
    skip = False
    for argument in arguments:
        if skip:
            skip = False
        elif argument.startswith("-"):
            skip = argument in _VALUED
        else:
            found.append(argument)
    return found


def _tool(hook):
    """The hermes-plugins binary: the one ``exec`` runs under (``HERMES_PLUGINS_BIN``), else
    the one that activated this Hermes, else ``hermes-plugins`` on PATH."""
    import shutil

    for candidate in (os.environ.get("HERMES_PLUGINS_BIN"), hook.binary):
        if candidate:
            if os.access(candidate, os.X_OK):
                return candidate
            _fail(
                "`hermes plugins` is served by hermes-plugins, which is no longer at %s: "
                "reinstall it and run `hermes-plugins activate` again (or remove %s to give "
                "the commands back to Hermes)" % (candidate, os.path.abspath(__file__))
            )
    found = shutil.which("hermes-plugins")
    if found is None:
        _fail("`hermes plugins` is served by hermes-plugins, which is not on PATH")
    return found


def _fail(message):
    sys.stderr.write("error: %s\n" % message)
    sys.stderr.flush()
    raise SystemExit(2)


def _published(environ):
    """The plan of the process's home and profile in its current generation, or None when
    nothing is published (read without a lease: only to decide who serves a command)."""
    root, profile, _ = home_of(environ)
    directory = current(root)
    if directory is None or not os.path.isfile(os.path.join(directory, "generation.json")):
        return None
    try:
        return read_plan(directory, profile)
    except GenerationError:
        return None


def _serves(action, name, environ):
    """Whether hermes-plugins serves ``hermes plugins ACTION NAME``. ``install`` and
    ``validate``: always. ``update``/``remove``: unless NAME is a directory of
    ``<home>/plugins`` (Hermes's own install directory; hermes-plugins keeps its plugins in its
    store). ``enable``/``disable``: unless NAME is one of Hermes's bundled or entry-point
    plugins, or a directory of ``<home>/plugins`` while the home has nothing published (once
    it has, such a plugin becomes an external plugin of the generation, with its requirements
    there)."""
    if action in ("install", "validate"):
        return True
    if name is None:
        return False
    _, _, agent_home = home_of(environ)
    in_home = os.path.isdir(os.path.join(agent_home, "plugins", *name.split("/")))
    if action in ("update", "remove"):
        return not in_home
    if _hermes_ships(name):
        return False
    return not in_home or _published(environ) is not None


def _hermes_ships(name):
    """Whether NAME (a key like ``observability/langfuse`` or a bare directory name) is a
    plugin bundled with this Hermes or advertised by an installed package's entry point."""
    try:
        from hermes_cli.plugins import get_bundled_plugins_dir

        bundled = str(get_bundled_plugins_dir())
    except Exception:
        bundled = None
    if bundled:
        if os.path.isdir(os.path.join(bundled, *name.split("/"))):
            return True
        if "/" not in name:
            try:
                categories = [e.path for e in os.scandir(bundled) if e.is_dir()]
            except OSError:
                categories = []
            if any(os.path.isdir(os.path.join(c, name)) for c in categories):
                return True
    try:
        from importlib.metadata import entry_points

        return any(e.name == name for e in entry_points(group="hermes_agent.plugins"))
    except Exception:
        return False


def _run_tool(hook, arguments):
    """Replaces the process with ``hermes-plugins --home ROOT --profile NAME ARGUMENTS…``
    (its output, prompts and exit status are the command's; the lease, if any, is released
    with the process image)."""
    binary = _tool(hook)
    root, profile, _ = home_of(os.environ, for_writing=True)
    command = [binary, "--home", root, "--profile", profile] + list(arguments)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            pass
    try:
        os.execv(binary, command)
    except OSError as error:
        _fail("cannot run %s: %s" % (binary, error))


def _routed(argv, hook):
    """``hermes plugins ACTION ARGS…`` (``argv`` without the program) as this tool's
    arguments, or None when Hermes serves it. Hermes's flags are translated
    (:data:`_TRANSLATED`); every other argument is passed on, so this tool's own flags work
    too (``--yes-deps``, ``--grant CAP``, ``--json``, ``--ref``)."""
    if len(argv) < 2 or argv[0] != "plugins" or argv[1] not in _ROUTED:
        return None
    action = _ROUTED[argv[1]]
    rest = argv[2:]
    positional = _operands(rest)
    if not _serves(action, positional[0] if positional else None, os.environ):
        return None
    translated = _TRANSLATED.get(action, {})
    arguments = [action] + [translated.get(a, a) for a in rest]
    if (action == "install" and positional
            and not {"--enable", "--no-enable", "--json", "-h", "--help"} & set(rest)
            and sys.stdin.isatty() and sys.stdout.isatty()):
        # Hermes asks this after installing; asked first here, so one command does both.
        try:
            answer = input("  Enable '%s' after installing? [y/N]: " % positional[0])
        except (EOFError, KeyboardInterrupt):
            answer = ""
        if answer.strip().lower() in ("y", "yes"):
            arguments.append("--enable")
    return arguments


def _patch_main(module, hook):
    """Wraps ``hermes_cli.main.main`` (the ``hermes`` console script's entry point): a
    ``hermes plugins`` command this tool serves runs it instead, before Hermes parses the
    line (so this tool's flags and ``validate`` get through). ``--profile``/``-p`` were already
    applied by Hermes at import (``HERMES_HOME``)."""
    _require(module, "main")
    main = module.main

    def routed_main(*args, **kwargs):
        if not args and not kwargs:
            arguments = _routed(sys.argv[1:], hook)
            if arguments is not None:
                _run_tool(hook, arguments)
        return main(*args, **kwargs)

    routed_main.__wrapped__ = main
    routed_main.__doc__ = main.__doc__
    module.main = routed_main


def _namespace_arguments(args):
    """A parsed ``hermes plugins`` namespace as ``hermes plugins …`` words, for the line
    :func:`_patch_main` did not see (global flags before ``plugins``, or ``main()`` called by
    another entry point)."""
    action = getattr(args, "plugins_action", None)
    words = ["plugins", action]
    target = (getattr(args, "identifier", None) or getattr(args, "name", None)
              or getattr(args, "path", None))  # 0.22: ``hermes plugins validate PATH``
    if target:
        words.append(target)
    if isinstance(getattr(args, "ref", None), str):  # 0.22: ``install --ref SHA``
        words += ["--ref", args.ref]
    for attribute, flag in (
        ("force", "--force"),
        ("enable", "--enable"),
        ("no_enable", "--no-enable"),
        ("allow_tool_override", "--allow-tool-override"),
        ("no_allow_tool_override", "--no-allow-tool-override"),
        ("yes_deps", "--yes-deps"),  # 0.22 install
        ("no_deps", "--no-deps"),
        ("allow_removed", "--allow-removed"),
    ):
        if getattr(args, attribute, False) is True:
            words.append(flag)
    return words


def _patch_plugins_cmd(module, hook):
    """``hermes_cli.plugins_cmd``: ``plugins_command`` routes the actions this tool serves
    (the same decision as :func:`_patch_main`); ``hermes plugins list`` stays Hermes's, but
    lists the generation's plugins (source ``hermes-plugins``) in place of ``<home>/plugins``
    (whose plugins the generation does not run, except its external ones); after the bare
    ``hermes plugins`` toggle screen, ``hermes-plugins sync`` publishes what was toggled."""
    _require(module, "plugins_command")
    command = module.plugins_command

    def plugins_command(args):
        action = getattr(args, "plugins_action", None)
        if action in _ROUTED:
            arguments = _routed(_namespace_arguments(args), hook)
            if arguments is not None:
                _run_tool(hook, arguments)
        result = command(args)
        edits_selection = action is None or (
            action == "pack" and getattr(args, "pack_action", None) == "install")
        if edits_selection and _published(os.environ) is not None:
            _run_tool(hook, ["sync"])
        return result

    module.plugins_command = plugins_command
    if hasattr(module, "_discover_all_plugins") and hasattr(module, "_plugins_dir"):
        _patch_plugin_list(module, hook)


def _installed(hook):
    """``(key, version)`` of every plugin hermes-plugins has installed for this home (the
    generation holds only enabled ones): from ``hermes-plugins list --json``; empty when it
    cannot be asked."""
    import subprocess

    try:
        binary = _tool(hook)
    except SystemExit:
        return []
    root, profile, _ = home_of(os.environ)
    try:
        done = subprocess.run(
            [binary, "--home", root, "--profile", profile, "--json", "list"],
            stdin=subprocess.DEVNULL, capture_output=True, timeout=60,
        )
        doc = json.loads(done.stdout.decode("utf-8"))
        return [(p["key"], p.get("version") or "") for p in doc.get("plugins") or []]
    except Exception:
        return []


def _patch_plugin_list(module, hook):
    discover = module._discover_all_plugins
    plugins_dir = module._plugins_dir

    def _discover_all_plugins():
        plan = _published(os.environ)
        if plan is None:
            return discover()
        from pathlib import Path

        generation = Path(plan.plugins_dir)
        module._plugins_dir = lambda: generation
        try:
            entries = discover()
        finally:
            module._plugins_dir = plugins_dir
        listed = []
        for entry in entries:
            entry = list(entry)
            if str(entry[4]).startswith(str(generation) + os.sep):
                entry[3] = "hermes-plugins"
            listed.append(tuple(entry))
        if plan.external:
            keep = set(plan.external)
            names = {e[0] for e in listed}
            listed.extend(
                e for e in discover()
                if e[3] in ("user", "git") and e[0] not in names
                and (e[0] in keep or (len(e) > 5 and e[5] in keep))
            )
        # Installed but enabled nowhere: not in the generation, still listed (Hermes gives
        # them their status from config.yaml, as it does for its own).
        shape = len(listed[0]) if listed else 6
        known = {e[0] for e in listed} | {e[5] for e in listed if len(e) > 5}
        for key, version in _installed(hook):
            if key not in known:
                entry = (key, version, "", "hermes-plugins", Path(os.devnull), key)
                listed.append(entry[:shape])
        return listed

    module._discover_all_plugins = _discover_all_plugins
