"""Rules of the packages, checked on their source: the dependency direction (DESIGN.md, docs/architecture.md), no
private name imported across modules, no class of the library shadowing a builtin, the library logging only through
``apis.logs``, and one logging set-up for every program (``apis.logs.configure_process_logging``)."""

from __future__ import annotations

import ast
import builtins
from pathlib import Path

import pytest
from testkit import REPO

OURS = ("apis", "informers", "workqueue", "reconcile", "globalmanager", "localcontroller", "workersim", "examples",
        "sandbox")
LIBRARY = ("apis", "informers", "workqueue", "reconcile")
# what each package may import of ours (informers shares the one clock of workqueue.clock); the two programs never
# import each other (they share only the wire format in apis/edge.py), and nothing imports the programs. The
# sandbox builds on apis; no package imports it (only test/ and hack/ do; ``python -m apis.fake.apiserver`` runs it
# by name, through runpy)
ALLOWED = {
    "apis": {"apis"},
    "workqueue": {"workqueue"},
    "informers": {"informers", "apis", "workqueue.clock"},
    "reconcile": {"reconcile", "apis", "informers", "workqueue"},
    "globalmanager": {"globalmanager", *LIBRARY},
    "localcontroller": {"localcontroller", *LIBRARY},
    "workersim": {"workersim", *LIBRARY},
    "examples": {"examples", *LIBRARY},
    "examples/echojob": {"examples", "globalmanager.runtime", *LIBRARY},  # a sedna-gm kind: builds on its runtime
    "sandbox": {"sandbox", "apis"},
}


def modules(package: str) -> list[Path]:
    return sorted((REPO / package).rglob("*.py"))


def imports(path: Path) -> list[tuple[str, str]]:
    """``(module, name)`` for every import in ``path``, relative imports resolved."""
    tree = ast.parse(path.read_text())
    parts = path.relative_to(REPO).with_suffix("").parts
    package = parts[:-1] if parts[-1] != "__init__" else parts[:-1]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, "") for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:
                base = package[: len(package) - node.level + 1]
                module = ".".join([*base, module] if module else base)
            found += [(module, alias.name) for alias in node.names]
    return found


@pytest.mark.parametrize("package", sorted(ALLOWED))
def test_dependency_direction(package):
    for path in modules(package):
        rules = ALLOWED.get(str(path.parent.relative_to(REPO)), ALLOWED[package])
        for module, name in imports(path):
            top = module.split(".")[0]
            if top not in OURS:
                continue
            full = f"{module}.{name}" if name else module
            assert any(full == allowed or full.startswith(allowed + ".") or module == allowed
                       for allowed in rules), f"{path.relative_to(REPO)} imports {full}"


@pytest.mark.parametrize("package", OURS)
def test_no_private_name_is_imported_across_modules(package):
    for path in modules(package):
        for module, name in imports(path):
            if module.split(".")[0] in OURS:
                assert not (name.startswith("_") and not name.startswith("__")), \
                    f"{path.relative_to(REPO)} imports the private {module}.{name}"


@pytest.mark.parametrize("package", [*LIBRARY, "sandbox"])
def test_no_class_or_constant_shadows_a_builtin(package):
    for path in modules(package):
        tree = ast.parse(path.read_text())
        for node in tree.body:
            names = [node.name] if isinstance(node, (ast.ClassDef, ast.FunctionDef)) else []
            if isinstance(node, ast.Assign):
                names = [t.id for t in node.targets if isinstance(t, ast.Name)]
            for name in names:
                assert not hasattr(builtins, name), f"{path.relative_to(REPO)} defines {name}, a builtin's name"


@pytest.mark.parametrize("package", [*LIBRARY, "sandbox"])
def test_library_modules_log_only_through_apis_logs(package):
    for path in modules(package):
        rel = path.relative_to(REPO).as_posix()
        if rel == "apis/logs.py":
            continue
        used = {module for module, _ in imports(path)}
        assert "structlog" not in used and "logging" not in used, f"{rel}: use apis.logs.get_logger(__name__)"


SETUP_CALLS = {("structlog", "configure"), ("structlog", "configure_once"), ("logging", "basicConfig"),
               ("logging", "dictConfig"), ("logging", "fileConfig")}


@pytest.mark.parametrize("package", [*OURS, "hack"])
def test_only_apis_logs_sets_up_process_logging(package):
    for path in modules(package):
        rel = path.relative_to(REPO).as_posix()
        if rel == "apis/logs.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                owner = node.func.value
                owner_name = owner.id if isinstance(owner, ast.Name) else getattr(owner, "attr", "")
                assert (owner_name, node.func.attr) not in SETUP_CALLS, \
                    f"{rel}:{node.lineno}: configure logging with apis.logs.configure_process_logging"
