"""sedna-gm wiring details: non-finite config numbers, the resync period draw, standby readiness, the Model router
of the learning jobs."""

from __future__ import annotations

import math
import threading

import pytest
from learningjob_test_helpers import IL_REFS, il_job
from lease_test_helpers import FakeClock
from prometheus_client import CollectorRegistry
from testkit import wait_for

from apis.fake import FakeClientset
from apis.http_transport import ApiConnectionRefusedError
from globalmanager.app import GlobalManager, main, resync_period
from globalmanager.config import ConfigError, GMConfig, config_from_dict
from globalmanager.controllers.model import ModelController
from globalmanager.leaderelection import LeaderCallbacks, LeaderElector


@pytest.mark.parametrize(
    ("data", "key"),
    [
        ({"minResyncPeriodSeconds": math.nan}, "minResyncPeriodSeconds"),
        ({"leaderElection": {"leaseDuration": math.inf}}, "leaderElection.leaseDuration"),
        ({"leaderElection": {"retryPeriod": -math.inf}}, "leaderElection.retryPeriod"),
        ({"shutdownTimeoutSeconds": math.inf}, "shutdownTimeoutSeconds"),
    ],
)
def test_non_finite_numbers_are_rejected_naming_the_key(data, key):
    with pytest.raises(ConfigError) as info:
        config_from_dict(data).validate(["ElasticAIJob"])
    assert info.value.key == key and "finite" in str(info.value)


def test_non_finite_values_set_in_code_are_rejected_by_validate():
    cfg = GMConfig()
    cfg.min_resync_period_seconds = math.nan
    with pytest.raises(ConfigError) as info:
        cfg.validate()
    assert info.value.key == "minResyncPeriodSeconds"


@pytest.mark.parametrize("text", ["minResyncPeriodSeconds: .nan\n", "leaderElection: {leaseDuration: .inf}\n"])
def test_main_exits_2_on_nan_or_inf(tmp_path, capsys, text):
    path = tmp_path / "gm.yaml"
    path.write_text(text)
    assert main(["--config", str(path)]) == 2
    err = capsys.readouterr().err
    assert "finite" in err and ("minResyncPeriodSeconds" in err or "leaderElection.leaseDuration" in err)


class FixedRng:
    def __init__(self, value: float) -> None:
        self.value = value

    def random(self) -> float:
        return self.value


@pytest.mark.parametrize("draw", [0.0, 0.25, 0.999999999])
def test_resync_period_is_drawn_in_min_to_twice_min(draw):
    value = resync_period(30.0, FixedRng(draw))
    assert 30.0 <= value < 60.0
    assert value == pytest.approx(30.0 * (1 + draw))


def test_resync_period_never_reaches_twice_min_even_at_the_top_of_the_draw():
    assert resync_period(1e-3, FixedRng(1.0 - 2**-53)) < 2e-3


def test_a_standby_that_cannot_reach_the_lease_is_not_ready():
    cs, clock = FakeClientset(), FakeClock()
    cfg = GMConfig()
    gm = GlobalManager(cfg, clientset=cs)
    gm.elector = LeaderElector(cs, "sedna-gm", "sedna", LeaderCallbacks(lambda s: None, lambda: None),
                               identity="b", clock=clock)
    ok, detail = gm._ready()
    assert not ok and "lease" in detail  # no round has succeeded yet
    other = LeaderElector(cs, "sedna-gm", "sedna", LeaderCallbacks(lambda s: None, lambda: None),
                          identity="a", clock=clock)
    assert other.try_acquire_or_renew()
    assert gm.elector.try_acquire_or_renew() is False
    ok, detail = gm._ready()
    assert ok and "standing by" in detail
    cs.prepend_reactor("get", "leases", lambda a: (True, None, ApiConnectionRefusedError("GET", "u", "refused")))
    clock.mono += cfg.leader_election.lease_duration + 1
    assert gm.elector.try_acquire_or_renew() is False
    ok, detail = gm._ready()
    assert not ok and "lease" in detail


@pytest.mark.parametrize("controllers", [["Dataset", "IncrementalLearning"], ["LifelongLearning"],
                                         ["IncrementalLearning", "Model"]])
def test_the_model_router_a_job_controller_created_runs_once_whether_or_not_model_is_listed(controllers):
    """IL routes its Models through ``ctx.model_router``: it needs workers even when ``controllers`` does not list
    Model (else the routes wait in its queue and never reach the nodes), and only one set of them. LL routes none."""
    cs = FakeClientset(il_job(), *IL_REFS)
    cfg = GMConfig(controllers=controllers)
    cfg.leader_election.enabled = False
    cfg.websocket.address, cfg.websocket.port = "127.0.0.1", 0
    registry = CollectorRegistry()
    gm = GlobalManager(cfg, clientset=cs, registry=registry)
    stop = threading.Event()
    runner = threading.Thread(target=gm.run_controllers, args=(stop,), daemon=True)
    runner.start()
    try:
        wait_for("the controllers to start", gm._controllers_started.is_set)
        routers = [c for c in gm.controllers if isinstance(c, ModelController)]
        expected = 0 if controllers == ["LifelongLearning"] else 1
        assert len(routers) == expected and [c.name for c in gm.controllers].count("Model") == expected
        wait_for("every controller's caches", lambda: all(c.synced.is_set() for c in gm.controllers))
        if "IncrementalLearning" in controllers:  # the job's Models were routed and the router synced them
            wait_for("the router's syncs", lambda: (registry.get_sample_value(
                "sedna_gm_controller_sync_total", {"controller": "Model", "result": "success"}) or 0) >= 1)
    finally:
        stop.set()
        runner.join(15)
    assert not runner.is_alive()
