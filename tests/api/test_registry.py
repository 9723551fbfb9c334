"""The registry: decorators, `module:Name`, plugins, and one-line errors with the closest names."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from evoarena.api import PluginError, Registry, UnknownName, closest, load_plugins
from evoarena.api.registry import import_ref


def test_get_suggests_the_closest_name_in_one_line() -> None:
    reg = Registry()
    reg.add("method", "reflexion", object())
    reg.add("method", "gepa", object())
    with pytest.raises(UnknownName) as err:
        reg.get("method", "refelxion")
    message = str(err.value)
    assert "did you mean 'reflexion'?" in message and "\n" not in message
    assert closest("zzz", ["reflexion"]) == ""


def test_one_name_twice_with_different_objects_is_refused() -> None:
    reg = Registry()
    reg.add("policy", "p", print)
    reg.add("policy", "p", print)  # the same object again (a module imported twice): fine
    with pytest.raises(ValueError, match="registered twice"):
        reg.add("policy", "p", len)


def test_module_refs_import_from_the_given_directory(tmp_path: Path) -> None:
    (tmp_path / "refmod_for_test.py").write_text("class Thing:\n    '''A thing.'''\n\ndef f():\n    return 1\n")
    try:
        cls = import_ref("method", "refmod_for_test:Thing", [tmp_path])
        assert cls.__name__ == "Thing" and cls.name == "refmod_for_test:Thing"  # a class without a name gets its ref
        with pytest.raises(UnknownName, match="has no Missing"):
            import_ref("method", "refmod_for_test:Missing", [tmp_path])
        with pytest.raises(UnknownName, match="cannot import no_such_module_x"):
            import_ref("method", "no_such_module_x:Thing", [tmp_path])
        with pytest.raises(UnknownName, match="expected module:Name"):
            import_ref("method", "refmod_for_test:", [tmp_path])
    finally:
        sys.modules.pop("refmod_for_test", None)


def test_a_broken_plugin_is_named_not_a_traceback(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "broken_plugin_x.py").write_text("raise RuntimeError('boom')\n")
    dist = tmp_path / "broken_plugin_x-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: broken-plugin-x\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[evoarena.plugins]\nbroken = broken_plugin_x\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(PluginError, match=r"plugin 'broken' \(broken_plugin_x\) failed to load: RuntimeError: boom"):
        load_plugins(Registry())


def test_a_register_function_plugin_fills_the_registry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "fn_plugin_x.py").write_text("def register(registry):\n    registry.add('policy', 'fn-x', len)\n")
    dist = tmp_path / "fn_plugin_x-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: fn-plugin-x\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[evoarena.plugins]\nfnx = fn_plugin_x:register\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    reg = Registry()
    assert "fnx" in load_plugins(reg)
    assert reg.get("policy", "fn-x") is len and reg.entries("policy")[0].origin == "plugin:fnx"
