"""The reference reader: the contract of docs/generations.md, read with the standard library."""

import os

import pytest

from hermes_plugins_generation import reader


def test_nothing_published_reads_as_none(tmp_path):
    assert reader.acquire(str(tmp_path)) == (None, None)
    assert reader.published({"HERMES_HOME": str(tmp_path)}) is None


def test_the_current_generation_is_leased_and_read(home):
    directory = home.publish(
        number=3,
        plugins={"tools/sky": {"requires_env": ["SKY_TOKEN"]}, "moon": {}},
        grants={"moon": ["tools.override"]},
        external=["local-one", "moon"],
        python={"version": "3.11.7", "site_packages": "venv/lib/python3.11/site-packages"},
    )
    found, lease = reader.acquire(home.root)
    try:
        assert found == os.path.realpath(directory)
        plan = reader.read_plan(found, "default")
    finally:
        lease.close()
    assert plan.number == 3
    assert plan.enabled == ["tools/sky", "moon"]
    assert plan.managed == {"tools/sky", "sky", "moon"}
    assert plan.external == ["local-one"], "a managed key is never external"
    assert plan.granted("moon", "tools.override") and not plan.granted("tools/sky", "x")
    assert plan.site_packages == os.path.join(found, "venv/lib/python3.11/site-packages")
    assert plan.plugins_dir == os.path.join(found, "plugins")


def test_requires_env_is_read_from_the_environment_and_the_env_file(home, tmp_path):
    directory = home.publish(plugins={"sky": {"requires_env": ["SKY_TOKEN", "SKY_URL"]}})
    plan = reader.read_plan(directory, "default")
    env_file = tmp_path / ".env"
    env_file.write_text("# SKY_URL=commented\nexport SKY_URL = x\nNOT A LINE\n")
    assert plan.missing_env("sky", {}, str(env_file)) == ["SKY_TOKEN"]
    assert plan.allowed({}, str(env_file)) == []
    assert plan.allowed({"SKY_TOKEN": ""}, str(env_file)) == ["sky"]
    assert reader.env_file_names(str(tmp_path / "absent")) == set()


def test_a_collected_generation_is_not_leased(home):
    directory = home.publish()
    os.unlink(os.path.join(directory, "generation.json"))
    assert reader.lease(directory) is None
    with pytest.raises(reader.GenerationError, match="kept changing"):
        reader.acquire(home.root, attempts=2)


def test_another_format_or_python_is_refused(home):
    directory = home.publish(python={"version": "3.11.2"})
    plan = reader.read_plan(directory, "default")
    plan.check_python((3, 11))
    with pytest.raises(reader.GenerationError, match=r"built for Python 3\.11"):
        plan.check_python((3, 12))
    with pytest.raises(reader.GenerationError, match="format 2 is not 1"):
        reader.Plan(directory, "default", {"format": 2})
    with open(os.path.join(directory, "generation.json"), "w") as handle:
        handle.write("{not json")
    with pytest.raises(reader.GenerationError, match="cannot read"):
        reader.read_plan(directory, "default")


def test_a_profile_home_is_found_under_its_managed_root(tmp_path):
    root = tmp_path / "root"
    profile = root / "profiles" / "work"
    profile.mkdir(parents=True)
    environ = {"HERMES_HOME": str(profile)}
    # Nothing manages the root yet: the profile's home is its own root ...
    assert reader.home_of(environ) == (str(profile), "default", str(profile))
    # ... except for a command that writes, which starts managing the root.
    assert reader.home_of(environ, for_writing=True) == (str(root), "work", str(profile))
    (root / "pm").mkdir()
    assert reader.home_of(environ) == (str(root), "work", str(profile))
    assert reader.home_of({"HOME": "/h"})[1] == "default"


def test_on_windows_current_is_a_file_naming_the_generation(home, monkeypatch):
    """Windows has no unprivileged symbolic links: ``pm/current`` holds ``generations/<N>``
    (what ``switch_current`` writes there); the reader resolves it the same way."""
    directory = home.publish(number=7)
    link = os.path.join(home.root, "pm", "current")
    os.unlink(link)
    with open(link, "w", encoding="utf-8") as pointer:
        pointer.write("generations/7\n")
    monkeypatch.setattr(reader.os, "name", "nt")
    assert reader.current(home.root) == os.path.realpath(directory)
    os.unlink(link)
    assert reader.current(home.root) is None
