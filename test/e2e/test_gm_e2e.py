"""End to end: real ``sedna-gm`` processes against a sandbox API server process.

* one job to Succeeded, /metrics, /healthz, /readyz, SIGTERM → exit 0;
* two replicas with leader election: one leads, SIGKILL it, the other takes over the lease and runs the job.
Every wait is bounded; every process is killed at teardown.
"""

from __future__ import annotations

import json
import signal
import urllib.error
import urllib.request

import pytest
from testkit import create_job, http_get, job_phase, json_log_lines, lease_holder, start_gm, wait_for

pytestmark = pytest.mark.e2e


def test_gm_runs_a_job_serves_probes_and_metrics_and_exits_0_on_sigterm(procs, cluster):
    kubeconfig, cs = cluster
    gm, url = start_gm(procs, "gm", kubeconfig, "--no-leader-elect")
    wait_for("/readyz", lambda: http_get(url + "/readyz")[0] == 200, timeout=30)
    assert http_get(url + "/healthz") == (200, "ok\n")
    create_job(cs, "mnist")
    wait_for("the job to succeed", lambda: job_phase(cs, "mnist") == "Succeeded", timeout=30)
    with urllib.request.urlopen(url + "/metrics", timeout=3) as resp:
        code, content_type, metrics = resp.status, resp.headers["Content-Type"], resp.read().decode()
    assert code == 200 and content_type.startswith("text/plain") and "version=" in content_type
    assert "process_cpu_seconds_total" in metrics and "process_resident_memory_bytes" in metrics
    assert 'workqueue_adds_total{name="ElasticAIJob"}' in metrics
    assert 'sedna_gm_controller_sync_total{controller="ElasticAIJob",result="success"}' in metrics
    assert "sedna_gm_controller_sync_duration_seconds_bucket" in metrics
    gm.send_signal(signal.SIGTERM)
    assert gm.wait(20) == 0, procs.log("gm")
    assert '"signal received: shutting down"' in procs.log("gm")
    entries = json_log_lines(procs.log("gm"))
    sync_lines = [e for e in entries if e.get("event") in ("created master pod", "job phase changed")]
    assert sync_lines, "no sync-path log line found"
    for entry in sync_lines:
        assert entry.get("controller") == "ElasticAIJob" and entry.get("key") == "default/mnist", entry
    # every controller's informers listing at once never overflow the clientset's connection pool
    assert not [e for e in entries if "Connection pool is full" in e.get("event", "")]


def test_gm_keeps_retrying_while_the_api_server_is_unreachable(procs, tmp_path):
    config = tmp_path / "gm.yaml"
    config.write_text("leaderElection: {leaseDuration: 3, renewDeadline: 2, retryPeriod: 0.2}\n")
    gm, url = start_gm(procs, "gm-dead", None, "--master", "http://127.0.0.1:1", "--config", str(config),
                       env={"KUBECONFIG": str(tmp_path / "no-kubeconfig")})
    wait_for("/healthz", lambda: http_get(url + "/healthz")[0] == 200, timeout=30)
    wait_for("repeated lease attempts",
             lambda: procs.log("gm-dead").count('"lease request failed"') >= 3, timeout=30)
    assert gm.poll() is None, procs.log("gm-dead")  # still running, still retrying
    assert http_get(url + "/healthz")[0] == 200
    code, body = http_get(url + "/readyz/controllers")
    assert code == 503 and "lease" in body
    gm.send_signal(signal.SIGTERM)
    assert gm.wait(20) == 0, procs.log("gm-dead")
    entries = json_log_lines(procs.log("gm-dead"))
    failures = [e for e in entries if e.get("event") == "lease request failed"]
    assert failures and all(e["level"] == "warning" and "connection refused" in e["error"] for e in failures)
    assert not any("Traceback" in json.dumps(e) for e in entries)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_before_the_caches_synced_is_a_clean_prompt_stop(procs, tmp_path, sig):
    gm, url = start_gm(procs, "gm-unsynced", None, "--master", "http://127.0.0.1:1", "--no-leader-elect",
                       env={"KUBECONFIG": str(tmp_path / "no-kubeconfig")})
    wait_for("/healthz", lambda: http_get(url + "/healthz")[0] == 200, timeout=30)
    # the HTTP server is up before the controllers are built: wait for them to be waiting for their caches
    code, body = wait_for("/readyz to report unsynced caches", lambda: http_get(url + "/readyz"),
                          check=lambda answer: "caches not synced" in answer[1], timeout=30)
    assert code == 503
    gm.send_signal(sig)
    assert gm.wait(20) == 0, procs.log("gm-unsynced")
    entries = json_log_lines(procs.log("gm-unsynced"))
    assert any(e.get("event") == "signal received: shutting down" and e.get("signal") == sig.name for e in entries)
    assert not any("Traceback" in json.dumps(e) for e in entries)


def test_standby_takes_over_when_the_leader_is_killed(procs, cluster, tmp_path):
    kubeconfig, cs = cluster
    config = tmp_path / "gm.yaml"
    config.write_text("leaderElection: {leaseDuration: 3, renewDeadline: 2, retryPeriod: 0.5}\nshutdownTimeoutSeconds: 5\n")
    gms = {}
    for ident in ("gm-a", "gm-b"):
        gms[ident] = start_gm(procs, ident, kubeconfig, "--config", str(config), "--leader-elect",
                              "--leader-elect-identity", ident)
    leader = wait_for("a leader", lambda: lease_holder(cs), timeout=30)
    standby = "gm-b" if leader == "gm-a" else "gm-a"
    for ident in gms:  # the standby is healthy and ready too
        wait_for(f"{ident} /readyz", lambda ident=ident: http_get(gms[ident][1] + "/readyz")[0] == 200, timeout=30)
        assert http_get(gms[ident][1] + "/healthz")[0] == 200
    assert "standing by" in http_get(gms[standby][1] + "/readyz/controllers")[1]

    gms[leader][0].send_signal(signal.SIGKILL)
    gms[leader][0].wait(10)
    # the lease expires 3 s after the standby last saw it change; allow generous slack
    wait_for("the standby to take over", lambda: lease_holder(cs) == standby, timeout=20)
    spec = cs.coordination_v1().leases("sedna").get("sedna-gm")["spec"]
    assert spec["leaseTransitions"] >= 1
    create_job(cs, "after-failover")
    wait_for("the new leader to run the job", lambda: job_phase(cs, "after-failover") == "Succeeded", timeout=30)

    gms[standby][0].send_signal(signal.SIGTERM)
    assert gms[standby][0].wait(20) == 0, procs.log(standby)
    assert lease_holder(cs) == ""  # released on shutdown
