"""``hermes plugins …`` as hermes-plugins arguments: which lines are routed, and how."""

import argparse
import os

import pytest

from hermes_plugins_generation import routing


def test_operands_skip_the_values_of_options():
    assert routing.operands(["--ref", "v1", "sky", "--json", "--grant=x"]) == ["sky"]
    assert routing.operands(["--grant", "tools.override", "--enable", "sky"]) == ["sky"]


@pytest.fixture
def environ(tmp_path):
    return {"HERMES_HOME": str(tmp_path / "home")}


def test_install_and_validate_are_always_served(environ):
    assert routing.routed(["plugins", "install", "owner/repo", "--force"], environ) == [
        "install",
        "owner/repo",
        "--replace",
    ]
    assert routing.routed(["plugins", "validate", "."], environ) == ["validate", "."]
    assert routing.routed(["plugins", "list"], environ) is None
    assert routing.routed(["plugins"], environ) is None
    assert routing.routed(["chat", "install"], environ) is None
    assert routing.routed(["plugins", "rm", "sky"], environ) == ["remove", "sky"]


def test_a_terminal_is_asked_whether_to_enable_what_it_installs(environ):
    asked = []

    def ask(question):
        asked.append(question)
        return "y"

    line = ["plugins", "install", "owner/repo"]
    assert routing.routed(line, environ, ask) == ["install", "owner/repo", "--enable"]
    assert asked == ["  Enable 'owner/repo' after installing? [y/N]: "]
    assert routing.routed([*line, "--no-enable"], environ, ask) == [
        "install",
        "owner/repo",
        "--no-enable",
    ]
    assert len(asked) == 1, "a line that answers is not asked"

    def interrupted(question):
        raise EOFError

    assert routing.routed(line, environ, interrupted) == ["install", "owner/repo"]


def test_hermes_keeps_what_it_installed_itself(environ):
    own = os.path.join(environ["HERMES_HOME"], "plugins", "mine")
    os.makedirs(own)
    assert routing.routed(["plugins", "update", "mine"], environ) is None
    assert routing.routed(["plugins", "remove", "mine"], environ) is None
    assert routing.routed(["plugins", "update", "theirs"], environ) == ["update", "theirs"]
    # enable/disable: Hermes's own while nothing is published
    assert routing.routed(["plugins", "enable", "mine"], environ) is None
    assert routing.routed(["plugins", "enable", "theirs"], environ) == ["enable", "theirs"]


def test_a_plugin_hermes_ships_stays_hermes_s(environ, stub_modules, tmp_path):
    bundled = tmp_path / "bundled"
    (bundled / "image_gen" / "fal").mkdir(parents=True)
    stub_modules("hermes_cli")
    stub_modules("hermes_cli.plugins", get_bundled_plugins_dir=lambda: bundled)
    assert routing.hermes_ships("image_gen/fal")
    assert routing.hermes_ships("fal"), "a bare name is found in a category"
    assert not routing.hermes_ships("sky")
    assert routing.routed(["plugins", "disable", "image_gen/fal"], environ) is None


def test_a_parsed_namespace_is_read_back_as_a_line():
    args = argparse.Namespace(
        plugins_action="install", identifier="o/r", ref="abc", force=True, yes_deps=True
    )
    assert routing.namespace_arguments(args) == [
        "plugins",
        "install",
        "o/r",
        "--ref",
        "abc",
        "--force",
        "--yes-deps",
    ]
    assert routing.namespace_arguments(argparse.Namespace(plugins_action="validate", path="p")) == [
        "plugins",
        "validate",
        "p",
    ]


def test_a_binary_that_is_gone_fails_closed(monkeypatch, capsys):
    monkeypatch.delenv("HERMES_PLUGINS_BIN", raising=False)
    with pytest.raises(SystemExit) as stopped:
        routing.tool("/nonexistent/hermes-plugins")
    assert stopped.value.code == 2
    err = capsys.readouterr().err
    assert "/nonexistent/hermes-plugins" in err and "hermes_plugins_activate.pth" in err
    monkeypatch.setenv("PATH", "")
    with pytest.raises(SystemExit):
        routing.tool(None)
    assert "not on PATH" in capsys.readouterr().err


def test_the_main_entry_point_runs_the_tool_for_a_routed_line(monkeypatch, stub_modules, tmp_path):
    ran = []
    monkeypatch.setattr(routing, "run_tool", lambda binary, arguments: ran.append(arguments))
    monkeypatch.setenv("HERMES_HOME", str(tmp_path / "home"))
    main = stub_modules("hermes_cli.main", main=lambda *a, **k: "hermes")
    routing.patch_main(main, "/bin/true")
    monkeypatch.setattr("sys.argv", ["hermes", "plugins", "install", "o/r", "--json"])
    assert main.main() == "hermes"  # the stand-in run_tool returns; the real one execs
    assert ran == [["install", "o/r", "--json"]]
    monkeypatch.setattr("sys.argv", ["hermes", "chat"])
    main.main()
    assert len(ran) == 1


def test_packs_are_this_tool_s(environ, capsys):
    assert routing.routed(["plugins", "pack", "install", "kit.yaml"], environ) == [
        "pack",
        "install",
        "kit.yaml",
    ]
    assert routing.routed(["plugins", "pack", "export", "--name", "k"], environ) == [
        "pack",
        "export",
        "--name",
        "k",
    ]
    assert routing.routed(["plugins", "pack", "frobnicate"], environ) is None
    with pytest.raises(SystemExit):
        routing.routed(["plugins", "pack", "install", "kit.yaml", "--force"], environ)
    assert "never replaces an installed plugin" in capsys.readouterr().err
    args = argparse.Namespace(plugins_action="pack", pack_action="export", enabled_only=True)
    assert routing.namespace_arguments(args) == ["plugins", "pack", "export", "--enabled-only"]
