"""docs/operating.md's metrics table is what a running ``sedna-gm`` and ``sedna-lc`` export: scraped from real
processes (a job run and an LC connected, so that labelled series exist), every metric family of the project (not
the Prometheus client's ``process_*``/``python_*``, nor the ``*_created`` series it adds) is in the table with its
program and type, and every label seen on a sample is a documented label."""

from __future__ import annotations

import re

import pytest
from prometheus_client.parser import text_string_to_metric_families
from testkit import (
    REPO,
    create_job,
    gm_edge_address,
    http_get,
    job_phase,
    start_gm,
    start_lc,
    wait_for,
)

pytestmark = pytest.mark.e2e

DOC = REPO / "docs" / "operating.md"
_ROW = re.compile(r"^\| `([a-z_]+)` \| (GM|LC) \| (counter|gauge|histogram) \|([^|]*)\|", re.M)


def documented() -> dict[str, tuple[str, str, set[str]]]:
    """metric → (program, type, labels) from the table."""
    rows = {}
    for name, program, kind, labels in _ROW.findall(DOC.read_text()):
        rows[name] = (program, kind, set(re.findall(r"`(\w+)`", labels)))
    return rows


def exported(url: str) -> dict[str, tuple[str, set[str]]]:
    """metric (as exposed: counters with ``_total``) → (type, labels seen on its samples)."""
    status, text = http_get(url + "/metrics")
    assert status == 200
    out: dict[str, tuple[str, set[str]]] = {}
    for family in text_string_to_metric_families(text):
        if family.name.startswith(("process_", "python_")) or family.name.endswith("_created"):
            continue
        name = family.name + "_total" if family.type == "counter" else family.name
        labels = {k for s in family.samples if not s.name.endswith("_created") for k in s.labels if k != "le"}
        out[name] = (family.type, labels)
    return out


def test_the_metrics_table_is_what_the_programs_export(procs, cluster, tmp_path):
    kubeconfig, cs = cluster
    _, gm_url = start_gm(procs, "gm", kubeconfig, "--no-leader-elect", wait=True)
    _, lc_url = start_lc(procs, "edge-1", gm_edge_address(procs), tmp_path / "rootfs")
    wait_for("the LC connected", lambda: http_get(lc_url + "/readyz")[0] == 200, timeout=30)
    create_job(cs, "metrics")
    wait_for("the job to succeed", lambda: job_phase(cs, "metrics") == "Succeeded", timeout=30)

    table = documented()
    for program, url in (("GM", gm_url), ("LC", lc_url)):
        metrics = exported(url)
        rows = {name: row for name, row in table.items() if row[0] == program}
        assert set(metrics) == set(rows), (f"{program}: exported but not documented: {sorted(set(metrics) - set(rows))}; "
                                           f"documented but not exported: {sorted(set(rows) - set(metrics))}")
        for name, (kind, labels) in metrics.items():
            assert kind == rows[name][1], (name, kind, rows[name])
            assert labels <= rows[name][2], (name, labels, rows[name])
    assert exported(gm_url)["sedna_gm_controller_sync_total"][1] == {"controller", "result"}  # samples were seen
