"""A Dataset whose URL does not exist on its node (issue 27 item 8), with the sandbox API server, a real ``sedna-gm``
and a real ``sedna-lc``: the LC's error reaches the Dataset as the condition ``Ready=False`` (reason
``URLNotFound``) and a Warning Event, as ``kubectl describe`` shows them; once the file appears the count is reported
and the condition turns True."""

from __future__ import annotations

from pathlib import Path

import pytest
from testkit import Processes, gm_edge_address, http_get, start_gm, start_lc, wait_for
from testkit.kubectl import MAIN_KUBECTL, Kubectl

from apis.clientset import Clientset

pytestmark = pytest.mark.e2e

NS = "default"


def ready_condition(cs: Clientset, name: str) -> dict | None:
    status = cs.sedna_v1alpha1().datasets(NS).get(name).get("status") or {}
    return next((c for c in status.get("conditions") or [] if c.get("type") == "Ready"), None)


def events(cs: Clientset, name: str) -> list[tuple[str, str]]:
    return [(e["type"], e["reason"]) for e in cs.core_v1().events(NS).list()["items"]
            if e["involvedObject"].get("name") == name and e["involvedObject"].get("kind") == "Dataset"]


def test_a_missing_url_shows_on_the_dataset_and_clears_once_the_file_appears(procs: Processes, tmp_path: Path,
                                                                              cluster: tuple[str, Clientset]):
    kubeconfig, cs = cluster
    start_gm(procs, "gm", kubeconfig, "--no-leader-elect", wait=True)
    rootfs = tmp_path / "rootfs-edge-1"
    _, lc_url = start_lc(procs, "edge-1", gm_edge_address(procs), rootfs, "--dataset-check-period", "0.3")
    wait_for("edge-1 connected", lambda: http_get(lc_url + "/readyz")[0] == 200, timeout=30)

    cs.sedna_v1alpha1().datasets(NS).create({
        "apiVersion": "sedna.io/v1alpha1", "kind": "Dataset", "metadata": {"name": "d1", "namespace": NS},
        "spec": {"url": "/data/missing.txt", "format": "txt", "nodeName": "edge-1"},
    })
    ready = wait_for("Ready=False on the Dataset", lambda: ready_condition(cs, "d1"),
                     check=lambda c: c is not None and c["status"] == "False")
    assert ready["reason"] == "URLNotFound"
    assert ready["message"] == "node edge-1: /data/missing.txt: does not exist or is not a file"
    wait_for("the Warning Event", lambda: events(cs, "d1"), check=lambda e: ("Warning", "URLNotFound") in e)
    if MAIN_KUBECTL is not None:
        described = Kubectl(MAIN_KUBECTL, kubeconfig, tmp_path / "kubectl-cache")("describe", "dataset", "d1").stdout
        assert "URLNotFound" in described and "does not exist or is not a file" in described
        assert any(line.split()[:2] == ["Warning", "URLNotFound"] for line in described.splitlines())

    target = rootfs / "data/missing.txt"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("a.jpg\nb.jpg\nc.jpg\n")
    ready = wait_for("Ready=True on the Dataset", lambda: ready_condition(cs, "d1"),
                     check=lambda c: c is not None and c["status"] == "True")
    assert ready["reason"] == "SamplesCounted"
    assert cs.sedna_v1alpha1().datasets(NS).get("d1")["status"]["numberOfSamples"] == 3
    wait_for("the Normal Event", lambda: events(cs, "d1"), check=lambda e: ("Normal", "SamplesCounted") in e)
    [warning] = [e for e in cs.core_v1().events(NS).list()["items"] if e["reason"] == "URLNotFound"]
    assert warning.get("count", 1) == 1  # once, not once per check period
