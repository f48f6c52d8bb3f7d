"""RBAC proven with the code: ``sedna-gm`` runs with the chart's ServiceAccount token against the sandbox API server
in RBAC mode, with the ServiceAccount, ClusterRole/Binding and the lease Role/Binding rendered from the chart's
templates by Helm's engine, its config file from the chart's ConfigMap and the node tokens from the chart's per-node
Secrets (``edge.nodes``: node identity).

* every registered controller goes through its flow (``testkit.flows.FLOWS``: its sample applied, the work done,
  workers deleted from under it and recreated, its spec changed, conflicts answered, the object deleted) and the
  sandbox refused nothing to the GM's user;
* every verb the chart grants was used by those flows (nothing granted beyond what the code calls, no exemption);
* with ``create`` taken off ``pods``, the sandbox answers kube's 403 and the GM says so: a log line naming the
  controller, the job and the refused request, and a Warning Event ``FailedCreate`` on the job; with the verb back,
  the job goes on.

Two LocalControllers (``edge-node-1``, ``edge-node-2``, the samples' nodes) connect, each with its own token from the
chart (and one node's token cannot connect as the other), and the
worker simulator plays the workers. The LC talks to no API server (its DaemonSet mounts no ServiceAccount token), so
it has no RBAC to prove.
"""

from __future__ import annotations

import base64
import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import websockets
import yaml
from kubernetes import client
from testkit import (
    GoLC,
    Processes,
    gm_edge_address,
    http_get,
    json_log_lines,
    metric_value,
    start_gm,
    start_lc,
    start_workersim,
    wait_for,
)
from testkit.chart import CHART, NAMESPACE, chart_objects, find
from testkit.flows import FLOWS, FlowRun, load_sample

from apis import errors, meta
from apis.clientset import Clientset
from apis.resources import CLUSTER_ROLES, EVENTS, lookup_kind
from globalmanager.controllers import registered
from sandbox.apiserver import SandboxAPIServer

pytestmark = pytest.mark.e2e

SA_USER = f"system:serviceaccount:{NAMESPACE}:sedna"
NODES = ("edge-node-1", "edge-node-2")
FLOW_TIMEOUT = 60


@dataclass
class Cluster:
    server: SandboxAPIServer
    cs: Clientset  # the admin's
    procs: Processes
    gm_url: str
    rootfs: dict[str, Path]
    objects: list[dict[str, Any]]  # what the chart rendered
    flows_done: set[str]
    edge_port: int
    token_files: dict[str, Path]  # each LC's own token


def _create_rendered(cs: Clientset, objects: list[dict[str, Any]], kinds: tuple[str, ...]) -> None:
    for obj in objects:
        if obj["kind"] in kinds:
            info = lookup_kind(obj["apiVersion"], obj["kind"])
            cs.resource(info.gvr, obj["metadata"].get("namespace", "") if info.namespaced else "").create(obj)


def _service_account_token(server: SandboxAPIServer, admin_kubeconfig: Path) -> str:
    """A token of the chart's ServiceAccount through the TokenRequest API, as ``kubectl create token`` asks it."""
    from kubernetes import config

    cfg = client.Configuration()
    config.load_kube_config(config_file=str(admin_kubeconfig), client_configuration=cfg)
    with client.ApiClient(cfg) as api:
        answer = client.CoreV1Api(api).create_namespaced_service_account_token(
            "sedna", NAMESPACE, client.AuthenticationV1TokenRequest(spec=client.V1TokenRequestSpec(audiences=[])))
    return answer.status.token


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    tmp = tmp_path_factory.mktemp("chart-rbac")
    objects = chart_objects({"edge": {"nodes": list(NODES)}})
    server = SandboxAPIServer(crd_dirs=[CHART / "crds"], rbac=True).start()
    procs = Processes(tmp)
    try:
        admin_kubeconfig = server.write_kubeconfig(tmp / "admin.kubeconfig")
        cs = Clientset.from_kubeconfig(str(admin_kubeconfig))
        cs.core_v1().namespaces().create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}})
        _create_rendered(cs, objects, ("ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"))
        sa_kubeconfig = server.write_kubeconfig(tmp / "gm.kubeconfig", token=_service_account_token(server, admin_kubeconfig))

        # the GM's config file and the node tokens, as the chart mounts them (a file per node in the GM, each LC its own)
        tokens_dir = tmp / "edge-node-tokens"
        tokens_dir.mkdir()
        token_files: dict[str, Path] = {}
        for node in NODES:
            token = base64.b64decode(find(objects, "Secret", f"sedna-lc-token-{node}")["data"]["token"])
            (tokens_dir / node).write_bytes(token)
            token_files[node] = tmp / f"token-{node}"
            token_files[node].write_bytes(token)
        gm_config = yaml.safe_load(find(objects, "ConfigMap", "sedna-gm-config")["data"]["gm.yaml"])
        assert gm_config["websocket"]["nodeTokensDir"] == "/etc/sedna/edge-node-tokens"
        assert "tokenFile" not in gm_config["websocket"]
        gm_config["websocket"]["nodeTokensDir"] = str(tokens_dir)
        # the chart's lease timings, shortened so that a GM restarted by a test does not wait 15 s for its lease
        gm_config["leaderElection"].update(leaseDuration=4, renewDeadline=3, retryPeriod=0.5)
        config_file = tmp / "gm.yaml"
        config_file.write_text(yaml.safe_dump(gm_config))
        gm, gm_url = start_gm(procs, "gm", str(sa_kubeconfig), "--config", str(config_file), wait=True, timeout=60)
        edge_port = int(gm_edge_address(procs).rsplit(":", 1)[1])

        rootfs: dict[str, Path] = {}
        lc_urls: dict[str, str] = {}
        for node in NODES:
            rootfs[node] = tmp / node
            _, lc_urls[node] = start_lc(procs, node, f"127.0.0.1:{edge_port}", rootfs[node], "--token-file",
                                        str(token_files[node]), "--dataset-check-period", "0.5")
        for node in NODES:
            wait_for(f"LC {node} connected", lambda node=node: http_get(lc_urls[node] + "/readyz")[0] == 200,
                     timeout=30)
        start_workersim(procs, admin_kubeconfig, lc_urls, rootfs)
        yield Cluster(server, cs, procs, gm_url, rootfs, objects, set(), edge_port, token_files)
        cs.close()
    finally:
        procs.cleanup()
        server.stop()


def _denials(server: SandboxAPIServer) -> list[str]:
    return [d.message for d in server.access.denials(SA_USER)]


_namespaces = itertools.count()


def _namespace(cluster: Cluster, prefix: str) -> str:
    ns = f"{prefix}-{next(_namespaces)}"
    cluster.cs.core_v1().namespaces().create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    return ns


@pytest.mark.parametrize("controller", registered())
def test_every_controller_runs_its_flow_with_the_charts_rbac(cluster: Cluster, controller: str) -> None:
    flow = FLOWS.get(controller)
    if flow is None:
        pytest.fail(f"controller {controller!r} has no flow: add its sample to charts/sedna/samples/ and a Flow "
                    f"to FLOWS in test/testkit/flows/, so that the chart's RBAC is proven for it")
    denied_before = cluster.server.access.denied(SA_USER)
    ns = _namespace(cluster, f"flow-{controller.lower()}")
    obj = flow.object_for(cluster.cs, ns, cluster.rootfs)
    objects = cluster.cs.resource(lookup_kind(obj["apiVersion"], obj["kind"]).gvr, ns)
    run = FlowRun(cluster.cs, ns, obj, cluster.gm_url, controller, gm_log=lambda: cluster.procs.log("gm"),
                  rootfs=cluster.rootfs, faults=cluster.server.faults)
    if flow.setup is not None:
        flow.setup(run)
    run.baseline = run.queued()
    run.obj = objects.create(obj)

    def no_denial() -> None:
        assert cluster.server.access.denied(SA_USER) == denied_before, _denials(cluster.server)

    def carried_out(what: str, done: Any) -> None:
        try:
            wait_for(what, lambda: done(run) or cluster.server.access.denied(SA_USER) > denied_before,
                     timeout=FLOW_TIMEOUT)
        except AssertionError as exc:  # say where the flow stands
            raise AssertionError(f"{exc}\nstatus: {run.status()}\nGM log of the object: "
                                 f"{[e for e in json_log_lines(run.gm_log()) if e.get('key') == run.key]}") from None
        no_denial()

    carried_out(f"{controller} to do its work on {ns}/{meta.name(obj)}", flow.done)
    for number, step in enumerate(flow.steps, 1):
        if step.change is not None:
            def change(step=step) -> None:
                current = run.current()
                step.change(current)
                objects.update(current)
            _retry_conflict(change)
        if step.action is not None:
            step.action(run)
        carried_out(f"{controller} to carry out step {number}", step.done)
    objects.delete(meta.name(obj))
    wait_for("the object to go", lambda: _gone(objects, meta.name(obj)), timeout=30)
    # whatever the GM does about the deletion is queued now: wait until its controller's queue is empty
    wait_for(f"{controller}'s work queue to drain", run.idle, timeout=30)
    no_denial()
    assert cluster.procs.procs["gm"].poll() is None, cluster.procs.log("gm")
    cluster.flows_done.add(controller)


def _retry_conflict(fn: Any) -> None:
    for _ in range(10):
        try:
            fn()
            return
        except errors.ConflictError:
            continue
    fn()


def _gone(objects: Any, name: str) -> bool:
    try:
        objects.get(name)
    except errors.NotFoundError:
        return True
    return False


def _grants(objects: list[dict[str, Any]]) -> set[tuple[str, str, str]]:
    granted = set()
    for kind in ("ClusterRole", "Role"):
        for rule in find(objects, kind)["rules"]:
            granted |= set(itertools.product(rule["apiGroups"], rule["resources"], rule["verbs"]))
    return granted


def test_the_chart_grants_nothing_the_flows_did_not_use(cluster: Cluster) -> None:
    missing = set(registered()) - cluster.flows_done
    if missing:
        pytest.skip(f"the flows of {sorted(missing)} did not run in this session")
    used = cluster.server.access.usage(SA_USER)
    unused = sorted(_grants(cluster.objects) - used)
    assert not unused, f"granted by the chart but never used by sedna-gm: {unused}; used: {sorted(used)}"


def test_a_verb_taken_away_is_a_403_the_gm_reports_and_giving_it_back_heals(cluster: Cluster) -> None:
    roles = cluster.cs.resource(CLUSTER_ROLES)
    original = roles.get("sedna")
    reduced = meta.deep_copy(original)
    pods_rule = next(r for r in reduced["rules"] if r["resources"] == ["pods"])
    pods_rule["verbs"] = [v for v in pods_rule["verbs"] if v != "create"]
    roles.update(reduced)
    ns = _namespace(cluster, "denied")
    job = load_sample("elasticaijob.yaml")
    job["metadata"].update(namespace=ns, annotations={"sandbox.sedna.io/run-seconds": "1"})
    jobs = cluster.cs.resource(lookup_kind(job["apiVersion"], job["kind"]).gvr, ns)
    try:
        jobs.create(job)
        expected = (f'pods is forbidden: User "{SA_USER}" cannot create resource "pods" in API group "" in the '
                    f'namespace "{ns}"')
        denial = wait_for("the sandbox to refuse the master pod", lambda: next(
            (d for d in cluster.server.access.denials(SA_USER) if d.attributes.namespace == ns), None), timeout=30)
        assert denial.message == expected
        assert (denial.attributes.verb, denial.attributes.resource) == ("create", "pods")
        key = f"{ns}/mnist-training"

        def gm_said_so() -> dict[str, Any] | None:
            lines = [e for e in json_log_lines(cluster.procs.log("gm")) if e.get("key") == key]
            return next((e for e in lines if e.get("event") == "sync failed, requeueing"), None)

        line = wait_for("the GM to log the refused creation", gm_said_so, timeout=30)
        assert line["controller"] == "ElasticAIJob" and line["level"] == "warning" and line["error"] == expected
        events = cluster.cs.resource(EVENTS, ns)

        def failed_create() -> dict[str, Any] | None:
            return next((e for e in events.list()["items"] if e.get("reason") == "FailedCreate"), None)

        event = wait_for("a FailedCreate Event on the job", failed_create, timeout=30)
        assert event["type"] == "Warning" and event["involvedObject"]["name"] == "mnist-training"
        assert event["message"] == f"error creating master pod elasticdl-mnist-training-master: {expected}"
    finally:
        current = roles.get("sedna")
        current["rules"] = original["rules"]
        roles.update(current)
    # the key is retried with backoff: the job goes on once the verb is back
    wait_for("the job to succeed once pods may be created again",
             lambda: (jobs.get("mnist-training").get("status") or {}).get("phase") == "Succeeded", timeout=60)


def test_a_nodes_chart_token_cannot_connect_as_another_node(cluster: Cluster) -> None:
    url = f"ws://127.0.0.1:{cluster.edge_port}/"
    other = cluster.token_files[NODES[1]].read_text().strip()
    with pytest.raises(websockets.exceptions.InvalidStatus) as info:
        GoLC(url, NODES[0], headers={"Authorization": f"Bearer {other}"})
    assert info.value.response.status_code == 401
    refused = metric_value(cluster.gm_url + "/metrics", "sedna_gm_edge_rejected_connections_total",
                           reason="unauthorized")
    assert refused is not None and refused >= 1
