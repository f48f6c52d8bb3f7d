"""The generated CRDs served by the fake API machinery: every sample is accepted and read back unchanged, invalid
samples are rejected with causes naming the field — first on an ObjectTracker, then over HTTP on the sandbox."""

from __future__ import annotations

import copy
import json
import re
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from apis import errors, resources, yamlutil
from apis.fake import ObjectTracker
from apis.sedna import crds
from apis.sedna.v1alpha1 import ILJobStatus, IncrementalLearningJob, StageCondition

REPO = Path(__file__).resolve().parents[2]
CRD_DIR = REPO / "charts" / "sedna" / "crds"
SAMPLES = sorted((REPO / "charts" / "sedna" / "samples").glob("*.yaml"))
INVALID = sorted((REPO / "test" / "unit" / "apis" / "data" / "invalid").glob("*.yaml"))
SERVER_SET = ("uid", "resourceVersion", "creationTimestamp", "generation", "namespace", "managedFields")


def _load(path: Path) -> dict:
    return yamlutil.load(path.read_text())


def _gvr(obj: dict) -> resources.GroupVersionResource:
    return resources.lookup_kind(obj["apiVersion"], obj["kind"]).gvr


def _without_server_fields(obj: dict) -> dict:
    out = copy.deepcopy(obj)
    for key in SERVER_SET:
        out["metadata"].pop(key, None)
    return out


def _expected_causes(path: Path) -> set[tuple[str, str]]:
    return set(re.findall(r"^# expect: (\S+) (\S+)$", path.read_text(), flags=re.M))


@pytest.fixture
def tracker() -> ObjectTracker:
    tracker = ObjectTracker()
    for crd in crds.all_crds():
        tracker.create(resources.CUSTOM_RESOURCE_DEFINITIONS, crd)
    yield tracker
    tracker.close_watches()


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.stem)
def test_tracker_accepts_each_sample_unchanged(tracker, path):
    sample = _load(path)
    created = tracker.create(_gvr(sample), copy.deepcopy(sample), "default")
    got = tracker.get(_gvr(sample), "default", sample["metadata"]["name"])
    assert got == created
    assert _without_server_fields(got) == sample
    assert got["metadata"]["namespace"] == "default" and got["metadata"]["generation"] == 1


@pytest.mark.parametrize("path", INVALID, ids=lambda p: p.stem)
def test_tracker_rejects_each_invalid_sample(tracker, path):
    obj = _load(path)
    with pytest.raises(errors.InvalidError) as info:
        tracker.create(_gvr(obj), obj, "default")
    causes = info.value.details["causes"]
    assert {(c["type"], c["field"]) for c in causes} == _expected_causes(path)


def test_tracker_prunes_unknown_fields_and_applies_defaults(tracker):
    sample = _load(next(p for p in SAMPLES if p.stem == "incrementallearningjob"))
    del sample["spec"]["deploySpec"]["model"]["pollPeriodSeconds"]
    sample["spec"]["notInTheSchema"] = True
    created = tracker.create(resources.INCREMENTAL_LEARNING_JOBS, sample, "default")
    assert created["spec"]["deploySpec"]["model"]["pollPeriodSeconds"] == 60
    assert "notInTheSchema" not in created["spec"]
    assert created["spec"]["trainSpec"]["template"] == sample["spec"]["trainSpec"]["template"]


def test_tracker_accepts_a_status_written_through_the_typed_view(tracker):
    sample = _load(next(p for p in SAMPLES if p.stem == "incrementallearningjob"))
    created = tracker.create(resources.INCREMENTAL_LEARNING_JOBS, sample, "default")
    job = IncrementalLearningJob.from_dict(created)
    job.status = ILJobStatus(
        conditions=[StageCondition(type="Waiting", status="True", stage="Train", last_heartbeat_time="2026-01-02T03:04:05Z")],
        start_time="2026-01-02T03:04:05Z",
    )
    updated = tracker.update(resources.INCREMENTAL_LEARNING_JOBS, job.to_dict(), "default", subresource="status")
    assert IncrementalLearningJob.from_dict(updated).status.conditions[-1].stage == "Train"
    bad = copy.deepcopy(updated)
    bad["status"]["conditions"][0]["stage"] = "Sleep"
    with pytest.raises(errors.InvalidError, match=r"status\.conditions\[0\]\.stage"):
        tracker.update(resources.INCREMENTAL_LEARNING_JOBS, bad, "default", subresource="status")


# ------------------------------------------------------------------------------------------------ HTTP


def _request(url: str, method: str = "GET", body: dict | None = None) -> tuple[int, dict]:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def _collection_url(base: str, obj: dict) -> str:
    gvr = _gvr(obj)
    return f"{base}/apis/{gvr.group}/{gvr.version}/namespaces/default/{gvr.resource}"


@pytest.mark.integration
@pytest.mark.sandbox(kubelet=False, crd_dirs=[str(CRD_DIR)])
def test_sandbox_serves_every_kind_from_the_chart_crds(sandbox):
    status, discovery = _request(f"{sandbox.url}/apis/sedna.io/v1alpha1")
    assert status == 200
    short = {r["name"]: r.get("shortNames", []) for r in discovery["resources"] if "/" not in r["name"]}
    assert short["incrementallearningjobs"] == ["il", "ij", "incrementaljob"]
    assert short["jointinferenceservices"] == ["ji", "jis", "jointinferenceservice"]
    assert len(short) == 11
    for path in SAMPLES:
        sample = _load(path)
        status, created = _request(_collection_url(sandbox.url, sample), "POST", sample)
        assert status == 201, created
        status, got = _request(f"{_collection_url(sandbox.url, sample)}/{sample['metadata']['name']}")
        assert status == 200
        assert _without_server_fields(got) == sample


@pytest.mark.integration
@pytest.mark.sandbox(kubelet=False, crd_dirs=[str(CRD_DIR)])
def test_sandbox_rejects_invalid_samples_with_422(sandbox):
    for path in INVALID:
        obj = _load(path)
        status, body = _request(_collection_url(sandbox.url, obj), "POST", obj)
        assert status == 422, (path.name, body)
        assert body["reason"] == "Invalid"
        fields = {c.get("field") for c in body["details"]["causes"]}
        assert fields == {f for _, f in _expected_causes(path)}, path.name
