"""Leader election over real HTTP against a slow sandbox: every request takes 700 ms, a good part of a 2 s round.

Each lease request must get the time left of its attempt (bounded by the renew deadline), not a slice of the retry
period, so that a candidate acquires the lease and keeps renewing it."""

from __future__ import annotations

import threading

from testkit import wait_for

from apis.clientset import Clientset
from globalmanager.leaderelection import LeaderCallbacks, LeaderElector

NS, NAME = "kube-system", "sedna-gm"


def test_a_candidate_leads_and_renews_when_every_request_takes_700ms(sandbox):
    sandbox.faults.latency_ms = 700
    cs = Clientset.from_kubeconfig(sandbox.kubeconfig)
    leading = threading.Event()
    elector = LeaderElector(cs, NAME, NS, LeaderCallbacks(lambda stop: leading.set(), lambda: None), identity="a",
                            lease_duration=15, renew_deadline=10, retry_period=2)
    stop = threading.Event()
    t = threading.Thread(target=elector.run, args=(stop,))
    t.start()
    try:
        assert leading.wait(30), "never led with 700 ms of API latency"
        first = cs.coordination_v1().leases(NS).get(NAME)["spec"]["renewTime"]
        wait_for("a renewal", lambda: cs.coordination_v1().leases(NS).get(NAME)["spec"]["renewTime"] != first,
                 timeout=30, interval=0.5)
        assert elector.leading and elector.lease_round_status() == (True, "")
    finally:
        stop.set()
        t.join(30)
        cs.close()
    assert not t.is_alive()
