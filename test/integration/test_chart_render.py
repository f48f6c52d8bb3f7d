"""The chart rendered by Helm's own engine (helm-python-sdk) for every values combination docs/operating.md and
docs/real-cluster.md show:
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

from apis.resources import lookup_kind
from globalmanager.config import load_config
from globalmanager.controllers import registered
from localcontroller.config import load_settings
from sandbox.apiserver import SANDBOX_TOKEN

pytestmark = pytest.mark.integration

DOCS = (REPO / "docs" / "operating.md", REPO / "docs" / "real-cluster.md")
_VALUES_BLOCK = re.compile(r"```yaml\n# helm values: ([\w-]+)\n(.*?)```", re.S)


def documented_values() -> dict[str, dict[str, Any]]:
    """Every ``# helm values: <name>`` YAML block of docs/operating.md and docs/real-cluster.md, plus the chart's
    defaults."""
    cases: dict[str, dict[str, Any]] = {"defaults": {}}
    for doc in DOCS:
        for name, body in _VALUES_BLOCK.findall(doc.read_text()):
            assert name not in cases, f"{doc.name}: a second values block named {name}"
            cases[name] = yaml.safe_load(body) or {}
    return cases


CASES = documented_values()


def test_the_guide_shows_the_combinations_the_chart_offers() -> None:
    assert {"gm-config", "single-gm", "own-rbac", "gm-only", "tls-inline", "tls-existing", "service-monitor",
            "node-tokens", "shared-token", "auth-off", "real-cluster"} <= set(CASES)


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


def _volume_files(objects: list[dict[str, Any]], volume: dict[str, Any]) -> dict[str, bytes] | None:
    """The files a Secret, ConfigMap or projected volume holds (``None`` for an object the chart does not make)."""
    sources = volume["projected"]["sources"] if "projected" in volume else [volume]
    files: dict[str, bytes] = {}
    for source in sources:
        ref = source.get("secret") or source.get("configMap")
        if ref is None:
            continue
        kind = "Secret" if "secret" in source else "ConfigMap"
        name = ref.get("secretName") or ref.get("name")
        made = [o for o in objects if o["kind"] == kind and o["metadata"]["name"] == name]
        if not made:
            if ref.get("optional"):
                continue
            return None
        data = made[0].get("data") or {}
        for item in ref.get("items") or [{"key": k, "path": k} for k in data]:
            value = data[item["key"]]
            files[item["path"]] = base64.b64decode(value) if kind == "Secret" else value.encode()
    return files


def _mounted(tmp: Path, objects: list[dict[str, Any]], pod: dict[str, Any], path: str) -> str:
    """Where a file or directory the pod ``pod`` mounts at ``path`` is in ``tmp``: written from the volume's rendered
    Secrets/ConfigMaps, or a stand-in for the operator's own object."""
    container = pod["containers"][0]
    mount = next(m for m in container["volumeMounts"] if path == m["mountPath"] or
                 path.startswith(m["mountPath"].rstrip("/") + "/"))
    volume = next(v for v in pod["volumes"] if v["name"] == mount["name"])
    root = tmp / container["name"] / mount["mountPath"].lstrip("/")
    root.mkdir(parents=True, exist_ok=True)
    files = _volume_files(objects, volume)
    if files is None:
        files = {Path(path).name: b"from the operator's own object\n"}
    for name, data in files.items():
        (root / name).write_bytes(data)
    return str(tmp / container["name"] / path.lstrip("/"))


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_gm_config_is_one_sedna_gm_loads(tmp_path: Path, case: str) -> None:
    objects = chart_objects(CASES[case])
    text = find(objects, "ConfigMap", "sedna-gm-config")["data"]["gm.yaml"]
    data = yaml.safe_load(text)
    websocket = data["websocket"]
    deployment = find(objects, "Deployment")
    for key in ("tokenFile", "certFile", "keyFile", "nodeTokensDir"):  # as the Deployment mounts them
        if key in websocket:
            websocket[key] = _mounted(tmp_path, objects, deployment["spec"]["template"]["spec"], websocket[key])
    config_file = tmp_path / "gm.yaml"
    config_file.write_text(yaml.safe_dump(data))
    config = load_config(str(config_file))
    config.validate(known_controllers=registered())
    assert config.leader_election.namespace == "sedna"
    assert config.log_format == "json"
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    assert container["command"] == ["sedna-gm", "--config", "/etc/sedna/gm/gm.yaml"]
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    assert config.websocket.port == ports["websocket"]
    assert config.metrics_address == f":{ports['metrics']}"
    assert config.health_probe_address == f":{ports['health']}"
    if case == "gm-config":
        assert config.namespace == "ai-jobs" and config.workers == {"JointInference": 8}
        assert config.default_workers == 4 and config.min_resync_period_seconds == 60
    if case == "single-gm":
        assert not config.leader_election.enabled and deployment["spec"]["replicas"] == 1


@pytest.mark.parametrize("case", sorted(c for c in CASES if CASES[c].get("lc", {}).get("enabled", True)))
def test_the_lc_daemonset_gives_settings_sedna_lc_accepts(tmp_path: Path, case: str) -> None:
    objects = chart_objects(CASES[case])
    edge = CASES[case].get("edge", {})
    daemonsets = [o for o in objects if o["kind"] == "DaemonSet"]
    assert len(daemonsets) == max(1, len(edge.get("nodes", [])))
    for daemonset in daemonsets:
        pod = daemonset["spec"]["template"]["spec"]
        pinned = pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
            "nodeSelectorTerms"][0].get("matchFields", [{"values": ["edge-node-1"]}])[0]["values"][0]
        config = _lc_settings(tmp_path / daemonset["metadata"]["name"], objects, pod, pinned)
        assert config.node_name == pinned and config.bind_port == 9100
        gm_service = find(objects, "Service")
        assert config.gm_url.startswith(("ws://", "wss://"))
        assert f"{gm_service['metadata']['name']}.sedna:9000" in config.gm_url
        assert config.gm_url.startswith("wss://") == bool(edge.get("tls", {}).get("enabled"))
        assert bool(config.token) == (bool(edge.get("nodes")) or edge.get("token", {}).get("enabled", True))


def _lc_settings(tmp_path: Path, objects: list[dict[str, Any]], pod: dict[str, Any], node: str) -> Any:
    """The settings ``sedna-lc`` loads from the pod's command and environment on node ``node``."""
    container = pod["containers"][0]
    assert container["command"][0] == "sedna-lc"
    env: dict[str, str] = {}
    for var in container["env"]:
        if "valueFrom" in var:
            assert var["valueFrom"] == {"fieldRef": {"fieldPath": "spec.nodeName"}}
            env[var["name"]] = node  # what the downward API gives
        else:
            env[var["name"]] = var["value"]
    rootfs = tmp_path / "rootfs"  # the host's / as mounted
    rootfs.mkdir(parents=True)
    assert env["ROOTFS_MOUNT_DIR"] == "/rootfs"
    assert {"name": "localcontroller", "mountPath": "/rootfs"} in container["volumeMounts"]
    env["ROOTFS_MOUNT_DIR"] = str(rootfs)
    argv = []
    for arg in container["command"][1:]:
        flag, _, value = arg.partition("=")
        if flag in ("--token-file", "--gm-ca-file"):
            value = _mounted(tmp_path, objects, pod, value)
        argv.append(f"{flag}={value}")
    config, version = load_settings(argv, env)
    assert not version
    return config


def test_node_identity_gives_each_lc_only_its_own_token(tmp_path: Path) -> None:
    values = CASES["node-tokens"]
    objects = chart_objects(values)
    nodes = [n if isinstance(n, str) else n["name"] for n in values["edge"]["nodes"]]
    assert not [o for o in objects if o["kind"] == "Secret" and o["metadata"]["name"] == "sedna-edge-token"]
    tokens = {node: base64.b64decode(find(objects, "Secret", f"sedna-lc-token-{node}")["data"]["token"]).decode()
              for node in nodes}
    assert len(set(tokens.values())) == len(nodes)
    assert all(len(t) == 48 and t.isalnum() for t in tokens.values())
    for node in nodes:
        daemonset = find(objects, "DaemonSet", f"sedna-lc-{node}")
        pod = daemonset["spec"]["template"]["spec"]
        assert daemonset["spec"]["selector"]["matchLabels"]["sedna.io/node"] == node
        assert pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] == {
            "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}]}
        secrets = [v["secret"]["secretName"] for v in pod["volumes"] if "secret" in v]
        assert secrets == [f"sedna-lc-token-{node}"]  # this node's token only
        config = _lc_settings(tmp_path / node, objects, pod, node)
        assert config.token == tokens[node]
    # the GM: every node's token as a file named after the node, read by the config sedna-gm loads
    deployment = find(objects, "Deployment")
    gm_pod = deployment["spec"]["template"]["spec"]
    websocket = yaml.safe_load(find(objects, "ConfigMap", "sedna-gm-config")["data"]["gm.yaml"])["websocket"]
    assert "tokenFile" not in websocket
    directory = Path(_mounted(tmp_path / "gm", objects, gm_pod, websocket["nodeTokensDir"]))
    assert {p.name: p.read_text() for p in directory.iterdir()} == tokens
    projected = next(v for v in gm_pod["volumes"] if v["name"] == "edge-node-tokens")["projected"]["sources"]
    assert all(s["secret"]["optional"] is True for s in projected)  # a deleted node Secret revokes, never blocks
    given = chart_objects({"edge": {"nodes": [{"name": "edge-node-1", "token": "my-own-token"}]}})
    assert base64.b64decode(find(given, "Secret", "sedna-lc-token-edge-node-1")["data"]["token"]) == b"my-own-token"


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
    # the probes on their own port: no load on the metrics port delays them
    assert gm["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "health"}
    assert gm["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "health"}
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
    # the probes on their own port: no load on the worker API delays them
    assert lc["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "health"}
    assert lc["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "health"}
    assert {p["name"]: p["containerPort"] for p in lc["ports"]} == {"worker-api": 9100, "health": 9101}
    assert "--health-probe-address=0.0.0.0:9101" in lc["command"]
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
    ({"edge": {"nodes": ["Edge_1"]}}, 'edge.nodes: "Edge_1" is not a node name'),
    ({"edge": {"nodes": ["edge-1", {"name": "edge-1"}]}}, 'edge.nodes: "edge-1" is listed twice'),
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


def test_credential_volumes_are_readable_by_their_owner_only() -> None:
    """Issue 38 item 7: the tokens and the TLS key were mounted 0644 (the Secret volume default); 0400 now (kubelet
    adds group read for a pod's fsGroup, which the GM runs in), in every combination the guide shows."""
    credentials = []
    for case, values in sorted(CASES.items()):
        for obj in chart_objects(values):
            if obj["kind"] not in ("Deployment", "DaemonSet"):
                continue
            for volume in obj["spec"]["template"]["spec"]["volumes"]:
                sources = volume["projected"]["sources"] if "projected" in volume else [volume]
                if any("secret" in source for source in sources):
                    mode = (volume.get("projected") or volume.get("secret") or {}).get("defaultMode")
                    credentials.append((case, obj["metadata"]["name"], volume["name"], mode))
    assert {c[2] for c in credentials} == {"edge-token", "edge-node-tokens", "edge-tls"}
    assert [c for c in credentials if c[3] != 0o400] == [], credentials
