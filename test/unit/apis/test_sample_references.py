"""``charts/sedna/samples/references/``: the Models, Datasets and Secret the samples name, so that applying the
samples directory runs every sample for real. Each object is valid against its CRD, and every object a sample
names is defined there or by a sample."""

from __future__ import annotations

import base64
import copy
from pathlib import Path
from typing import Any

import pytest

from apis import openapi, yamlutil
from apis.sedna import crds

SAMPLE_DIR = Path(__file__).resolve().parents[3] / "charts" / "sedna" / "samples"
REFERENCE_DIR = SAMPLE_DIR / "references"
MODEL_FIELDS = ("model", "initialModel", "pretrainedModel", "initialEvalModel")


def _samples() -> list[dict[str, Any]]:
    return [yamlutil.load(p.read_text()) for p in sorted(SAMPLE_DIR.glob("*.yaml"))]


def _references() -> list[dict[str, Any]]:
    return [obj for p in sorted(REFERENCE_DIR.glob("*.yaml")) for obj in yamlutil.load_all(p.read_text())]


def _named(node: Any, out: set[tuple[str, str]]) -> set[tuple[str, str]]:
    """``(kind, name)`` of every Model, Dataset and Secret that ``node`` names."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key in MODEL_FIELDS and isinstance(value, dict) and value.get("name"):
                out.add(("Model", value["name"]))
            elif key == "dataset" and isinstance(value, dict) and value.get("name"):
                out.add(("Dataset", value["name"]))
            elif key == "credentialName" and value:
                out.add(("Secret", value))
            else:
                _named(value, out)
    elif isinstance(node, list):
        for item in node:
            _named(item, out)
    return out


@pytest.mark.parametrize("obj", [o for o in _references() if o["kind"] != "Secret"], ids=lambda o: o["metadata"]["name"])
def test_each_reference_is_valid_against_its_crd(obj):
    schema = crds.schema_for(obj["kind"])
    checked = copy.deepcopy(obj)
    pruned: list[str] = []
    openapi.prune(schema, checked, pruned=pruned)
    assert pruned == []
    openapi.apply_defaults(schema, checked)
    assert checked == obj and openapi.validate(schema, checked) == []


def test_the_secret_has_sednas_s3_shape():
    (secret,) = [o for o in _references() if o["kind"] == "Secret"]
    assert secret["metadata"]["annotations"]["s3-endpoint"]
    assert {base64.b64decode(v).decode() for v in secret["data"].values()}
    assert sorted(secret["data"]) == ["ACCESS_KEY_ID", "SECRET_ACCESS_KEY"]


def test_every_object_a_sample_names_is_defined():
    objects = _samples() + _references()
    defined = {(o["kind"], o["metadata"]["name"]) for o in objects}
    named: set[tuple[str, str]] = set()
    for obj in objects:
        _named(obj.get("spec"), named)
    assert named - defined == set()
    assert ("Model", "feature-extraction-model") in named and ("Secret", "mysecret-s3") in named  # the walk finds them
    assert len({(k, n) for k, n in defined}) == len(objects), "a name is defined twice"
