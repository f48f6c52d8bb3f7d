"""Leader election when answers get lost or writes are refused: a write the server applied without us hearing back is
read back and counted; a candidate that cannot write its lease (namespace missing, forbidden) reports why and is not
healthy; the lease namespace defaults to the pod's own."""

from __future__ import annotations

import pytest
from lease_test_helpers import NAME, NS, FakeClock, lease

from apis import errors
from apis.fake import FakeClientset
from apis.http_transport import ApiConnectionTimeoutError
from globalmanager.app import GlobalManager
from globalmanager.config import GMConfig, default_lease_namespace
from globalmanager.leaderelection import LeaderCallbacks, LeaderElector

CALLBACKS = LeaderCallbacks(lambda s: None, lambda: None)


def answer_lost(cs, verb, apply=True):
    """A reactor: the ``verb`` request reaches the server (applied when ``apply``) but its answer never arrives."""
    state = {"passing": False, "lost": 0}

    def react(action):
        if state["passing"]:
            return False, None, None
        if apply:
            state["passing"] = True
            try:
                client = cs.coordination_v1().leases(action.namespace)
                client.create(action.object) if verb == "create" else client.update(action.object)
            finally:
                state["passing"] = False
        state["lost"] += 1
        return True, None, ApiConnectionTimeoutError(verb.upper(), "http://api/leases", "read timeout")

    cs.prepend_reactor(verb, "leases", react)
    return state


@pytest.mark.parametrize("verb", ["create", "update"])
def test_a_write_applied_without_an_answer_is_read_back_as_ours(verb):
    cs, clock = FakeClientset(), FakeClock()
    a = LeaderElector(cs, NAME, NS, CALLBACKS, identity="a", clock=clock)
    if verb == "update":
        assert a.try_acquire_or_renew()  # holds the lease; the next renewal's answer is lost
        clock.advance(2)
    state = answer_lost(cs, verb)
    assert a.try_acquire_or_renew() is True
    assert state["lost"] == 1 and a.is_leader() and lease(cs)["holderIdentity"] == "a"
    assert a.lease_round_status() == (True, "")


def test_a_write_that_was_not_applied_is_a_failed_round_naming_the_write():
    cs, clock = FakeClientset(), FakeClock()
    a = LeaderElector(cs, NAME, NS, CALLBACKS, identity="a", clock=clock)
    assert a.try_acquire_or_renew()
    clock.advance(2)
    renewed_before = lease(cs)["renewTime"]
    answer_lost(cs, "update", apply=False)
    assert a.try_acquire_or_renew() is False
    assert lease(cs)["renewTime"] == renewed_before
    clock.advance(a.lease_duration + 1)
    healthy, why = a.lease_round_status()
    assert not healthy and "cannot write lease sedna/sedna-gm" in why and "read timeout" in why


def test_the_next_round_renews_a_lease_held_under_our_name_instead_of_waiting_it_out():
    cs, clock = FakeClientset(), FakeClock()
    a = LeaderElector(cs, NAME, NS, CALLBACKS, identity="a", clock=clock)
    gets = {"n": 0}

    def second_get_times_out(action):  # the read-back after the lost create gets no answer either
        gets["n"] += 1
        if gets["n"] == 2:
            return True, None, ApiConnectionTimeoutError("GET", "http://api/leases", "read timeout")
        return False, None, None

    cs.prepend_reactor("get", "leases", second_get_times_out)
    answer_lost(cs, "create")
    assert a.try_acquire_or_renew() is False
    assert lease(cs)["holderIdentity"] == "a"  # ... yet the server applied the create
    clock.advance(2)
    assert a.try_acquire_or_renew() is True  # read: held by us → renewed at once, not waited out as someone else's
    assert a.is_leader()


def namespace_missing(action):
    return True, None, errors.NotFoundError(404, "NotFound", 'namespaces "sedna" not found')


def test_a_candidate_whose_lease_namespace_is_missing_is_unhealthy_and_says_why():
    cs, clock = FakeClientset(), FakeClock()
    cs.prepend_reactor("create", "leases", namespace_missing)
    a = LeaderElector(cs, NAME, NS, CALLBACKS, identity="a", clock=clock)
    assert a.try_acquire_or_renew() is False
    healthy, why = a.lease_round_status()
    assert not healthy and why == ('no lease round succeeded yet; last error: cannot create lease sedna/sedna-gm: '
                                   'namespaces "sedna" not found')


def test_a_standby_that_may_not_write_the_lease_is_not_ready():
    cs, clock = FakeClientset(), FakeClock()
    gm = GlobalManager(GMConfig(), clientset=cs)
    gm.elector = LeaderElector(cs, NAME, NS, CALLBACKS, identity="b", clock=clock)
    other = LeaderElector(cs, NAME, NS, CALLBACKS, identity="a", clock=FakeClock())
    assert other.try_acquire_or_renew()
    assert gm.elector.try_acquire_or_renew() is False  # held by a live leader: standing by is healthy
    assert gm._ready() == (True, "standing by (leader: a)")
    forbidden = errors.ForbiddenError(403, "Forbidden", 'leases.coordination.k8s.io "sedna-gm" is forbidden')
    cs.prepend_reactor("update", "leases", lambda action: (True, None, forbidden))
    clock.advance(gm.elector.lease_duration + 1)  # the leader is gone: b must take over, and may not
    assert gm.elector.try_acquire_or_renew() is False
    ok, detail = gm._ready()
    assert not ok and detail.startswith("lease sedna/sedna-gm: no lease round succeeded within 15s")
    assert "cannot write lease sedna/sedna-gm" in detail and "forbidden" in detail


def test_the_lease_namespace_defaults_to_the_pods_own(tmp_path, monkeypatch):
    sa = tmp_path / "namespace"
    sa.write_text("kubeedge\n")
    assert default_lease_namespace(str(sa)) == "kubeedge"
    assert default_lease_namespace(str(tmp_path / "absent")) == "sedna"
    sa.write_text("")
    assert default_lease_namespace(str(sa)) == "sedna"
    sa.write_text("kubeedge")
    monkeypatch.setattr("globalmanager.config.SERVICE_ACCOUNT_NAMESPACE_FILE", str(sa))
    assert GMConfig().leader_election.namespace == "kubeedge"
