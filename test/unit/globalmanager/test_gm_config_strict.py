"""Strict config parsing: address forms, names the API server would reject, every flag over the file."""

from __future__ import annotations

import pytest

from globalmanager.app import config_from_args, main
from globalmanager.config import ConfigError, config_from_dict, parse_address


def no_cluster(monkeypatch, tmp_path):
    """Should validation wrongly pass, main() must still stop at once (no kubeconfig, not in a cluster)."""
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "no-kubeconfig"))
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)


@pytest.mark.parametrize(
    ("address", "expected"),
    [
        (":8080", ("0.0.0.0", 8080)),
        ("0.0.0.0:8080", ("0.0.0.0", 8080)),
        ("127.0.0.1:0", ("127.0.0.1", 0)),
        ("[::1]:8080", ("::1", 8080)),
        ("[::]:9", ("::", 9)),
        ("localhost:65535", ("localhost", 65535)),
    ],
)
def test_accepted_address_forms(address, expected):
    assert parse_address(address) == expected


@pytest.mark.parametrize(
    "address",
    [":99999", "host:abc", "host:", "8080", "::1:8080", "a:b:80", "[::1]", "[::1]8080", "host:+80", "host: 80",
     "host:8_0", "host:-1", "[]:80", "[::1:80"],
)
def test_rejected_address_forms(address):
    with pytest.raises(ValueError) as info:
        parse_address(address)
    assert address in str(info.value)


@pytest.mark.parametrize("address", [":99999", "host:abc", "::1:8080"])
def test_main_exits_2_on_a_bad_metrics_address_naming_the_key(tmp_path, capsys, monkeypatch, address):
    no_cluster(monkeypatch, tmp_path)
    path = tmp_path / "gm.yaml"
    path.write_text(f"metricsAddress: '{address}'\n")
    assert main(["--config", str(path)]) == 2
    assert "invalid configuration: metricsAddress:" in capsys.readouterr().err
    assert main(["--metrics-address", address]) == 2
    assert "invalid configuration: metricsAddress:" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("data", "key"),
    [
        ({"namespace": "Team_A"}, "namespace"),
        ({"namespace": "a" * 64}, "namespace"),
        ({"leaderElection": {"namespace": "no/slash"}}, "leaderElection.namespace"),
        ({"leaderElection": {"leaseName": "Bad Name"}}, "leaderElection.leaseName"),
        ({"workers": {"ElasticAIJob": -3}}, "workers.ElasticAIJob"),
        ({"defaultWorkers": 0}, "defaultWorkers"),
        ({"maxWorkers": 0}, "maxWorkers"),
        ({"logFormat": "xml"}, "logFormat"),
        ({"controllers": ["Nope"]}, "controllers[0]"),
    ],
)
def test_values_the_api_server_or_runtime_would_reject_name_the_key(data, key):
    with pytest.raises(ConfigError) as info:
        config_from_dict(data).validate(["ElasticAIJob"])
    assert info.value.key == key


def test_valid_names_pass():
    cfg = config_from_dict({"namespace": "team-a", "leaderElection": {"namespace": "kube-system",
                                                                       "leaseName": "sedna-gm.lock"}})
    cfg.validate(["ElasticAIJob"])


def test_a_bad_namespace_flag_exits_2_naming_the_key(tmp_path, capsys, monkeypatch):
    no_cluster(monkeypatch, tmp_path)
    assert main(["--namespace", "Not_A_Namespace"]) == 2
    assert "invalid configuration: namespace:" in capsys.readouterr().err


FILE = (
    "kubeConfig: {kc}\nmaster: http://file:1\nnamespace: file-ns\nmetricsAddress: '127.0.0.1:1111'\n"
    "healthProbeAddress: '127.0.0.1:3333'\n"
    "logLevel: warning\nlogFormat: console\nleaderElection: {{enabled: true}}\n"
)


@pytest.mark.parametrize(
    ("flag", "attr", "file_value", "flag_value"),
    [
        ("--master", "master", "http://file:1", "http://flag:2"),
        ("--namespace", "namespace", "file-ns", "flag-ns"),
        ("--metrics-address", "metrics_address", "127.0.0.1:1111", "[::1]:2222"),
        ("--health-probe-address", "health_probe_address", "127.0.0.1:3333", "[::1]:4444"),
        ("--log-level", "log_level", "warning", "error"),
        ("--log-format", "log_format", "console", "json"),
    ],
)
def test_each_flag_overrides_the_file_and_only_its_own_field(tmp_path, flag, attr, file_value, flag_value):
    kc = tmp_path / "kc"
    kc.write_text("apiVersion: v1\nkind: Config\n")
    path = tmp_path / "gm.yaml"
    path.write_text(FILE.format(kc=kc))
    base, _ = config_from_args(["--config", str(path)])
    assert getattr(base, attr) == file_value
    cfg, _ = config_from_args(["--config", str(path), flag, flag_value])
    assert getattr(cfg, attr) == flag_value
    for other in ("kube_config", "master", "namespace", "metrics_address", "health_probe_address", "log_level",
                  "log_format"):
        if other != attr:
            assert getattr(cfg, other) == getattr(base, other), other


def test_kubeconfig_and_leader_elect_flags_override_the_file(tmp_path):
    file_kc, flag_kc = tmp_path / "file-kc", tmp_path / "flag-kc"
    for kc in (file_kc, flag_kc):
        kc.write_text("apiVersion: v1\nkind: Config\n")
    path = tmp_path / "gm.yaml"
    path.write_text(f"kubeConfig: {file_kc}\nleaderElection: {{enabled: false}}\n")
    cfg, _ = config_from_args(["--config", str(path), "--kubeconfig", str(flag_kc), "--leader-elect"])
    assert cfg.kube_config == str(flag_kc) and cfg.leader_election.enabled is True
    path.write_text("leaderElection: {enabled: true}\n")
    cfg, _ = config_from_args(["--config", str(path), "--no-leader-elect"])
    assert cfg.leader_election.enabled is False
    cfg, _ = config_from_args(["--config", str(path)])
    assert cfg.leader_election.enabled is True


def test_a_missing_kubeconfig_flag_exits_2_naming_the_key(tmp_path, capsys):
    assert main(["--kubeconfig", str(tmp_path / "nope")]) == 2
    assert "invalid configuration: kubeConfig:" in capsys.readouterr().err


def test_version_ignores_a_broken_config(tmp_path, capsys):
    path = tmp_path / "gm.yaml"
    path.write_text("nope: 1\n")
    assert main(["--version", "--config", str(path)]) == 0
    assert capsys.readouterr().out.startswith("sedna-gm ")


def test_a_bad_log_format_flag_exits_2(capsys):
    with pytest.raises(SystemExit) as info:
        main(["--log-format", "xml"])
    assert info.value.code == 2
    assert "--log-format" in capsys.readouterr().err
