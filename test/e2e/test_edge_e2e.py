"""End to end over the edge link: the sandbox API server, ``sedna-gm`` and two ``sedna-lc`` processes (``edge-1``
and ``edge-2``, each with its own rootfs, database and port).

* a Dataset on edge-1 reaches its numberOfSamples; appended lines update it; moving it to edge-2 moves it;
* ``kill -9`` of the GM while an LC reports, restart → the report lands, both LCs resync (a Dataset deleted while
  the GM was down is dropped from its node);
* ``kill -9`` of an LC, restart → it reloads from SQLite at once and no report is lost;
* a malformed frame from one peer leaves the other LCs unaffected; a wrong token is refused; the token rotates
  without a restart of the GM or the LCs.
Every wait is bounded; every process is killed at teardown.
"""

from __future__ import annotations

import shutil
import signal
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import websockets
from testkit import (
    GoLC,
    Processes,
    gm_edge_address,
    http_get,
    json_log_lines,
    metric_value,
    self_signed_cert,
    start_gm,
    start_lc,
    wait_for,
)

from apis import errors
from apis.clientset import Clientset

pytestmark = pytest.mark.e2e

NS = "default"
CHECK_PERIOD = "0.3"


@dataclass
class Edge:
    procs: Processes
    tmp: Path
    kubeconfig: str
    cs: Clientset
    gm_args: tuple[str, ...] = ()
    edge_port: int = 0  # announced by the first GM, kept by a restarted one (the LCs know it)
    gm_url: str = ""
    lc_urls: dict[str, str] = field(default_factory=dict)
    lc_ports: dict[str, int] = field(default_factory=dict)

    @property
    def gm_address(self) -> str:
        return f"127.0.0.1:{self.edge_port}"

    def start_gm(self) -> None:
        _, self.gm_url = start_gm(self.procs, "gm", self.kubeconfig, "--no-leader-elect", *self.gm_args,
                                  edge_port=self.edge_port, wait=True)
        self.edge_port = int(gm_edge_address(self.procs).rsplit(":", 1)[1])

    def rootfs(self, node: str) -> Path:
        return self.tmp / f"rootfs-{node}"

    def start_lc(self, node: str, *extra: str, wait_ready: bool = True) -> None:
        _, url = start_lc(self.procs, node, self.gm_address, self.rootfs(node), "--dataset-check-period",
                          CHECK_PERIOD, *extra, port=self.lc_ports.get(node, 0))  # a restarted LC keeps its port
        self.lc_urls[node] = url
        self.lc_ports[node] = int(url.rsplit(":", 1)[1])
        if wait_ready:
            wait_for(f"{node} connected", lambda: http_get(url + "/readyz")[0] == 200, timeout=30)

    def write(self, node: str, path: str, lines: int, append: bool = False) -> None:
        target = self.rootfs(node) / path.lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        with open(target, "a" if append else "w") as fh:
            fh.writelines(f"sample-{i}.jpg\n" for i in range(lines))

    def create_dataset(self, name: str, node: str, url: str = "/data/train.txt") -> None:
        self.cs.sedna_v1alpha1().datasets(NS).create({
            "apiVersion": "sedna.io/v1alpha1", "kind": "Dataset", "metadata": {"name": name, "namespace": NS},
            "spec": {"url": url, "format": "txt", "nodeName": node},
        })

    def samples(self, name: str) -> int | None:
        try:
            return (self.cs.sedna_v1alpha1().datasets(NS).get(name).get("status") or {}).get("numberOfSamples")
        except errors.NotFoundError:
            return None

    def wait_samples(self, name: str, count: int, timeout: float = 30) -> None:
        wait_for(f"{name} to have {count} samples", lambda: self.samples(name), timeout=timeout,
                 check=lambda v: v == count)

    def log_events(self, name: str, event: str) -> list[dict]:
        return [e for e in json_log_lines(self.procs.log(name)) if e.get("event") == event]


def make_edge(procs: Processes, tmp_path: Path, cluster: tuple[str, Clientset], *gm_args: str) -> Edge:
    kubeconfig, cs = cluster
    return Edge(procs, tmp_path, kubeconfig, cs, gm_args)


@pytest.fixture
def edge(procs: Processes, tmp_path: Path, cluster: tuple[str, Clientset]) -> Iterator[Edge]:
    e = make_edge(procs, tmp_path, cluster)
    e.start_gm()
    e.start_lc("edge-1")
    e.start_lc("edge-2")
    yield e


def test_a_dataset_is_counted_follows_appended_lines_and_moves_between_nodes(edge):
    edge.write("edge-1", "/data/train.txt", 3)
    edge.write("edge-2", "/data/train.txt", 7)
    edge.create_dataset("d1", "edge-1")
    edge.wait_samples("d1", 3)
    status = edge.cs.sedna_v1alpha1().datasets(NS).get("d1")["status"]
    assert status["updateTime"].endswith("Z")

    edge.write("edge-1", "/data/train.txt", 2, append=True)
    edge.wait_samples("d1", 5)

    ds = edge.cs.sedna_v1alpha1().datasets(NS).get("d1")
    ds["spec"]["nodeName"] = "edge-2"
    edge.cs.sedna_v1alpha1().datasets(NS).update(ds)
    edge.wait_samples("d1", 7)
    wait_for("edge-1 to drop the dataset",
             lambda: any(e.get("object") == f"{NS}/d1" for e in edge.log_events("edge-1", "deleted object")))
    edge.write("edge-1", "/data/train.txt", 50, append=True)  # no longer edge-1's: ignored
    edge.write("edge-2", "/data/train.txt", 1, append=True)
    edge.wait_samples("d1", 8)
    assert metric_value(edge.gm_url + "/metrics", "sedna_gm_edge_connected_nodes") == 2
    assert metric_value(edge.gm_url + "/metrics", "sedna_gm_edge_frames_total", direction="up",
                        operation="status") >= 4
    for node in ("edge-1", "edge-2"):
        lines = json_log_lines(edge.procs.log(node))
        assert all(e.get("node") == node for e in lines)


def test_a_gm_killed_while_an_lc_reports_gets_the_report_after_its_restart_and_both_lcs_resync(edge):
    edge.write("edge-1", "/data/train.txt", 3)
    edge.write("edge-2", "/data/other.txt", 2)
    edge.create_dataset("d1", "edge-1")
    edge.create_dataset("d2", "edge-2", url="/data/other.txt")
    edge.wait_samples("d1", 3)
    edge.wait_samples("d2", 2)

    gm = edge.procs.procs["gm"]
    gm.send_signal(signal.SIGKILL)
    gm.wait(10)
    edge.write("edge-1", "/data/train.txt", 4, append=True)  # counted and reported while the GM is gone
    wait_for("the report to wait in edge-1's outbox",
             lambda: metric_value(edge.lc_urls["edge-1"] + "/metrics", "sedna_lc_upstream_pending") == 1)
    edge.cs.sedna_v1alpha1().datasets(NS).delete("d2")  # deleted while the GM is down: no delete event later
    connected_before = {n: len(edge.log_events(n, "connected to the GM")) for n in ("edge-1", "edge-2")}

    edge.start_gm()
    edge.wait_samples("d1", 7, timeout=60)
    for node in ("edge-1", "edge-2"):
        wait_for(f"{node} to reconnect", lambda n=node: len(edge.log_events(n, "connected to the GM"))
                 > connected_before[n], timeout=60)
    wait_for("edge-2 to drop the dataset deleted while the GM was down",
             lambda: any(e.get("object") == f"{NS}/d2" for e in edge.log_events("edge-2", "deleted object")),
             timeout=30)
    wait_for("edge-1's outbox to empty",
             lambda: metric_value(edge.lc_urls["edge-1"] + "/metrics", "sedna_lc_upstream_pending") == 0)
    resyncs = [e for e in edge.log_events("gm", "node connected")]
    assert {e["node"] for e in resyncs} == {"edge-1", "edge-2"}


def test_an_lc_killed_and_restarted_reloads_from_sqlite_and_loses_no_report(edge):
    edge.write("edge-1", "/data/train.txt", 2)
    edge.create_dataset("d1", "edge-1")
    edge.wait_samples("d1", 2)

    lc = edge.procs.procs["edge-1"]
    lc.send_signal(signal.SIGKILL)
    lc.wait(10)
    edge.write("edge-1", "/data/train.txt", 3, append=True)  # changes while the LC is dead

    edge.start_lc("edge-1", wait_ready=False)
    edge.wait_samples("d1", 5)
    started = edge.log_events("edge-1", "sedna-lc started")
    assert len(started) == 2 and started[-1]["resumed"] == 1  # the dataset came from SQLite, not from the GM
    assert started[-1]["db"].endswith("var/lib/sedna/database.db")


def test_a_malformed_frame_from_one_peer_leaves_the_other_lcs_unaffected(edge):
    edge.write("edge-2", "/data/train.txt", 1)
    edge.create_dataset("d2", "edge-2")
    edge.wait_samples("d2", 1)
    rogue = GoLC(f"ws://{edge.gm_address}/", "rogue-node")
    try:
        for frame in ("{not json", '{"header": {"operation": "status"}, "content": "@@@"}',
                      '{"header": {"namespace": "default", "resourceKind": "Dataset", "resourceName": "d2", '
                      '"operation": "status"}, "content": "eyJudW1iZXJPZlNhbXBsZXMiOiA5OX0="}'):
            rogue.send_raw(frame)
        wait_for("three rejected frames", lambda: sum(
            metric_value(edge.gm_url + "/metrics", "sedna_gm_edge_rejected_frames_total", reason=r) or 0
            for r in ("not_json", "bad_base64", "not_routed")) == 3)
        assert edge.samples("d2") == 1  # the forged report about another node's dataset did not land
        edge.write("edge-2", "/data/train.txt", 1, append=True)
        edge.wait_samples("d2", 2)
        assert metric_value(edge.gm_url + "/metrics", "sedna_gm_edge_connected_nodes") == 3  # the rogue stays too
        assert all(http_get(url + "/readyz")[0] == 200 for url in edge.lc_urls.values())
        rejected = [e for e in edge.log_events("gm", "dropped a bad frame from a node")]
        assert {e["node"] for e in rejected} == {"rogue-node"} and {e["reason"] for e in rejected} == {
            "not_json", "bad_base64", "not_routed"}
    finally:
        rogue.close()


def test_a_wrong_token_is_refused(procs, tmp_path, cluster):
    token = tmp_path / "token"
    token.write_text("right-token\n")
    config = tmp_path / "gm.yaml"
    config.write_text(f"websocket:\n  tokenFile: {token}\n")
    e = make_edge(procs, tmp_path, cluster, "--config", str(config))
    e.start_gm()
    wrong = tmp_path / "wrong"
    wrong.write_text("wrong-token")
    e.start_lc("edge-1", "--token-file", str(token))
    e.start_lc("edge-2", "--token-file", str(wrong), wait_ready=False)
    wait_for("the refusal in edge-2's log", lambda: [
        x for x in e.log_events("edge-2", "the GM refused the connection") if x.get("status") == 401])
    assert http_get(e.lc_urls["edge-2"] + "/readyz")[0] == 503
    assert metric_value(e.gm_url + "/metrics", "sedna_gm_edge_rejected_connections_total", reason="unauthorized") >= 1
    assert metric_value(e.gm_url + "/metrics", "sedna_gm_edge_connected_nodes") == 1
    assert "right-token" not in procs.log("gm") and "wrong-token" not in procs.log("edge-2")


def test_the_edge_token_rotates_without_a_restart(procs, tmp_path, cluster):
    """docs/operating.md, "Rotate the edge token", with a Secret volume's files: the GM's file changes (grace 0: the
    old token is refused at once), an LC whose copy is still old is refused and connects as soon as its copy changes,
    without a restart of either; an LC connected before the rotation stays connected."""
    gm_token, lc1_token, lc2_token = (tmp_path / name for name in ("gm-token", "edge-1-token", "edge-2-token"))
    for path in (gm_token, lc1_token, lc2_token):
        path.write_text("first-token\n")
    config = tmp_path / "gm.yaml"
    config.write_text(f"websocket:\n  tokenFile: {gm_token}\n  tokenGraceSeconds: 0\n")
    e = make_edge(procs, tmp_path, cluster, "--config", str(config))
    e.start_gm()
    e.start_lc("edge-1", "--token-file", str(lc1_token))

    gm_token.write_text("second-token\n")
    e.start_lc("edge-2", "--token-file", str(lc2_token), wait_ready=False)
    wait_for("edge-2 refused with the old token", lambda: [
        x for x in e.log_events("edge-2", "the GM refused the connection") if x.get("status") == 401], timeout=30)
    lc2_token.write_text("second-token\n")  # its kubelet catches up
    wait_for("edge-2 connected with the new token", lambda: http_get(e.lc_urls["edge-2"] + "/readyz")[0] == 200,
             timeout=60)
    assert http_get(e.lc_urls["edge-1"] + "/readyz")[0] == 200
    assert metric_value(e.gm_url + "/metrics", "sedna_gm_edge_connected_nodes") == 2
    assert [x["previous_accepted_for_seconds"] for x in e.log_events("gm", "edge token changed: LCs must send the "
                                                                           "new one")] == [0.0]
    for name in ("gm", "edge-1", "edge-2"):
        assert "first-token" not in procs.log(name) and "second-token" not in procs.log(name)


def test_node_identity_a_node_token_proves_one_node_and_a_revoked_node_is_cut_off(procs, tmp_path, cluster):
    """docs/operating.md, "Edge credentials": with ``websocket.nodeTokensDir`` each LC proves its node with its own
    token. edge-2's token can neither connect as edge-1 nor report for edge-1's Dataset; deleting edge-2's file
    revokes it without a restart: its live connection is closed and it is refused from then on."""
    tokens = tmp_path / "node-tokens"
    tokens.mkdir()
    lc_tokens = {}
    for node in ("edge-1", "edge-2"):
        (tokens / node).write_text(f"token-of-{node}\n")
        lc_tokens[node] = tmp_path / f"{node}-token"
        lc_tokens[node].write_text(f"token-of-{node}\n")
    config = tmp_path / "gm.yaml"
    config.write_text(f"websocket:\n  nodeTokensDir: {tokens}\n")
    e = make_edge(procs, tmp_path, cluster, "--config", str(config))
    e.start_gm()
    e.start_lc("edge-1", "--token-file", str(lc_tokens["edge-1"]))
    e.start_lc("edge-2", "--token-file", str(lc_tokens["edge-2"]))
    e.write("edge-1", "/data/train.txt", 3)
    e.create_dataset("d1", "edge-1")
    e.wait_samples("d1", 3)

    url = f"ws://{e.gm_address}/"
    stolen = {"Authorization": "Bearer token-of-edge-2"}
    with pytest.raises(websockets.exceptions.InvalidStatus) as info:
        GoLC(url, "edge-1", headers=stolen)
    assert info.value.response.status_code == 401
    refused = e.log_events("gm", "refused a connection")
    assert [(x["node"], x["reason"], x["status"]) for x in refused] == [("edge-1", "unauthorized", 401)]
    forger = GoLC(url, "edge-2", headers=stolen)  # edge-2 itself (replacing its LC for a moment)
    try:
        forger.send_status(NS, "Dataset", "d1", {"numberOfSamples": 424242})
        wait_for("the forged report dropped", lambda: metric_value(
            e.gm_url + "/metrics", "sedna_gm_edge_rejected_frames_total", reason="not_routed") == 1)
    finally:
        forger.close()
    e.write("edge-1", "/data/train.txt", 1, append=True)
    e.wait_samples("d1", 4)  # edge-1's own LC kept reporting; the forged count never landed
    assert http_get(e.lc_urls["edge-1"] + "/readyz")[0] == 200

    wait_for("edge-2's LC back", lambda: http_get(e.lc_urls["edge-2"] + "/readyz")[0] == 200, timeout=60)
    (tokens / "edge-2").unlink()  # revoked
    wait_for("edge-2 cut off", lambda: http_get(e.lc_urls["edge-2"] + "/readyz")[0] == 503, timeout=60)
    wait_for("edge-2 refused", lambda: [
        x for x in e.log_events("edge-2", "the GM refused the connection") if x.get("status") == 401], timeout=60)
    assert http_get(e.lc_urls["edge-1"] + "/readyz")[0] == 200
    for name in ("gm", "edge-1", "edge-2"):
        assert "token-of-edge" not in procs.log(name)


def test_node_identity_with_client_certificates(procs, tmp_path, cluster):
    """``websocket.clientCAFile``: sedna-lc's ``--cert-file`` proves its node; a certificate of another node is a
    403 and the LC stays unready."""
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed")
    server_cert, server_key = self_signed_cert(tmp_path)
    certs = {}
    for node in ("edge-1", "edge-2"):
        certs[node] = (tmp_path / f"{node}.crt", tmp_path / f"{node}.key")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj",
                        f"/CN={node}", "-addext", f"subjectAltName=DNS:{node}", "-keyout", str(certs[node][1]),
                        "-out", str(certs[node][0])], check=True, capture_output=True, timeout=60)
    client_ca = tmp_path / "clients.pem"
    client_ca.write_text(certs["edge-1"][0].read_text() + certs["edge-2"][0].read_text())
    config = tmp_path / "gm.yaml"
    config.write_text(f"websocket:\n  certFile: {server_cert}\n  keyFile: {server_key}\n  clientCAFile: {client_ca}\n")
    e = make_edge(procs, tmp_path, cluster, "--config", str(config))
    e.start_gm()
    tls = ("--gm-ca-file", str(server_cert))
    e.start_lc("edge-1", *tls, "--cert-file", str(certs["edge-1"][0]), "--key-file", str(certs["edge-1"][1]))
    e.start_lc("edge-2", *tls, "--cert-file", str(certs["edge-1"][0]), "--key-file", str(certs["edge-1"][1]),
               wait_ready=False)  # edge-1's certificate
    wait_for("edge-2 refused", lambda: [
        x for x in e.log_events("edge-2", "the GM refused the connection") if x.get("status") == 403], timeout=30)
    assert http_get(e.lc_urls["edge-2"] + "/readyz")[0] == 503
    e.write("edge-1", "/data/train.txt", 2)
    e.create_dataset("d1", "edge-1")
    e.wait_samples("d1", 2)
    assert metric_value(e.gm_url + "/metrics", "sedna_gm_edge_rejected_connections_total", reason="forbidden") >= 1


def test_a_report_for_another_nodes_worker_is_refused_by_a_real_gm(procs, tmp_path, cluster):
    """Issue 38 item 1: edge-node-1 (the Dataset's node, which holds the job) relays a train worker's report for the
    worker that runs on edge-node-2, naming the LC's database as the trained model: the GM refuses it, counts it and
    logs it; edge-node-1's own report for the job still counts."""
    e = make_edge(procs, tmp_path, cluster)
    e.start_gm()
    sedna = e.cs.sedna_v1alpha1()
    sedna.datasets(NS).create({"apiVersion": "sedna.io/v1alpha1", "kind": "Dataset",
                               "metadata": {"name": "ds", "namespace": NS},
                               "spec": {"url": "/data/train.txt", "format": "txt", "nodeName": "edge-node-1"}})
    for role in ("initial", "deploy"):
        sedna.models(NS).create({"apiVersion": "sedna.io/v1alpha1", "kind": "Model",
                                 "metadata": {"name": role, "namespace": NS},
                                 "spec": {"url": f"/models/{role}/model.pb", "format": "pb"}})
    worker = {"spec": {"nodeName": "edge-node-2", "containers": [{"name": "w", "image": "worker:1"}]}}
    trigger = {"condition": {"operator": ">", "threshold": 10, "metric": "num_of_samples"}}
    sedna.incremental_learning_jobs(NS).create({
        "apiVersion": "sedna.io/v1alpha1", "kind": "IncrementalLearningJob", "metadata": {"name": "il", "namespace": NS},
        "spec": {"dataset": {"name": "ds", "trainProb": 0.8}, "initialModel": {"name": "initial"},
                 "trainSpec": {"template": worker, "trigger": trigger}, "evalSpec": {"template": worker},
                 "deploySpec": {"model": {"name": "deploy"}, "trigger": trigger, "template": worker,
                                "hardExampleMining": {"name": "IBT"}},
                 "outputDir": "/output"}})

    def states() -> list[str]:
        job = sedna.incremental_learning_jobs(NS).get("il")
        return [f"{c['stage']}/{c['type']}" for c in (job.get("status") or {}).get("conditions") or []]

    resident = GoLC(f"ws://{e.gm_address}/", "edge-node-1")
    try:
        resident.recv_until(lambda h, c: h["resourceKind"] == "incrementallearningjob" and h["operation"] == "insert")
        forged = {"phase": "train", "status": "completed", "input": None,
                  "output": {"models": [{"format": "pb", "url": "/var/lib/sedna/database.db"}], "ownerInfo": None}}
        resident.send_status(NS, "IncrementalLearningJob", "il", forged)
        wait_for("the forged report refused", lambda: metric_value(
            e.gm_url + "/metrics", "sedna_gm_edge_rejected_frames_total", reason="not_entitled") == 1)
        [refused] = e.log_events("gm", "refused a report from a node")
        assert (refused["node"], refused["reason"], refused["object"]) == ("edge-node-1", "not_entitled", f"{NS}/il")
        assert "edge-node-2" in refused["detail"]
        assert states() == ["Train/Waiting"]

        ready = {"phase": "train", "status": "ready", "output": None, "input": {
            "models": [{"format": "pb", "url": "/models/initial/model.pb"}],
            "dataURL": "/output/data/train/1/data.txt", "outputDir": "/output/train/1"}}
        resident.send_status(NS, "IncrementalLearningJob", "il", ready)  # the resident LC's own report
        wait_for("the resident node's report applied", states, check=lambda s: s[:2] == ["Train/Waiting", "Train/Ready"])
        assert "Train/Completed" not in states()
        assert metric_value(e.gm_url + "/metrics", "sedna_gm_edge_rejected_frames_total", reason="not_entitled") == 1
    finally:
        resident.close()
