"""CRDs generated from the typed views: committed YAML in sync, --check, samples valid, invalid samples rejected."""

from __future__ import annotations

import copy
import importlib.util
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from apis import errors, openapi, resources, yamlutil
from apis.sedna import crds

REPO = Path(__file__).resolve().parents[3]
CRD_DIR = REPO / "charts" / "sedna" / "crds"
SAMPLE_DIR = REPO / "charts" / "sedna" / "samples"
INVALID_DIR = Path(__file__).resolve().parent / "data" / "invalid"
SAMPLES = sorted(SAMPLE_DIR.glob("*.yaml"))
INVALID = sorted(INVALID_DIR.glob("*.yaml"))


def _load_generator():
    spec = importlib.util.spec_from_file_location("generate_crds_under_test", REPO / "hack" / "generate_crds.py")
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(module)
    return module


def _load(path: Path) -> dict:
    with path.open(encoding="utf-8") as fh:
        return yamlutil.load(fh.read())


# ----------------------------------------------------------------------------------------- generator


def test_committed_crds_equal_generator_output():
    expected = crds.render_crd_files()
    on_disk = {p.name: p.read_text(encoding="utf-8") for p in CRD_DIR.glob("*.yaml")}
    assert sorted(on_disk) == sorted(expected), "run: python hack/generate_crds.py"
    for name, text in expected.items():
        assert on_disk[name] == text, f"{name} drifted from apis/; run: python hack/generate_crds.py"


def test_generator_output_is_deterministic():
    assert crds.render_crd_files() == crds.render_crd_files()


def test_check_passes_on_a_faithful_copy_and_names_drift_missing_and_extra(tmp_path, capsys):
    gen = _load_generator()
    out = tmp_path / "crds"
    shutil.copytree(CRD_DIR, out)
    assert gen.main(["--check", "--out", str(out)]) == 0

    drifting = out / "sedna.io_incrementallearningjobs.yaml"
    drifting.write_text(drifting.read_text().replace("minimum: 1", "minimum: 2", 1))
    (out / "sedna.io_models.yaml").unlink()
    (out / "sedna.io_leftovers.yaml").write_text("kind: CustomResourceDefinition\n")
    capsys.readouterr()
    assert gen.main(["--check", "--out", str(out)]) == 1
    printed = capsys.readouterr().out.splitlines()
    assert f"drift: {drifting}" in printed
    assert f"missing: {out / 'sedna.io_models.yaml'}" in printed
    assert f"extra: {out / 'sedna.io_leftovers.yaml'}" in printed
    assert len(printed) == 3


def test_write_mode_fixes_a_directory(tmp_path):
    gen = _load_generator()
    out = tmp_path / "fresh"
    assert gen.main(["--out", str(out)]) == 0
    assert {p.name: p.read_text() for p in out.iterdir()} == crds.render_crd_files()
    assert gen.main(["--check", "--out", str(out)]) == 0


def test_generator_runs_as_a_script_from_the_repo_root(tmp_path):
    out = tmp_path / "crds"
    shutil.copytree(CRD_DIR, out)
    ok = subprocess.run([sys.executable, "hack/generate_crds.py", "--check", "--out", str(out)], cwd=REPO,
                        capture_output=True, text=True, timeout=60)
    assert ok.returncode == 0, ok.stderr
    (out / "elasticdl.org_elasticaijobs.yaml").write_text("# edited by hand\n")
    bad = subprocess.run([sys.executable, "hack/generate_crds.py", "--check", "--out", str(out)], cwd=REPO,
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 1
    assert "elasticdl.org_elasticaijobs.yaml" in bad.stdout


# ----------------------------------------------------------------------------------------- CRD shape

COLUMNS = {
    "Dataset": [("Format", ".spec.format"), ("Samples", ".status.numberOfSamples"), ("Age", ".metadata.creationTimestamp")],
    "Model": [("Format", ".spec.format"), ("Age", ".metadata.creationTimestamp")],
    "IncrementalLearningJob": [("Round", ".status.round"), ("Stage", ".status.conditions[-1].stage"),
                               ("Status", ".status.conditions[-1].type"), ("Age", ".metadata.creationTimestamp")],
    "LifelongLearningJob": [("Round", ".status.round"), ("Stage", ".status.conditions[-1].stage"),
                            ("Status", ".status.conditions[-1].type"), ("Age", ".metadata.creationTimestamp")],
    "FederatedLearningJob": [("Phase", ".status.phase"), ("Age", ".metadata.creationTimestamp")],
    "ReidJob": [("Phase", ".status.phase"), ("Age", ".metadata.creationTimestamp")],
    "VideoAnalyticsJob": [("Phase", ".status.phase"), ("Age", ".metadata.creationTimestamp")],
    "ElasticAIJob": [("Phase", ".status.phase"), ("Age", ".metadata.creationTimestamp")],
    **{
        kind: [("Status", ".status.conditions[-1].type"), ("Active", ".status.active"), ("Failed", ".status.failed"),
               ("Age", ".metadata.creationTimestamp")]
        for kind in ("JointInferenceService", "FeatureExtractionService", "ObjectSearchService", "ObjectTrackingService")
    },
}

SHORT_NAMES = {
    "Dataset": ["dset"], "Model": ["mdl"], "JointInferenceService": ["ji", "jis", "jointinferenceservice"],
    "FederatedLearningJob": ["fl"], "IncrementalLearningJob": ["il", "ij", "incrementaljob"],
    "LifelongLearningJob": ["ll"], "FeatureExtractionService": ["fe"], "ObjectSearchService": ["objs"],
    "ObjectTrackingService": ["objt"], "ReidJob": ["reid"], "VideoAnalyticsJob": ["va"], "ElasticAIJob": ["eaijob"],
}


def test_twelve_kinds_with_their_names_and_columns():
    all_crds = crds.all_crds()
    assert [c["spec"]["names"]["kind"] for c in all_crds] == list(crds.KIND_CLASSES)
    assert sorted(COLUMNS) == sorted(crds.KIND_CLASSES)
    for crd in all_crds:
        names = crd["spec"]["names"]
        kind = names["kind"]
        group = "elasticdl.org" if kind == "ElasticAIJob" else "sedna.io"
        info = resources.lookup_kind(f"{group}/v1alpha1", kind)
        assert crd["metadata"]["name"] == f"{info.gvr.resource}.{group}"
        assert crd["spec"]["group"] == group and crd["spec"]["scope"] == "Namespaced"
        assert names["plural"] == info.gvr.resource and names["singular"] == kind.lower()
        assert names["listKind"] == kind + "List"
        assert names.get("shortNames", []) == SHORT_NAMES[kind]
        [version] = crd["spec"]["versions"]
        assert version["name"] == "v1alpha1" and version["served"] and version["storage"]
        assert version["subresources"] == {"status": {}}
        assert [(c["name"], c["jsonPath"]) for c in version["additionalPrinterColumns"]] == COLUMNS[kind]
        assert crds.crd_file_name(crd) == f"{group}_{info.gvr.resource}.yaml"


def test_lookup_by_kind_plural_or_short_name():
    assert crds.crd_for("il") == crds.crd_for("IncrementalLearningJob") == crds.crd_for("incrementallearningjobs")
    assert crds.crd_for("eaijob")["spec"]["group"] == "elasticdl.org"
    with pytest.raises(KeyError, match="Widget"):
        crds.crd_for("Widget")


def _node(schema: dict, dotted: str) -> dict:
    for part in dotted.split("."):
        schema = schema["items"] if part == "[]" else schema["properties"][part]
    return schema


def test_schema_details_come_from_the_definitions():
    il = crds.schema_for("IncrementalLearningJob")
    poll = _node(il, "spec.deploySpec.model.pollPeriodSeconds")
    assert poll == {"type": "integer", "description": poll["description"], "minimum": 1, "default": 60}
    operator = _node(il, "spec.trainSpec.trigger.condition.operator")
    assert operator["enum"] == [">=", ">", "=", "==", "<=", "<", "!=", "ge", "gt", "eq", "le", "lt", "ne"]
    assert _node(il, "spec.trainSpec.trigger.condition")["required"] == ["operator", "threshold", "metric"]
    assert _node(il, "spec.trainSpec.template") == {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    assert _node(il, "status.conditions.[].stage")["enum"] == ["Train", "Eval", "Deploy"]
    assert il["properties"]["metadata"] == {"type": "object"}
    assert il["required"] == ["metadata", "spec"]  # Go ObjectMeta `json:"metadata"` (no omitempty), as Sedna's CRD
    assert crds.schema_for("Dataset")["required"] == ["spec"]
    ji = crds.schema_for("JointInferenceService")
    assert _node(ji, "spec.edgeWorker.hpa.metrics.[]") == {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    reid_workers = _node(crds.schema_for("ObjectSearchService"), "spec.reidWorkers")
    assert reid_workers["required"] == ["selector", "template"]  # an inlined apps/v1 DeploymentSpec
    assert reid_workers["properties"]["template"] == {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    eai = crds.schema_for("ElasticAIJob")
    for replica in ("master", "ps", "worker"):
        assert _node(eai, f"spec.{replica}.count")["minimum"] == 0
        assert set(_node(eai, f"spec.{replica}")["properties"]) == {
            "image", "priority", "resource_request", "resource_limit", "volume", "count"}
    assert _node(eai, "status.replicaStatuses.worker")["properties"].keys() == {"active", "succeeded", "failed"}
    assert _node(eai, "status.phase")["enum"] == ["Pending", "Running", "Succeeded", "Failed"]
    assert _node(eai, "status.conditions.[].type")["enum"] == ["Created", "Running", "Succeeded", "Failed"]
    assert _node(crds.schema_for("Model"), "spec")["properties"].keys() >= {"device_soc_versions", "credentialName"}
    kb = _node(crds.schema_for("LifelongLearningJob"), "status.knowledgeBase")
    assert kb["required"] == ["AIModels", "AIClasses", "samples"]
    assert "modelID" in _node(kb, "AIModels.listOfAIModels.[]")["properties"]


def _walk(schema: dict, path: str = ""):
    yield path, schema
    for key, child in (schema.get("properties") or {}).items():
        yield from _walk(child, f"{path}.{key}")
    if isinstance(schema.get("items"), dict):
        yield from _walk(schema["items"], f"{path}[]")
    if isinstance(schema.get("additionalProperties"), dict):
        yield from _walk(schema["additionalProperties"], f"{path}{{}}")


@pytest.mark.parametrize("kind", list(crds.KIND_CLASSES))
def test_schemas_are_structural(kind):
    """Every node has a type (or preserves unknown fields), as apiextensions.k8s.io/v1 requires."""
    for path, node in _walk(crds.schema_for(kind)):
        assert "type" in node or node.get("x-kubernetes-preserve-unknown-fields") is True, path
        assert not ("properties" in node and "additionalProperties" in node), path
        if "default" in node:
            assert openapi.validate(node, node["default"]) == [], path


# -------------------------------------------------------------------------------------------- samples


def test_one_sample_per_kind():
    assert sorted(_load(p)["kind"] for p in SAMPLES) == sorted(crds.KIND_CLASSES)


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.stem)
def test_sample_round_trips_through_its_typed_view(path):
    sample = _load(path)
    cls = crds.view_class(sample["kind"])
    assert cls.from_dict(sample).to_dict() == sample
    with_unknown = copy.deepcopy(sample)
    with_unknown["spec"]["futureField"] = {"nested": [1, 2]}
    with_unknown["metadata"]["annotations"] = {"note": "kept"}
    with_unknown["topLevelExtra"] = None
    view = cls.from_dict(with_unknown)
    assert view.to_dict() == with_unknown
    assert view.name == sample["metadata"]["name"]


# the samples, and the Models and Datasets they name (samples/references/, several per file)
CRD_OBJECTS = [_load(p) for p in SAMPLES] + [
    obj for p in sorted((SAMPLE_DIR / "references").glob("*.yaml")) for obj in yamlutil.load_all(p.read_text())
    if obj["kind"] in crds.KIND_CLASSES
]


@pytest.mark.parametrize("sample", CRD_OBJECTS, ids=lambda o: f"{o['kind']}/{o['metadata']['name']}")
def test_sample_is_valid_against_its_crd_schema(sample):
    schema = crds.schema_for(sample["kind"])
    obj = copy.deepcopy(sample)
    pruned: list[str] = []
    openapi.prune(schema, obj, pruned=pruned)
    assert pruned == []
    openapi.apply_defaults(schema, obj)
    assert obj == sample, "samples spell out every defaulted field"
    assert openapi.validate(schema, obj) == []


def _expected_causes(path: Path) -> set[tuple[str, str]]:
    found = re.findall(r"^# expect: (\S+) (\S+)$", path.read_text(), flags=re.M)
    assert found, f"{path.name} declares no '# expect: <type> <field>' line"
    return set(found)


@pytest.mark.parametrize("path", INVALID, ids=lambda p: p.stem)
def test_invalid_sample_is_rejected_naming_the_field(path):
    obj = _load(path)
    schema = crds.schema_for(obj["kind"])
    openapi.prune(schema, obj)
    openapi.apply_defaults(schema, obj)
    causes = openapi.validate(schema, obj)
    assert {(c["type"], c["field"]) for c in causes} == _expected_causes(path)
    err = errors.new_invalid(obj["kind"], obj["metadata"]["name"], causes, crds.crd_for(obj["kind"])["spec"]["group"])
    for c in causes:
        assert c["field"] in err.message and c["message"]


def test_at_least_the_required_invalid_cases_exist():
    kinds = {tuple(sorted(_expected_causes(p))) for p in INVALID}
    flat = {cause for group in kinds for cause in group}
    assert ("FieldValueNotSupported", "spec.trainSpec.trigger.condition.operator") in flat
    assert any(t == "FieldValueTypeInvalid" for t, _ in flat)
    assert any(t == "FieldValueRequired" for t, _ in flat)
    assert ("FieldValueInvalid", "spec.worker.count") in flat


@pytest.mark.parametrize("path", [p for p in INVALID if "FieldValueTypeInvalid" in p.read_text()], ids=lambda p: p.stem)
def test_typed_view_rejects_wrongly_typed_invalid_samples(path):
    obj = _load(path)
    fields = [f for t, f in _expected_causes(path) if t == "FieldValueTypeInvalid"]
    with pytest.raises(ValueError) as info:
        crds.view_class(obj["kind"]).from_dict(obj)
    assert any(str(info.value).startswith(f + ":") for f in fields), str(info.value)
