"""sedna-gm wiring details: non-finite config numbers, the resync period draw, standby readiness."""

from __future__ import annotations

import math

import pytest
from lease_test_helpers import FakeClock

from apis.fake import FakeClientset
from apis.http_transport import ApiConnectionRefusedError
from globalmanager.app import GlobalManager, main, resync_period
from globalmanager.config import ConfigError, GMConfig, config_from_dict
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
