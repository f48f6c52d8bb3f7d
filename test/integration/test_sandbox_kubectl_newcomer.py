"""What a newcomer sees with a real kubectl against the sandbox (issue 27): the Sedna kinds' STAGE/STATUS columns,
``--sort-by`` on Events, the STATUS of namespaces, ``kubectl explain`` descriptions and the Sedna short names; and
(issue 41) the kubectl commands ``sedna-local-up`` suggests work on the oldest and newest kubectl there is."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest
from testkit import wait_for
from testkit.kubectl import MAIN_KUBECTL, VERSIONED, Kubectl, requires_kubectl, version_key

from apis import resources as res
from hack.local_up import kubectl_hints

pytestmark = [pytest.mark.integration, requires_kubectl]

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "charts" / "sedna" / "samples"
CRDS = str(REPO / "charts" / "sedna" / "crds")


def _kubectl(sandbox, tmp_path: Path) -> Kubectl:
    assert MAIN_KUBECTL is not None
    return Kubectl(MAIN_KUBECTL, sandbox.kubeconfig, tmp_path / "cache")


STAGED = [  # short name, sample, resource, columns the last condition fills
    ("il", "incrementallearningjob.yaml", res.INCREMENTAL_LEARNING_JOBS, {"stage": "Eval", "type": "Running"}),
    ("ll", "lifelonglearningjob.yaml", res.LIFELONG_LEARNING_JOBS, {"stage": "Deploy", "type": "Completed"}),
]
SERVICES = [
    ("ji", "jointinferenceservice.yaml", res.JOINT_INFERENCE_SERVICES),
    ("fe", "featureextractionservice.yaml", res.FEATURE_EXTRACTION_SERVICES),
    ("objs", "objectsearchservice.yaml", res.OBJECT_SEARCH_SERVICES),
    ("objt", "objecttrackingservice.yaml", res.OBJECT_TRACKING_SERVICES),
]


def _apply_sample(k: Kubectl, sample: str) -> str:
    text = (SAMPLES / sample).read_text()
    k.apply(text)
    match = re.search(r"^metadata:\n  name: (\S+)", text, re.M)
    assert match
    return match.group(1)


@pytest.mark.sandbox(crd_dirs=[CRDS], kubelet=False)
def test_stage_and_status_columns_come_from_the_last_condition(sandbox, tmp_path: Path) -> None:
    k = _kubectl(sandbox, tmp_path)
    for short, sample, gvr, last in STAGED:
        name = _apply_sample(k, sample)
        conditions = [{"type": "Waiting", "stage": "Train", "status": "True"}, {**last, "status": "True"}]
        sandbox.tracker.patch(gvr, "default", name, {"status": {"conditions": conditions}}, subresource="status")
        header, row = k.table(short)
        assert header == ["NAME", "STAGE", "STATUS", "AGE"]
        assert row[:3] == [name, last["stage"], last["type"]]
    for short, sample, gvr in SERVICES:
        name = _apply_sample(k, sample)
        status = {"active": 2, "failed": 1, "conditions": [{"type": "Pending", "status": "True"},
                                                            {"type": "Running", "status": "True"}]}
        sandbox.tracker.patch(gvr, "default", name, {"status": status}, subresource="status")
        header, row = k.table(short)
        assert header == ["NAME", "STATUS", "ACTIVE", "FAILED", "AGE"]
        assert row[:4] == [name, "Running", "2", "1"]


def _event(name: str, reason: str, last: str) -> str:
    return f"""\
apiVersion: v1
kind: Event
metadata: {{name: {name}}}
involvedObject: {{kind: Pod, name: p, namespace: default}}
reason: {reason}
message: m-{reason}
type: Normal
firstTimestamp: "{last}"
lastTimestamp: "{last}"
count: 1
"""


def test_events_sort_by_last_timestamp_lists_every_event_in_order(sandbox, tmp_path: Path) -> None:
    k = _kubectl(sandbox, tmp_path)
    k.apply("---\n".join([
        _event("e1", "Third", "2024-01-01T00:00:30Z"),
        _event("e2", "First", "2024-01-01T00:00:10Z"),
        _event("e3", "Second", "2024-01-01T00:00:20Z"),
    ]))
    out = k("get", "events", "--sort-by=.lastTimestamp").stdout
    assert "No resources found" not in out
    reasons = [line.split()[2] for line in out.splitlines()[1:]]
    assert reasons == ["First", "Second", "Third"]
    names = k("get", "events", "--sort-by=.metadata.name", "-o", "name").stdout.split()
    assert names == ["event/e1", "event/e2", "event/e3"]


def test_namespaces_are_active_and_terminating_while_deleted(sandbox, tmp_path: Path) -> None:
    k = _kubectl(sandbox, tmp_path)
    k.apply("apiVersion: v1\nkind: Namespace\nmetadata: {name: team-a, finalizers: [example.com/hold]}\n")
    rows = {row[0]: row for row in k.table("ns")}
    assert rows["NAME"][:2] == ["NAME", "STATUS"]
    assert rows["default"][1] == "Active"
    assert rows["team-a"][1] == "Active"
    k("delete", "ns", "team-a", "--wait=false")
    assert k.table("ns", "team-a")[1][1] == "Terminating"


# Short names kube-apiserver 1.33 serves for its built-in resources (`kubectl api-resources` on a kind cluster),
# and the plurals and singulars kubectl also resolves, which a Sedna short name must not shadow either.
KUBE_SHORT_NAMES = {
    "cs", "cm", "ep", "ev", "limits", "ns", "no", "pvc", "pv", "po", "rc", "quota", "sa", "svc", "crd", "crds",
    "ds", "deploy", "rs", "sts", "hpa", "cj", "csr", "ing", "netpol", "pdb", "pc", "sc", "ip", "vac",
}


def _sedna_infos() -> list[res.ResourceInfo]:
    return [i for i in res.all_resources() if i.gvr.group in (res.SEDNA_GROUP, res.ELASTICDL_GROUP)]


def test_every_sedna_kind_has_a_short_name_no_built_in_uses() -> None:
    built_in = [i for i in res.all_resources() if i.gvr.group not in (res.SEDNA_GROUP, res.ELASTICDL_GROUP)]
    taken = KUBE_SHORT_NAMES | {n for i in built_in for n in (*i.short_names, i.gvr.resource, i.singular)}
    seen: set[str] = set()
    for info in _sedna_infos():
        assert info.short_names, f"{info.kind} has no short name"
        assert not set(info.short_names) & taken, f"{info.kind}: {set(info.short_names) & taken}"
        assert not set(info.short_names) & seen
        seen.update(info.short_names)
    kinds = {i.kind for i in _sedna_infos()}
    assert {"Dataset", "Model"} <= kinds and len(kinds) == 12


@pytest.mark.sandbox(crd_dirs=[CRDS], kubelet=False)
def test_kubectl_resolves_the_sedna_short_names(sandbox, tmp_path: Path) -> None:
    k = _kubectl(sandbox, tmp_path)
    resources = k("api-resources", "--api-group=sedna.io").stdout
    for info in _sedna_infos():
        if info.gvr.group == res.SEDNA_GROUP:
            names = ",".join(info.short_names)
            assert re.search(rf"^{info.gvr.resource}\s+{names}\s+sedna.io/v1alpha1\s+true\s+{info.kind}$",
                             resources, re.M), resources
    for reference in sorted((SAMPLES / "references").glob("*.yaml")):
        k.apply(reference.read_text())
    _apply_sample(k, "incrementallearningjob.yaml")
    listed = k("get", "il,dset,mdl", "-o", "name").stdout.split()
    assert "incrementallearningjob.sedna.io/helmet-detection-incremental" in listed
    assert any(name.startswith("dataset.sedna.io/") for name in listed)
    assert any(name.startswith("model.sedna.io/") for name in listed)


def _schema_paths(schema: dict, path: str = "") -> list[tuple[str, dict]]:
    out = []
    for name, prop in (schema.get("properties") or {}).items():
        sub = f"{path}.{name}" if path else name
        out.append((sub, prop))
        out.extend(_schema_paths(prop, sub))
    if isinstance(schema.get("items"), dict):
        out.extend(_schema_paths(schema["items"], f"{path}[]"))
    return out


def test_every_crd_field_has_a_description() -> None:
    from apis.sedna.crds import all_crds

    for crd in all_crds():
        schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
        missing = [p for p, prop in _schema_paths(schema) if not prop.get("description")]
        assert missing == [], f"{crd['spec']['names']['kind']}: {missing}"


@pytest.mark.sandbox(crd_dirs=[CRDS], kubelet=False)
def test_kubectl_explain_shows_the_sedna_field_descriptions(sandbox, tmp_path: Path) -> None:
    k = _kubectl(sandbox, tmp_path)
    spec = k("explain", "incrementallearningjob.spec").stdout
    assert "<no description>" not in spec, spec
    assert "The train stage: its worker and the trigger that starts it." in spec
    operator = k("explain", "il.spec.trainSpec.trigger.condition.operator").stdout
    assert "Comparison of the metric with the threshold" in operator
    recursive = k("explain", "ll", "--recursive").stdout
    assert "knowledgeBase" in recursive
    for resource in ("dset.spec", "ji.spec.edgeWorker", "fl.spec.transmitter", "objs.status.conditions",
                     "eaijob.status.replicaStatuses"):
        assert "<no description>" not in k("explain", resource).stdout, resource


POD_YAML = """\
apiVersion: v1
kind: Pod
metadata: {name: watched-pod}
spec: {containers: [{name: c, image: busybox}]}
"""


@pytest.mark.parametrize("binary", sorted({b for b in (MAIN_KUBECTL, *VERSIONED[:1], *VERSIONED[-1:]) if b},
                                          key=version_key), ids=os.path.basename)
@pytest.mark.sandbox(crd_dirs=[CRDS], kubelet=False)
def test_the_kubectl_commands_local_up_suggests_work(binary: str, sandbox, procs, tmp_path: Path) -> None:
    """Every command local_up prints: the list of all types at once, and one watch per type, which prints the
    objects and keeps watching (``get il,pods -w`` fails on every kubectl: one type per watch)."""
    k = Kubectl(binary, sandbox.kubeconfig, tmp_path / "cache")
    job = _apply_sample(k, "incrementallearningjob.yaml")
    k.apply(POD_YAML)
    for i, hint in enumerate(kubectl_hints(Path(sandbox.kubeconfig), ["il"])):
        argv = [*hint.split("    (")[0].split()[1:], f"--cache-dir={tmp_path / 'cache'}"]
        assert argv[:2] == ["--kubeconfig", sandbox.kubeconfig]
        if "-w" not in argv:
            listed = subprocess.run([binary, *argv], capture_output=True, text=True, timeout=30)
            assert listed.returncode == 0, listed.stderr
            assert f"incrementallearningjob.sedna.io/{job}" in listed.stdout and "pod/watched-pod" in listed.stdout
            continue
        watch = procs.start(f"watch-{i}", argv, program=binary)
        wanted = job if "il" in argv else "watched-pod"
        wait_for(f"kubectl {' '.join(argv[2:])} to print {wanted}", lambda name=f"watch-{i}": procs.log(name),
                 check=lambda out, wanted=wanted: wanted in out)
        assert watch.poll() is None, procs.log(f"watch-{i}")  # still watching
