"""The three registries (sedna-gm's controllers, sedna-lc's managers, the typed informer groups and listers) are plain
dicts written in one place each: importing a module registers nothing, and every shipped kind is listed."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest
from testkit import REPO

from apis import informer_registry
from apis import resources as r
from globalmanager.controllers import registry as gm_registry
from localcontroller.managers.registry import MANAGERS

REGISTERING = {"register", "register_group", "register_lister"}


def module_level_registrations(path: Path) -> list[str]:
    """``register…(...)`` calls a module makes when it is imported (statements outside any function or class)."""
    found = []
    for statement in ast.parse(path.read_text()).body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for node in ast.walk(statement):
            if isinstance(node, ast.Call):
                func = node.func
                name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
                if name in REGISTERING:
                    found.append(f"{path.relative_to(REPO)}:{node.lineno} {name}()")
    return found


@pytest.mark.parametrize("package", ["apis", "globalmanager", "localcontroller"])
def test_importing_a_module_registers_nothing(package):
    found = [hit for path in sorted((REPO / package).rglob("*.py")) for hit in module_level_registrations(path)]
    assert found == []


def test_every_gm_controller_package_is_listed_under_its_name():
    modules = [importlib.import_module(f"globalmanager.controllers.{p.parent.name}.controller")
               for p in (REPO / "globalmanager" / "controllers").glob("*/controller.py")]
    names = {module.NAME for module in modules if hasattr(module, "NAME")}  # learningjob is IL's and LL's shared base
    assert len(names) == 12 and set(gm_registry.CONTROLLERS) == names
    assert gm_registry.registered() == sorted(gm_registry.CONTROLLERS)


def test_select_refuses_unknown_names_and_register_adds_a_plug_in():
    with pytest.raises(KeyError, match="unknown controllers: Nope"):
        gm_registry.select(["Dataset", "Nope"])

    def factory(ctx):
        raise AssertionError("not built here")

    gm_registry.register("PlugIn", factory)
    try:
        assert gm_registry.select(["PlugIn"]) == {"PlugIn": factory}
    finally:
        gm_registry.unregister("PlugIn")
    assert "PlugIn" not in gm_registry.registered()


def test_every_lc_manager_is_listed_under_its_lower_cased_kind():
    assert sorted(MANAGERS) == ["dataset", "federatedlearningjob", "incrementallearningjob", "jointinferenceservice",
                                "lifelonglearningjob", "model"]
    for kind, factory in MANAGERS.items():
        assert kind == kind.lower() and factory.kind == kind


def test_every_custom_kind_has_its_typed_group_and_lister():
    custom = [info.gvr for info in r.all_resources() if info.gvr.group in (r.SEDNA_GROUP, r.ELASTICDL_GROUP)]
    assert len(custom) == 12
    assert set(custom) <= set(informer_registry.LISTERS)
    assert {"sedna_v1alpha1", "elasticdl_v1alpha1"} <= set(informer_registry.GROUPS)
