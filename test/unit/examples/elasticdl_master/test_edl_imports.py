"""The worked example is built on the library alone: it imports apis, informers and workqueue, never globalmanager
or localcontroller, and importing it configures and logs nothing."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

from testkit import REPO

PACKAGE = REPO / "examples" / "elasticdl_master"
OURS = {"apis", "informers", "workqueue", "globalmanager", "localcontroller", "examples", "hack"}


def top_level_imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def test_only_the_library_packages_of_ours_are_imported():
    for path in sorted(PACKAGE.glob("*.py")):
        assert top_level_imports(path) & OURS <= {"apis", "informers", "workqueue"}, path.name


def test_importing_the_package_prints_nothing():
    out = subprocess.run([sys.executable, "-c", "import examples.elasticdl_master, structlog; "
                          "assert not structlog.is_configured()"],
                         cwd=REPO, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout == "" and out.stderr == ""
