"""Stage names, stage condition types and the annotations the GM writes for the LC are defined once, in
``apis.sedna.constants``, and both programs import them: neither spells one as a literal of its own. The type of an
API object, ``Obj``, is defined once too, in ``apis.meta``."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from testkit import REPO

from apis.sedna import constants as c
from apis.sedna.v1alpha1.common import Stage, StageConditionType

# "Ready", "Running", "Completed" and "Failed" are also pod phases and event reasons: they are left out of the scan.
SHARED = {
    c.TRAIN, c.EVAL, c.DEPLOY, c.WAITING, c.STARTING,
    c.CREDENTIAL_ANNOTATION, *c.STAGE_NODE_ANNOTATIONS, c.MODEL_HOT_UPDATE_ANNOTATION,
    c.MODEL_HOT_UPDATE_HOST_PREFIX, c.MODEL_HOT_UPDATE_CONTAINER_PREFIX, c.MODEL_HOT_UPDATE_CONFIG_FILE,
    c.S3_ENDPOINT_KEY, c.S3_USE_HTTPS_KEY, c.ACCESS_KEY_ID, c.SECRET_ACCESS_KEY,
}


def literals(path: Path) -> list[str]:
    """The shared names ``path`` spells as string literals (docstrings excepted)."""
    tree = ast.parse(path.read_text())
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                  and node.body and isinstance(node.body[0], ast.Expr)
                  and isinstance(node.body[0].value, ast.Constant)}
    return [f"{path.relative_to(REPO)}:{node.lineno} {node.value!r}" for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and node.value in SHARED and id(node) not in docstrings]


@pytest.mark.parametrize("package", ["globalmanager", "localcontroller"])
def test_neither_program_defines_a_shared_name_again(package):
    assert [hit for path in sorted((REPO / package).rglob("*.py")) for hit in literals(path)] == []


def test_the_schema_enums_are_the_shared_names():
    assert Stage.ALL == c.STAGES == ("Train", "Eval", "Deploy")
    assert StageConditionType.ALL == c.CONDITION_TYPES
    assert c.STAGE_NODE_ANNOTATIONS == ("sedna.io/Train", "sedna.io/Eval", "sedna.io/Deploy")
    assert c.stage_node_annotation(c.EVAL) == "sedna.io/Eval"


def test_the_object_type_is_defined_once_in_apis_meta():
    found = []
    for package in ("apis", "informers", "workqueue", "globalmanager", "localcontroller", "workersim"):
        for path in sorted((REPO / package).rglob("*.py")):
            for node in ast.parse(path.read_text()).body:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
                    node, ast.AnnAssign) else []
                if any(isinstance(t, ast.Name) and t.id == "Obj" for t in targets):
                    found.append(str(path.relative_to(REPO)))
    assert found == ["apis/meta.py"]
