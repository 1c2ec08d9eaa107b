"""How an unmodified Hermes comes to load a generation: a meta-path finder that patches
Hermes's plugin modules right after they execute.

``hermes-plugins exec`` prepares the process (``HERMES_PLUGINS_GENERATION`` and the rest in
its environment) and its ``sitecustomize`` calls :func:`install`. ``hermes-plugins activate``
writes this package into a Hermes installation's site-packages with a ``.pth`` line calling
:func:`activate`, which decides at the first hooked import which home the process uses and
whether it has a published generation; with none, Hermes is left exactly as it is. Nothing is
read, and no patch module imported, until Hermes imports one of the hooked modules.
"""

import os
import sys

from .reader import FORMAT, Plan, acquire, home_of, read_plan

#: Modules patched right after they execute, and the patch: ``(module, function)`` in this
#: package, called with the executed module and the :class:`Hook`. ``providers`` must be
#: hooked on its own: Hermes imports every model-provider plugin while ``hermes_cli.config``
#: is being imported (``_inject_profile_env_vars`` calls ``providers.list_providers()`` at
#: import time), i.e. before ``hermes_cli.plugins`` has finished executing.
#: ``hermes_cli.main`` and ``hermes_cli.plugins_cmd`` are hooked for the ``hermes plugins``
#: commands, whether or not a generation is published.
HOOKED = {
    "hermes_cli.main": ("routing", "patch_main"),
    "hermes_cli.plugins_cmd": ("routing", "patch_plugins_cmd"),
    "hermes_cli.plugins": ("loader", "patch"),
    "agent.plugin_llm": ("capabilities", "patch_llm"),
    "providers": ("providers", "patch_model_providers"),
    "plugins.plugin_loader": ("providers", "patch_plugin_loader"),
    "plugins.memory": ("providers", "patch_flat_providers"),
    "plugins.cron_providers": ("providers", "patch_flat_providers"),
    "plugins.context_engine": ("providers", "patch_flat_providers"),
    "plugins.computer_use": ("providers", "patch_flat_providers"),
}

#: The patches of the ``hermes plugins`` commands: given the binary, not the plan.
_ROUTING = ("hermes_cli.main", "hermes_cli.plugins_cmd")


def install(environ=os.environ):
    """Called by ``exec``'s ``sitecustomize``: when ``hermes-plugins exec`` prepared the
    process (``HERMES_PLUGINS_GENERATION`` set), patch Hermes's plugin discovery as it is
    imported. Does nothing otherwise; reads nothing until Hermes is imported."""
    if "HERMES_PLUGINS_GENERATION" not in environ:
        return
    sys.meta_path.insert(0, Hook(environ, binary=environ.get("HERMES_PLUGINS_BIN")))


#: The lease an activated process holds on its generation (open for the process's life).
_ACTIVATED_LEASE = None


def activate(environ=os.environ, binary=None):
    """Called by the ``.pth`` line ``hermes-plugins activate`` writes (``binary``: the
    hermes-plugins that wrote it): unless ``exec`` prepared the process already, hook Hermes's
    plugin loaders as :func:`install` does, but decide lazily — at the first hooked import, so
    a process that never loads Hermes's plugins (pip, a script) reads nothing — which home it
    is (:func:`~.reader.home_of`) and whether that home has a published generation; with none,
    Hermes's discovery is left exactly as it is (its plugin commands are still served by
    hermes-plugins: the user activated it to manage that home)."""
    if "HERMES_PLUGINS_GENERATION" in environ:
        return
    sys.meta_path.insert(0, Hook(environ, lazy=True, binary=binary))


def lease_for(environ):
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
        "HERMES_PLUGINS_ENV_FILE": os.path.join(agent_home, ".env"),
    })  # fmt: skip
    return prepared


class Hook:
    """A meta-path finder that patches the :data:`HOOKED` modules after they execute."""

    def __init__(self, environ, lazy=False, binary=None):
        self.environ = environ
        self.plan = None
        #: Activated (not under ``exec``): the generation is found at the first hooked import.
        self.lazy = lazy
        #: The hermes-plugins binary that serves ``hermes plugins …`` (``routing.tool``).
        self.binary = binary
        #: The environment the process started with (``environ`` becomes the prepared one).
        self.started = environ

    def find_spec(self, name, path=None, target=None):
        if name not in HOOKED:
            return None
        from importlib.machinery import PathFinder

        spec = PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return spec
        spec.loader = PatchingLoader(spec.loader, self)
        return spec

    def get_plan(self):
        """The plan of the process, read once; None when an activated process's home has
        nothing published (Hermes is then left alone)."""
        if self.lazy:
            self.lazy = False
            prepared = lease_for(self.environ)
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

    def patch(self, module):
        """Applies the patch :data:`HOOKED` names for ``module``, once it has executed."""
        from importlib import import_module

        where, function = HOOKED[module.__name__]
        patch = getattr(import_module("." + where, __package__), function)
        if module.__name__ in _ROUTING:
            patch(module, self.binary)
            return
        plan = self.get_plan()
        if plan is None:
            return
        patch(module, plan, self.environ)


class PatchingLoader:
    """Wraps the loader Python found for a hooked module: executes it, then patches it."""

    def __init__(self, loader, hook):
        self._loader = loader
        self._hook = hook

    def __getattr__(self, name):
        return getattr(self._loader, name)

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        self._loader.exec_module(module)
        self._hook.patch(module)
