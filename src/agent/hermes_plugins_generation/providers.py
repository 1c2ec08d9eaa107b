"""The loaders that read ``<home>/plugins`` on their own, without ``plugins.enabled``:
memory, cron, context-engine and computer-use providers (:func:`patch_flat_providers`,
:func:`patch_plugin_loader`) and model providers (:func:`patch_model_providers`). Under a
generation each sees a view (:class:`DirView`) of the plugins enabled for the profile, then the
profile's external ones; Hermes itself still decides which of them are providers and which is
active."""

import os
import sys
from pathlib import Path

from . import hermes
from .reader import GenerationError


class DirView:
    """Stands in for the one ``<home>/plugins[/model-providers]`` directory that a Hermes
    provider loader scans: ``iterdir()`` yields the chosen plugin directories (real paths,
    named by the last segment of their key, which is the provider name Hermes uses) and
    ``view / name`` finds one of them. A name not in the view maps to a path that cannot
    exist, so nothing outside the selection is ever found."""

    def __init__(self, label, entries, keyed=()):
        self._label = label
        self.entries = {}
        for name, path in entries:
            if name not in self.entries and os.path.isdir(path):
                self.entries[name] = path
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
        return iter(list(self.entries.values()))

    def __truediv__(self, name):
        name = str(name).strip("/")
        found = self.entries.get(name) or self._keyed.get(name)
        return found if found is not None else Path(os.devnull, "not-in-generation", name)

    def __fspath__(self):
        return self._label

    def __str__(self):
        return self._label

    def __repr__(self):
        return "<hermes-plugins view %s: %s>" % (self._label, ", ".join(sorted(self.entries)))


def leaf(key):
    """The last segment of a key: the name Hermes gives a provider's directory."""
    return key.rsplit("/", 1)[-1]


def _home_plugins(plan, environ):
    from hermes_constants import get_hermes_home

    home = get_hermes_home()
    hermes.check_home(home, plan, environ)
    return os.path.join(str(home), "plugins")


def managed_dirs(plan, environ):
    """``(key, path)`` of the plugins the generation runs for this profile."""
    env_file = environ.get("HERMES_PLUGINS_ENV_FILE") or ""
    return [(k, Path(plan.plugins_dir, *k.split("/"))) for k in plan.allowed(os.environ, env_file)]


def flat_view(plan, environ, own):
    """The generation's plugins as if flat in ``<home>/plugins`` (see
    :func:`patch_flat_providers`); ``own`` (``"memory/"``) is the calling loader's category."""

    def preference(item):
        key = item[0]
        return 0 if own and key.startswith(own) else 1 if "/" not in key else 2

    home_plugins = _home_plugins(plan, environ)
    managed = sorted(managed_dirs(plan, environ), key=preference)
    entries = [(leaf(k), p) for k, p in managed]
    entries += [(n, Path(home_plugins, n)) for n in plan.external if "/" not in n]
    keyed = list(managed) + [
        (n, Path(home_plugins, *n.split("/"))) for n in plan.external if "/" in n
    ]
    return DirView(plan.plugins_dir, entries, keyed)


def patch_flat_providers(module, plan, environ):
    """The category loaders -- ``plugins.memory``, ``plugins.cron_providers`` (0.19+),
    ``plugins.context_engine`` and ``plugins.computer_use`` (0.22) -- look for user providers
    only in flat ``<home>/plugins/<name>/`` directories, the provider's name being the
    directory's name (``memory.provider: <name>``; a configured ``memory/notes`` is joined to
    ``<home>/plugins`` as it is), and do not read ``plugins.enabled``. Under a generation they
    see, as if flat: every plugin enabled for the profile, whatever its category
    (``memory/engram`` is seen as ``engram``, and found as ``memory/engram`` too), then the
    profile's ``external`` plugins from ``<home>/plugins``.

    Several enabled plugins can end in the same name (``engram`` a tools plugin,
    ``context_engine/engram``, ``memory/engram``): the view keeps the first, so the loader's
    own category comes first (``memory/`` for ``plugins.memory``, ``cron_providers/`` for
    the cron loader), then flat keys, then other categories.

    0.13 - 0.19 (and ``plugins.memory`` in 0.22): the module's own ``_get_user_plugins_dir``.
    0.22: ``cron_providers``, ``context_engine`` and ``computer_use`` call
    ``plugins.plugin_loader.user_plugins_dir()`` at call time (:func:`patch_plugin_loader`)."""
    own = module.__name__.rsplit(".", 1)[-1] + "/"
    if hasattr(module, "_get_user_plugins_dir"):
        hermes.require(module, "_get_user_plugins_dir", "_iter_provider_dirs", "find_provider_dir")

        def _get_user_plugins_dir():
            return flat_view(plan, environ, own)

        _get_user_plugins_dir._hermes_plugins_view = True
        module._get_user_plugins_dir = _get_user_plugins_dir
        return
    loader = getattr(module, "_loader", None)
    if getattr(loader, "__name__", None) == "plugins.plugin_loader":
        if not getattr(getattr(loader, "user_plugins_dir", None), "_hermes_plugins_view", False):
            raise GenerationError(
                "hermes-plugins does not know Hermes %s (%s reads <home>/plugins through a "
                "plugins.plugin_loader it could not patch)" % (hermes.version(), module.__name__)
            )
        return
    if hasattr(module, "_iter_provider_dirs"):
        hermes.require(module, "_get_user_plugins_dir")
    # Otherwise: no user directory here (0.19's plugins.context_engine), or not Hermes's.


def patch_plugin_loader(module, plan, environ):
    """Hermes 0.22's ``plugins/plugin_loader.py``: ``user_plugins_dir()`` is ``<home>/plugins``
    for every category loader (``plugins.memory`` binds it at import as
    ``_get_user_plugins_dir``; the others call it through the module). Under a generation it
    is the view of :func:`patch_flat_providers`, its own category first for the loader that
    calls it."""
    hermes.require(module, "user_plugins_dir", "iter_plugin_dirs")

    def user_plugins_dir():
        try:
            caller = sys._getframe(1).f_globals.get("__name__") or ""
        except Exception:
            caller = ""
        own = caller.rsplit(".", 1)[-1] + "/" if caller.startswith("plugins.") else ""
        return flat_view(plan, environ, own)

    user_plugins_dir._hermes_plugins_view = True
    module.user_plugins_dir = user_plugins_dir


def is_model_provider(key, path):
    """What Hermes counts as a model provider: the ``model-providers`` category, else
    ``kind: model-provider`` in the manifest, else (no ``kind``) an ``__init__.py`` naming
    both ``register_provider`` and ``ProviderProfile`` (hermes_cli/plugins.py
    ``_parse_manifest``)."""
    if key.split("/")[0] == "model-providers":
        return True
    kind = None
    for manifest in ("plugin.yaml", "plugin.yml"):
        try:
            with open(os.path.join(path, manifest), encoding="utf-8", errors="replace") as f:
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
        with open(os.path.join(path, "__init__.py"), encoding="utf-8", errors="replace") as f:
            head = f.read(8192)
    except OSError:
        return False
    return "register_provider" in head and "ProviderProfile" in head


def patch_model_providers(module, plan, environ):
    """``providers`` imports every directory of ``<home>/plugins/model-providers/`` (no
    ``plugins.enabled``), each calling ``register_provider(...)`` on import. Under a
    generation it imports the model providers enabled for the profile (category
    ``model-providers/<dir>`` or flat with ``kind: model-provider``), then the profile's
    ``external`` ones left in ``<home>/plugins/model-providers/``."""
    if not hasattr(module, "_discover_providers"):
        return  # some other top-level ``providers`` package, not Hermes's
    hermes.require(module, "_user_plugins_dir", "_import_plugin_dir", "register_provider")

    def _user_plugins_dir():
        home_plugins = _home_plugins(plan, environ)
        entries = [(leaf(k), p) for k, p in managed_dirs(plan, environ) if is_model_provider(k, p)]
        entries += [
            (leaf(k), Path(home_plugins, *k.split("/")))
            for k in plan.external
            if k.split("/")[0] == "model-providers" and k.count("/") == 1
        ]
        return DirView(os.path.join(plan.plugins_dir, "model-providers"), entries)

    module._user_plugins_dir = _user_plugins_dir
    if hasattr(module, "_installed_plugins_dir"):
        # Hermes 0.22 (providers/__init__.py ``_scan_home_layer``) also imports every flat
        # ``<home>/plugins/<dir>`` declaring ``kind: model-provider``: the generation's are in
        # the view above already, so only the profile's flat external ones are left there.
        def _installed_plugins_dir():
            home_plugins = _home_plugins(plan, environ)
            entries = [(k, Path(home_plugins, k)) for k in plan.external if "/" not in k]
            view = DirView(home_plugins, entries)
            return view if view.entries else None

        module._installed_plugins_dir = _installed_plugins_dir
