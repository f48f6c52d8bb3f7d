"""The chart rendered by Helm's own engine (helm-python-sdk) for every values combination docs/operating.md shows:
``helm lint --strict`` is clean; every rendered object is created in a throwaway namespace of the sandbox with
``fieldValidation=Strict`` (unknown or mistyped fields are refused, as kube-apiserver refuses them); the GM's
ConfigMap is a config ``sedna-gm`` loads; the LC DaemonSet's command and environment are settings ``sedna-lc``
accepts; and the security, probe and placement settings the operator's guide promises are there."""

from __future__ import annotations

import base64
import hashlib
import json
import re
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
import yaml
from testkit import REPO, minimal_crd
from testkit.chart import CHART, chart_objects, find, helm, render_chart

from apis.fake.apiserver import SANDBOX_TOKEN
from apis.resources import lookup_kind
from globalmanager.config import load_config
from globalmanager.controllers import registered
from localcontroller.config import load_settings

pytestmark = pytest.mark.integration

DOC = REPO / "docs" / "operating.md"
_VALUES_BLOCK = re.compile(r"```yaml\n# helm values: ([\w-]+)\n(.*?)```", re.S)


def documented_values() -> dict[str, dict[str, Any]]:
    """Every ``# helm values: <name>`` YAML block of docs/operating.md, plus the chart's defaults."""
    cases: dict[str, dict[str, Any]] = {"defaults": {}}
    for name, body in _VALUES_BLOCK.findall(DOC.read_text()):
        cases[name] = yaml.safe_load(body) or {}
    return cases


CASES = documented_values()


def test_the_guide_shows_the_combinations_the_chart_offers() -> None:
    assert {"gm-config", "single-gm", "own-rbac", "gm-only", "tls-inline", "tls-existing", "service-monitor"} <= set(CASES)


def test_helm_lint_strict_is_clean() -> None:
    engine = helm()
    for values in CASES.values():
        result = engine.lint(str(CHART), values, strict=True, namespace="sedna")
        assert not result["errors"], result
        assert all(m["severity"] < 2 for m in result["messages"]), result  # info only (a chart icon)


def post(url: str, path: str, obj: dict[str, Any]) -> tuple[int, dict[str, Any], str]:
    request = urllib.request.Request(f"{url}{path}?fieldValidation=Strict", data=json.dumps(obj).encode(),
                                     method="POST", headers={"Content-Type": "application/json",
                                                             "Authorization": f"Bearer {SANDBOX_TOKEN}"})
    try:
        with urllib.request.urlopen(request, timeout=10) as resp:
            return resp.status, json.loads(resp.read()), resp.headers.get("Warning") or ""
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read()), ""


def collection_path(obj: dict[str, Any], namespace: str) -> str:
    info = lookup_kind(obj["apiVersion"], obj["kind"])
    prefix = f"/apis/{info.gvr.group}/{info.gvr.version}" if info.gvr.group else "/api/v1"
    scope = f"/namespaces/{namespace}" if info.namespaced else ""
    return f"{prefix}{scope}/{info.gvr.resource}"


@pytest.mark.sandbox(kubelet=False, crd_dirs=[str(CHART / "crds")])
@pytest.mark.parametrize("case", sorted(CASES))
def test_every_rendered_object_is_accepted_by_the_api_server(sandbox, case: str) -> None:
    namespace = f"chart-{case}"
    objects = chart_objects(CASES[case], release=f"r-{case}", namespace=namespace)
    assert objects
    status, body, _ = post(sandbox.url, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
                           minimal_crd("monitoring.coreos.com", "servicemonitors", "ServiceMonitor"))
    assert status == 201, body
    post(sandbox.url, "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
    for obj in objects:
        assert obj["metadata"].get("namespace", namespace) == namespace, obj["metadata"]
        status, body, warning = post(sandbox.url, collection_path(obj, namespace), obj)
        assert status == 201, (obj["kind"], obj["metadata"]["name"], body)
        assert not warning, (obj["kind"], warning)


def _mounted(tmp: Path, objects: list[dict[str, Any]], path: str) -> str:
    """Where a file the chart mounts is in ``tmp`` (written from the rendered Secret/ConfigMap when the chart makes
    it, else a stand-in for the operator's own object)."""
    local = tmp / path.lstrip("/")
    local.parent.mkdir(parents=True, exist_ok=True)
    key = Path(path).name
    for obj in objects:
        data = obj.get("data") or {}
        if obj["kind"] in ("Secret", "ConfigMap") and key in data:
            local.write_bytes(base64.b64decode(data[key]) if obj["kind"] == "Secret" else data[key].encode())
            break
    else:
        local.write_text("from the operator's own object\n")
    return str(local)


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_gm_config_is_one_sedna_gm_loads(tmp_path: Path, case: str) -> None:
    objects = chart_objects(CASES[case])
    text = find(objects, "ConfigMap", "sedna-gm-config")["data"]["gm.yaml"]
    data = yaml.safe_load(text)
    websocket = data["websocket"]
    for key in ("tokenFile", "certFile", "keyFile"):  # as the Deployment mounts them
        if key in websocket:
            websocket[key] = _mounted(tmp_path, objects, websocket[key])
    config_file = tmp_path / "gm.yaml"
    config_file.write_text(yaml.safe_dump(data))
    config = load_config(str(config_file))
    config.validate(known_controllers=registered())
    assert config.leader_election.namespace == "sedna"
    assert config.log_format == "json"
    deployment = find(objects, "Deployment")
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    assert container["command"] == ["sedna-gm", "--config", "/etc/sedna/gm/gm.yaml"]
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    assert config.websocket.port == ports["websocket"]
    assert config.metrics_address == f":{ports['metrics']}"
    if case == "gm-config":
        assert config.namespace == "ai-jobs" and config.workers == {"JointInference": 8}
        assert config.default_workers == 4 and config.min_resync_period_seconds == 60
    if case == "single-gm":
        assert not config.leader_election.enabled and deployment["spec"]["replicas"] == 1


@pytest.mark.parametrize("case", sorted(c for c in CASES if CASES[c].get("lc", {}).get("enabled", True)))
def test_the_lc_daemonset_gives_settings_sedna_lc_accepts(tmp_path: Path, case: str) -> None:
    objects = chart_objects(CASES[case])
    daemonset = find(objects, "DaemonSet")
    pod = daemonset["spec"]["template"]["spec"]
    container = pod["containers"][0]
    assert container["command"][0] == "sedna-lc"
    env: dict[str, str] = {}
    for var in container["env"]:
        if "valueFrom" in var:
            assert var["valueFrom"] == {"fieldRef": {"fieldPath": "spec.nodeName"}}
            env[var["name"]] = "edge-node-1"  # what the downward API gives
        else:
            env[var["name"]] = var["value"]
    rootfs = tmp_path / "rootfs"  # the host's / as mounted
    rootfs.mkdir()
    assert env["ROOTFS_MOUNT_DIR"] == "/rootfs"
    assert {"name": "localcontroller", "mountPath": "/rootfs"} in container["volumeMounts"]
    env["ROOTFS_MOUNT_DIR"] = str(rootfs)
    argv = []
    for arg in container["command"][1:]:
        flag, _, value = arg.partition("=")
        if flag in ("--token-file", "--gm-ca-file"):
            value = _mounted(tmp_path, objects, value)
        argv.append(f"{flag}={value}")
    config, version = load_settings(argv, env)
    assert not version and config.node_name == "edge-node-1" and config.bind_port == 9100
    gm_service = find(objects, "Service")
    assert config.gm_url.startswith(("ws://", "wss://"))
    assert f"{gm_service['metadata']['name']}.sedna:9000" in config.gm_url
    assert config.gm_url.startswith("wss://") == bool(CASES[case].get("edge", {}).get("tls", {}).get("enabled"))
    assert bool(config.token) == CASES[case].get("edge", {}).get("token", {}).get("enabled", True)


def test_the_defaults_are_what_the_guide_promises() -> None:
    objects = chart_objects()
    deployment = find(objects, "Deployment")
    pod = deployment["spec"]["template"]["spec"]
    gm = pod["containers"][0]
    assert deployment["spec"]["replicas"] == 2
    assert pod["serviceAccountName"] == "sedna"
    assert pod["securityContext"]["runAsNonRoot"] is True and pod["securityContext"]["runAsUser"] != 0
    assert gm["securityContext"] == {"allowPrivilegeEscalation": False, "readOnlyRootFilesystem": True,
                                     "privileged": False, "capabilities": {"drop": ["ALL"]}}
    assert gm["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "metrics"}
    assert gm["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "metrics"}
    assert gm["resources"]["requests"] and gm["resources"]["limits"]
    edge_term = pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert edge_term["nodeSelectorTerms"][0]["matchExpressions"][0] == {
        "key": "node-role.kubernetes.io/edge", "operator": "DoesNotExist"}
    service = find(objects, "Service")
    assert {p["name"]: p["port"] for p in service["spec"]["ports"]} == {"tcp-0": 9000, "metrics": 8080}
    assert service["spec"]["selector"] == deployment["spec"]["selector"]["matchLabels"]

    daemonset = find(objects, "DaemonSet")
    lc_pod = daemonset["spec"]["template"]["spec"]
    lc = lc_pod["containers"][0]
    assert lc_pod["hostNetwork"] is True and lc_pod["dnsPolicy"] == "ClusterFirstWithHostNet"
    assert lc_pod["automountServiceAccountToken"] is False  # the LC talks to no API server
    assert lc_pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
        "nodeSelectorTerms"][0]["matchExpressions"][0] == {"key": "node-role.kubernetes.io/edge", "operator": "Exists"}
    assert {"name": "localcontroller", "hostPath": {"path": "/"}} in lc_pod["volumes"]
    assert lc["securityContext"]["allowPrivilegeEscalation"] is False
    assert lc["securityContext"]["readOnlyRootFilesystem"] is True
    assert lc["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "worker-api"}
    assert lc["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "worker-api"}
    env = {v["name"]: v for v in lc["env"]}
    assert env["GM_ADDRESS"]["value"] == "sedna-gm.sedna:9000" and env["BIND_PORT"]["value"] == "9100"
    assert env["NODENAME"]["valueFrom"] == {"fieldRef": {"fieldPath": "spec.nodeName"}}

    # the generated token, and a checksum of it on both pod templates (a new token rolls them)
    token = base64.b64decode(find(objects, "Secret", "sedna-edge-token")["data"]["token"]).decode()
    assert len(token) == 48 and token.isalnum()
    checksum = hashlib.sha256(token.encode()).hexdigest()
    for workload in (deployment, daemonset):
        assert workload["spec"]["template"]["metadata"]["annotations"]["checksum/edge"] == checksum
    assert {o["kind"] for o in objects} == {"Secret", "ConfigMap", "Deployment", "Service", "DaemonSet",
                                            "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding",
                                            "ServiceAccount"}


def test_tls_sends_only_the_ca_to_the_edge() -> None:
    objects = chart_objects(CASES["tls-inline"])
    assert find(objects, "Secret", "sedna-edge-tls")["type"] == "kubernetes.io/tls"
    assert set(find(objects, "ConfigMap", "sedna-edge-ca")["data"]) == {"ca.crt"}
    lc_volumes = find(objects, "DaemonSet")["spec"]["template"]["spec"]["volumes"]
    assert not any((v.get("secret") or {}).get("secretName") == "sedna-edge-tls" for v in lc_volumes)
    existing = chart_objects(CASES["tls-existing"])
    assert not [o for o in existing if o["kind"] == "Secret"]  # the operator's own Secrets are referenced only
    names = {(v.get("secret") or {}).get("secretName") or (v.get("configMap") or {}).get("name")
             for v in find(existing, "DaemonSet")["spec"]["template"]["spec"]["volumes"]}
    assert {"my-edge-token", "sedna-edge-ca-bundle"} <= names


def test_the_service_monitor_scrapes_the_gm_service() -> None:
    objects = chart_objects(CASES["service-monitor"])
    monitor = find(objects, "ServiceMonitor")
    service = find(objects, "Service")
    assert monitor["spec"]["selector"]["matchLabels"].items() <= service["metadata"]["labels"].items()
    assert monitor["spec"]["endpoints"][0]["port"] in {p["name"] for p in service["spec"]["ports"]}
    assert monitor["metadata"]["labels"]["release"] == "prometheus"
    assert monitor["spec"]["endpoints"][0]["interval"] == "15s"


@pytest.mark.parametrize("values, message", [
    ({"edge": {"tls": {"enabled": True}}}, "edge.tls.enabled needs edge.tls.existingSecret"),
    ({"edge": {"tls": {"enabled": True, "cert": "c", "key": "k"}}}, "needs the CA for the LCs"),
    ({"gm": {"leaderElection": {"enabled": False}}}, "gm.replicas > 1 needs gm.leaderElection.enabled"),
])
def test_bad_values_fail_with_a_reason(values: dict[str, Any], message: str) -> None:
    engine = helm()
    with pytest.raises(engine.HelmRenderError, match=re.escape(message)):
        render_chart(values)


def test_notes_tell_how_to_find_the_leader_and_the_token() -> None:
    notes = render_chart()["sedna/templates/NOTES.txt"]
    assert "kubectl -n sedna get lease sedna-gm" in notes
    assert "kubectl -n sedna get secret sedna-edge-token" in notes
    assert "docs/operating.md" in notes
