"""``hermes plugins …``: Hermes's own plugin commands, served by hermes-plugins.

``install``/``update``/``remove``/``enable``/``disable``/``validate`` run the binary with the
equivalent arguments (:func:`routed`), taken before Hermes parses the line
(:func:`patch_main`) or, when Hermes parsed it already, from its namespace
(:func:`patch_plugins_cmd`). ``hermes plugins list`` and the bare ``hermes plugins`` stay
Hermes's own, reading the generation (``listing.py``).
"""

import os
import shutil
import sys

from . import hermes, listing
from .reader import home_of, published

#: ``hermes plugins ACTION`` (Hermes 0.13 – 0.22 names and aliases) -> this tool's command.
#: ``validate`` is not a Hermes subcommand before 0.22; it is taken before Hermes parses the
#: line. ``list``/``ls`` and the bare ``hermes plugins`` (the toggle screen) stay Hermes's own.
ROUTED = {
    "install": "install",
    "update": "update",
    "remove": "remove",
    "rm": "remove",
    "uninstall": "remove",
    "enable": "enable",
    "disable": "disable",
    "validate": "validate",
}

#: ``hermes plugins pack ACTION`` (Hermes 0.22's plugin packs; served on every release).
PACK_ACTIONS = frozenset(("install", "show", "export"))

#: Hermes's flags whose meaning this tool spells differently. Hermes's ``install --force``
#: removes the installed plugin and installs again (this tool's ``--replace``; its own
#: ``--force`` overrides validation errors, which Hermes has no flag for).
TRANSLATED = {"install": {"--force": "--replace", "-f": "--replace"}}

#: This tool's options that take a value as the next argument (for finding the plugin named
#: on a routed line; ``--opt=value`` needs no entry). A Rust test holds it to the CLI.
VALUED = frozenset((
    "--ref", "--grant", "--revoke", "--catalog", "--plan", "--core", "--extra", "--python",
    "--index-url", "--extra-index-url", "--find-links", "--quarantine-days", "--format",
    "--lock-timeout", "--color", "--home", "--profile", "--probe-hermes", "--probe-timeout",
    "--accept-finding",
))  # fmt: skip


def operands(arguments):
    """The positional arguments of a routed line (option values skipped)."""
    found = []
    skip = False
    for argument in arguments:
        if skip:
            skip = False
        elif argument.startswith("-"):
            skip = argument in VALUED
        else:
            found.append(argument)
    return found


def tool(binary):
    """The hermes-plugins binary: the one ``exec`` runs under (``HERMES_PLUGINS_BIN``), else
    ``binary`` (the one that activated this Hermes), else ``hermes-plugins`` on PATH."""
    for candidate in (os.environ.get("HERMES_PLUGINS_BIN"), binary):
        if candidate:
            if os.access(candidate, os.X_OK):
                return candidate
            fail(
                "`hermes plugins` is served by hermes-plugins, which is no longer at %s: "
                "reinstall it and run `hermes-plugins activate` again (or remove %s to give "
                "the commands back to Hermes)" % (candidate, _pth())
            )
    found = shutil.which("hermes-plugins")
    if found is None:
        fail("`hermes plugins` is served by hermes-plugins, which is not on PATH")
    return found


def _pth():
    """The ``.pth`` file that activated this package (beside it in site-packages)."""
    site = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return os.path.join(site, "hermes_plugins_activate.pth")


def fail(message):
    """Stops the command with ``message``, as a command line tool does (exit status 2)."""
    sys.stderr.write("error: %s\n" % message)
    sys.stderr.flush()
    raise SystemExit(2)


def serves(action, name, environ):
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
    if hermes_ships(name):
        return False
    return not in_home or published(environ) is not None


def hermes_ships(name):
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

        found = entry_points()
        group = (
            found.select(group="hermes_agent.plugins")
            if hasattr(found, "select")
            else found.get("hermes_agent.plugins", ())  # Python 3.8 - 3.9
        )
        return any(e.name == name for e in group)
    except Exception:
        return False


def run_tool(binary, arguments):
    """Replaces the process with ``hermes-plugins --home ROOT --profile NAME ARGUMENTS…``
    (its output, prompts and exit status are the command's; the lease, if any, is released
    with the process image)."""
    binary = tool(binary)
    root, profile, _ = home_of(os.environ, for_writing=True)
    command = [binary, "--home", root, "--profile", profile, *arguments]
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            pass
    try:
        os.execv(binary, command)
    except OSError as error:
        fail("cannot run %s: %s" % (binary, error))


def routed(argv, environ=os.environ, ask=None):
    """``hermes plugins ACTION ARGS…`` (``argv`` without the program) as this tool's
    arguments, or None when Hermes serves it. Hermes's flags are translated
    (:data:`TRANSLATED`); every other argument is passed on, so this tool's own flags work
    too (``--yes-deps``, ``--grant CAP``, ``--json``, ``--ref``). ``ask`` (a terminal's
    ``input``; None off a terminal) is asked whether to enable what ``install`` installs."""
    if len(argv) >= 3 and argv[0] == "plugins" and argv[1] == "pack":
        return _routed_pack(argv[2], argv[3:])
    if len(argv) < 2 or argv[0] != "plugins" or argv[1] not in ROUTED:
        return None
    action = ROUTED[argv[1]]
    rest = argv[2:]
    positional = operands(rest)
    if not serves(action, positional[0] if positional else None, environ):
        return None
    translated = TRANSLATED.get(action, {})
    arguments = [action] + [translated.get(a, a) for a in rest]
    answered = {"--enable", "--no-enable", "--json", "-h", "--help"} & set(rest)
    if action == "install" and positional and not answered and ask is not None:
        # Hermes asks this after installing; asked first here, so one command does both.
        try:
            answer = ask("  Enable '%s' after installing? [y/N]: " % positional[0])
        except (EOFError, KeyboardInterrupt):
            answer = ""
        if answer.strip().lower() in ("y", "yes"):
            arguments.append("--enable")
    return arguments


def _routed_pack(action, rest):
    """``hermes plugins pack ACTION ARGS…`` as ``pack ACTION ARGS…``: a pack installs as one
    generation. Hermes's ``pack install --force`` reinstalls plugins already there, which a
    pack here does not do: refused rather than read as this tool's ``--force``."""
    if action not in PACK_ACTIONS:
        return None
    if action == "install" and ("--force" in rest or "-f" in rest):
        fail(
            "`hermes plugins pack install --force` reinstalls plugins; hermes-plugins installs a "
            "pack as one generation and never replaces an installed plugin: remove it first "
            "(`hermes plugins remove NAME`)"
        )
    return ["pack", action, *rest]


def _terminal_input():
    return input if sys.stdin.isatty() and sys.stdout.isatty() else None


def patch_main(module, binary):
    """Wraps ``hermes_cli.main.main`` (the ``hermes`` console script's entry point): a
    ``hermes plugins`` command this tool serves runs it instead, before Hermes parses the
    line (so this tool's flags and ``validate`` get through). ``--profile``/``-p`` were already
    applied by Hermes at import (``HERMES_HOME``)."""
    hermes.require(module, "main")
    main = module.main

    def routed_main(*args, **kwargs):
        if not args and not kwargs:
            arguments = routed(sys.argv[1:], os.environ, _terminal_input())
            if arguments is not None:
                run_tool(binary, arguments)
        return main(*args, **kwargs)

    routed_main.__wrapped__ = main
    routed_main.__doc__ = main.__doc__
    module.main = routed_main


def namespace_arguments(args):
    """A parsed ``hermes plugins`` namespace as ``hermes plugins …`` words, for the line
    :func:`patch_main` did not see (global flags before ``plugins``, or ``main()`` called by
    another entry point)."""
    action = getattr(args, "plugins_action", None)
    if action == "pack":
        words = ["plugins", "pack", getattr(args, "pack_action", None)]
        if getattr(args, "source", None):
            words.append(args.source)
        if getattr(args, "name", None):
            words += ["--name", args.name]
        for attribute, flag in (("enabled_only", "--enabled-only"), ("force", "--force")):
            if getattr(args, attribute, False) is True:
                words.append(flag)
        return words
    words = ["plugins", action]
    target = (
        getattr(args, "identifier", None)
        or getattr(args, "name", None)
        or getattr(args, "path", None)  # 0.22: ``hermes plugins validate PATH``
    )
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


def patch_plugins_cmd(module, binary):
    """``hermes_cli.plugins_cmd``: ``plugins_command`` routes the actions this tool serves
    (the same decision as :func:`patch_main`); ``hermes plugins list`` stays Hermes's, but
    lists the generation's plugins (``listing.py``); after the bare ``hermes plugins`` toggle
    screen ``hermes-plugins sync`` publishes what was toggled. ``hermes plugins pack …``
    (0.22) is this tool's ``pack``."""
    hermes.require(module, "plugins_command")
    command = module.plugins_command

    def plugins_command(args):
        action = getattr(args, "plugins_action", None)
        if action in ROUTED or action == "pack":
            arguments = routed(namespace_arguments(args), os.environ, _terminal_input())
            if arguments is not None:
                run_tool(binary, arguments)
        result = command(args)
        if action is None and published(os.environ) is not None:
            run_tool(binary, ["sync"])
        return result

    module.plugins_command = plugins_command
    if hasattr(module, "_discover_all_plugins") and hasattr(module, "_plugins_dir"):
        listing.patch_plugin_list(module, lambda: tool(binary))
