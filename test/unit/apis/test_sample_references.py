"""``charts/sedna/samples/references/``: the Models, Datasets and Secret the samples name, so that applying the
samples directory runs every sample for real. Every object a sample names is defined there or by a sample (their
validity against the CRDs is checked with the samples', in ``test_crds.py``)."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

from apis import yamlutil

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
