"""sedna-gm configuration: defaults, YAML, flag overrides, errors naming the key (exit 2)."""

from __future__ import annotations

import pytest

from globalmanager import __version__
from globalmanager.app import config_from_args, main
from globalmanager.config import ConfigError, GMConfig, config_from_dict, load_config, parse_address


def test_defaults_match_sedna_and_client_go():
    cfg = GMConfig()
    assert (cfg.websocket.address, cfg.websocket.port) == ("0.0.0.0", 9000)
    assert cfg.min_resync_period_seconds == 30
    assert cfg.metrics_address == ":8080"
    le = cfg.leader_election
    assert (le.enabled, le.lease_name, le.namespace) == (True, "sedna-gm", "sedna")
    assert (le.lease_duration, le.renew_deadline, le.retry_period) == (15, 10, 2)
    assert cfg.controllers is None and cfg.workers_for("ElasticAIJob") == 2
    cfg.validate(["ElasticAIJob"])


def test_a_backlog_grows_the_default_workers_up_to_max_workers_and_a_count_set_per_controller_is_fixed():
    cfg = config_from_dict({"workers": {"JointInference": 8}, "defaultWorkers": 3, "maxWorkers": 12})
    assert (cfg.workers_for("ElasticAIJob"), cfg.max_workers_for("ElasticAIJob")) == (3, 12)
    assert (cfg.workers_for("JointInference"), cfg.max_workers_for("JointInference")) == (8, 8)
    assert config_from_dict({"defaultWorkers": 40}).max_workers_for("Reid") == 40  # never below the minimum
    assert GMConfig().max_workers_for("ElasticAIJob") == 32


def test_yaml_file_over_defaults(tmp_path):
    path = tmp_path / "gm.yaml"
    path.write_text(
        "kubeConfig: ''\nnamespace: team-a\nwebsocket: {port: 9001}\nlocalController: {server: http://lc:9100}\n"
        "minResyncPeriodSeconds: 5\nmetricsAddress: 127.0.0.1:9090\n"
        "leaderElection: {enabled: false, leaseName: gm, leaseDuration: 30, renewDeadline: 20, retryPeriod: 4}\n"
        "controllers: [ElasticAIJob]\nworkers: {ElasticAIJob: 4}\nlogLevel: debug\nlogFormat: console\n"
    )
    cfg = load_config(str(path))
    assert cfg.namespace == "team-a" and cfg.websocket.port == 9001 and cfg.websocket.address == "0.0.0.0"
    assert cfg.local_controller.server == "http://lc:9100"
    assert cfg.min_resync_period_seconds == 5.0
    assert cfg.leader_election.enabled is False and cfg.leader_election.lease_duration == 30.0
    assert cfg.controllers == ["ElasticAIJob"] and cfg.workers_for("ElasticAIJob") == 4
    cfg.validate(["ElasticAIJob"])


@pytest.mark.parametrize(
    ("data", "key"),
    [
        ({"websocket": {"prot": 1}}, "websocket.prot"),
        ({"nope": 1}, "nope"),
        ({"websocket": {"port": "nine"}}, "websocket.port"),
        ({"leaderElection": {"enabled": "yes"}}, "leaderElection.enabled"),
        ({"minResyncPeriodSeconds": [1]}, "minResyncPeriodSeconds"),
        ({"controllers": "ElasticAIJob"}, "controllers"),
        ({"workers": {"ElasticAIJob": "many"}}, "workers.ElasticAIJob"),
        ({"localController": 3}, "localController"),
    ],
)
def test_unknown_keys_and_wrong_types_name_the_key(data, key):
    with pytest.raises(ConfigError) as info:
        config_from_dict(data)
    assert info.value.key == key
    assert key in str(info.value)


@pytest.mark.parametrize(
    ("data", "key"),
    [
        ({"websocket": {"port": 65536}}, "websocket.port"),
        ({"leaderElection": {"leaseDuration": 10, "renewDeadline": 10}}, "leaderElection.leaseDuration"),
        ({"leaderElection": {"renewDeadline": 2, "retryPeriod": 2}}, "leaderElection.renewDeadline"),
        ({"metricsAddress": "8080"}, "metricsAddress"),
        ({"healthProbeAddress": "h:70000"}, "healthProbeAddress"),
        ({"logLevel": "loud"}, "logLevel"),
        ({"controllers": ["ElasticAIJob", "Nope"]}, "controllers[1]"),
        ({"workers": {"Nope": 1}}, "workers.Nope"),
        ({"kubeConfig": "/does/not/exist"}, "kubeConfig"),
    ],
)
def test_validation_names_the_key(data, key):
    with pytest.raises(ConfigError) as info:
        config_from_dict(data).validate(["ElasticAIJob"])
    assert info.value.key == key


def test_flags_override_the_file(tmp_path):
    path = tmp_path / "gm.yaml"
    path.write_text("namespace: a\nmetricsAddress: ':9000'\nleaderElection: {enabled: true}\nlogLevel: info\n")
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text("apiVersion: v1\nkind: Config\n")
    cfg, _ = config_from_args(
        ["--config", str(path), "--namespace", "b", "--metrics-address", "127.0.0.1:0",
         "--health-probe-address", "127.0.0.1:0", "--no-leader-elect",
         "--log-level", "debug", "--log-format", "json", "--kubeconfig", str(kubeconfig), "--master", "http://x:1"]
    )
    assert cfg.namespace == "b" and cfg.metrics_address == cfg.health_probe_address == "127.0.0.1:0"
    assert cfg.leader_election.enabled is False
    assert (cfg.log_level, cfg.log_format) == ("debug", "json")
    assert cfg.kube_config == str(kubeconfig) and cfg.master == "http://x:1"
    cfg, _ = config_from_args(["--config", str(path), "--leader-elect", "-v", "4"])
    assert cfg.leader_election.enabled is True and cfg.log_level == "debug"


def test_main_exits_2_with_a_message_naming_the_key(tmp_path, capsys):
    path = tmp_path / "gm.yaml"
    path.write_text("websocket:\n  port: high\n")
    assert main(["--config", str(path)]) == 2
    err = capsys.readouterr().err
    assert "websocket.port" in err and "invalid configuration" in err


def test_main_exits_2_on_a_missing_or_broken_file(tmp_path, capsys):
    assert main(["--config", str(tmp_path / "missing.yaml")]) == 2
    assert "does not exist" in capsys.readouterr().err
    broken = tmp_path / "broken.yaml"
    broken.write_text("a: [\n")
    assert main(["--config", str(broken)]) == 2
    assert "not valid YAML" in capsys.readouterr().err


def test_version(capsys):
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"sedna-gm {__version__}"


def test_parse_address():
    assert parse_address(":8080") == ("0.0.0.0", 8080)
    assert parse_address("127.0.0.1:0") == ("127.0.0.1", 0)
    assert parse_address("[::1]:80") == ("::1", 80)
    for bad in ("8080", "host:port", "h:70000"):
        with pytest.raises(ValueError):
            parse_address(bad)
