"""Every number of the configuration is bounded and every URL checked: a bad value exits 2 naming the key, never a
traceback (exit 1) nor a process that starts 100 million threads or waits 1e300 seconds."""

from __future__ import annotations

import pytest

from globalmanager.app import main
from globalmanager.config import LIMITS, MAX_WORKERS, ConfigError, config_from_dict


@pytest.fixture(autouse=True)
def no_cluster(monkeypatch, tmp_path):
    """Should validation wrongly pass, main() must still stop at once (no kubeconfig, not in a cluster)."""
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "no-kubeconfig"))
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)


def run(tmp_path, capsys, yaml_text="", *flags):
    argv = [*flags, "--metrics-address", "127.0.0.1:0", "--health-probe-address", "127.0.0.1:0", "--no-leader-elect"]
    if yaml_text:
        path = tmp_path / "gm.yaml"
        path.write_text(yaml_text)
        argv += ["--config", str(path)]
    code = main(argv)
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return code, err


@pytest.mark.parametrize("master", ["127.0.0.1:1", "ht!tp://::::", "http://127.0.0.1:99999", "ftp://host",
                                    "http://", "https://[::1"])
def test_a_master_that_is_not_an_api_url_exits_2(tmp_path, capsys, master):
    code, err = run(tmp_path, capsys, "", "--master", master)
    assert code == 2 and "invalid configuration: master:" in err and master in err


@pytest.mark.parametrize(
    ("yaml_text", "key"),
    [
        ("leaderElection: {leaseDuration: 1.0e+300}\n", "leaderElection.leaseDuration"),
        ("leaderElection: {leaseDuration: " + "9" * 400 + "}\n", "leaderElection.leaseDuration"),
        ("leaderElection: {retryPeriod: 1.0e-9, renewDeadline: 1.0e-8, leaseDuration: 1.0e-7}\n",
         "leaderElection.leaseDuration"),
        ("shutdownTimeoutSeconds: 1.0e+300\n", "shutdownTimeoutSeconds"),
        ("shutdownTimeoutSeconds: -1\n", "shutdownTimeoutSeconds"),
        ("minResyncPeriodSeconds: 1.0e-300\n", "minResyncPeriodSeconds"),
        ("workers: {ElasticAIJob: 100000000}\n", "workers.ElasticAIJob"),
        ("defaultWorkers: " + "9" * 400 + "\n", "defaultWorkers"),
        ("localController: {server: 'not a url'}\n", "localController.server"),
        ("knowledgeBaseServer: {server: 'http://kb:0'}\n", "knowledgeBaseServer.server"),
        ("websocket: {tokenGraceSeconds: -1}\n", "websocket.tokenGraceSeconds"),
        ("websocket: {tokenGraceSeconds: 1.0e+300}\n", "websocket.tokenGraceSeconds"),
    ],
)
def test_out_of_bounds_values_exit_2_naming_the_key(tmp_path, capsys, yaml_text, key):
    code, err = run(tmp_path, capsys, yaml_text)
    assert code == 2 and f"invalid configuration: {key}:" in err, err


def test_a_kubeconfig_whose_server_is_not_a_url_exits_2(tmp_path, capsys):
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
        "clusters: [{name: k, cluster: {server: 'ht!tp://::::'}}]\n"
        "contexts: [{name: c, context: {cluster: k, user: u}}]\nusers: [{name: u, user: {}}]\n")
    code, err = run(tmp_path, capsys, "", "--kubeconfig", str(kubeconfig))
    assert code == 2 and "invalid configuration: kubeConfig:" in err


def test_the_bounds_themselves_are_accepted():
    cfg = config_from_dict({
        "workers": {"ElasticAIJob": MAX_WORKERS}, "defaultWorkers": MAX_WORKERS,
        "minResyncPeriodSeconds": LIMITS["minResyncPeriodSeconds"][0], "shutdownTimeoutSeconds": 0,
        "leaderElection": {"leaseDuration": 86400, "renewDeadline": 60, "retryPeriod": 0.1},
        "master": "https://[::1]:6443/prefix", "websocket": {"tokenGraceSeconds": 0},
    })
    cfg.validate(["ElasticAIJob"])
    with pytest.raises(ConfigError) as info:
        config_from_dict({"workers": {"ElasticAIJob": MAX_WORKERS + 1}}).validate(["ElasticAIJob"])
    assert info.value.key == "workers.ElasticAIJob"
