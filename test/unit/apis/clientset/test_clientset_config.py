"""Building the real clientset from a kubeconfig, the in-cluster environment, a URL, or auto-detection."""

from __future__ import annotations

import socket

import pytest
import yaml

from apis.clientset import Clientset, ConfigError

POD = {"kind": "Pod", "metadata": {"name": "p1", "namespace": "default"}}
POD_URL = "/api/v1/namespaces/default/pods/p1"


def _dead_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}"


def _kubeconfig(tmp_path, live_url: str, current: str = "live") -> str:
    cfg = {
        "apiVersion": "v1",
        "kind": "Config",
        "current-context": current,
        "clusters": [{"name": "live", "cluster": {"server": live_url}},
                     {"name": "dead", "cluster": {"server": _dead_url()}}],
        "users": [{"name": "alice", "user": {"token": "alice-token"}},
                  {"name": "bob", "user": {"token": "bob-token"}}],
        "contexts": [{"name": "live", "context": {"cluster": "live", "user": "alice"}},
                     {"name": "other", "context": {"cluster": "live", "user": "bob"}},
                     {"name": "dead", "context": {"cluster": "dead", "user": "alice"}}],
    }
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump(cfg))
    return str(path)


def _get_and_auth(stub, client: Clientset) -> str:
    with client:
        assert client.core_v1().pods("default").get("p1") == POD
    return stub.last().headers.get("authorization", "")


def test_kubeconfig_current_context_token_reaches_the_server(stub, tmp_path):
    stub.json("GET", POD_URL, 200, POD)
    path = _kubeconfig(tmp_path, stub.url)
    assert _get_and_auth(stub, Clientset.from_kubeconfig(path)) == "Bearer alice-token"


def test_a_kubeconfig_token_does_not_reread_the_environment_per_request(stub, tmp_path, monkeypatch):
    """The kubeconfig's refresh hook sets the host again before every request; the proxy found when loading is kept
    (the connection pool uses it), so no request scans the environment for proxies."""
    from kubernetes.client import configuration

    stub.json("GET", POD_URL, 200, POD)
    client = Clientset.from_kubeconfig(_kubeconfig(tmp_path, stub.url))
    scans: list[int] = []
    monkeypatch.setattr(configuration, "getproxies", lambda: scans.append(1) or {})
    with client:
        for _ in range(3):
            assert client.core_v1().pods("default").get("p1") == POD
    assert scans == [] and stub.last().headers["authorization"] == "Bearer alice-token"


def test_requests_go_straight_to_the_connection_pool_of_the_host(stub, monkeypatch):
    """Without a proxy, no request pays for the pool manager's URL parsing and pool lookup; after close() the next
    request gets a fresh pool."""
    import urllib3

    stub.json("GET", POD_URL, 200, POD)
    managed: list[str] = []
    real = urllib3.PoolManager.urlopen
    monkeypatch.setattr(urllib3.PoolManager, "urlopen", lambda self, method, url, *a, **k: managed.append(url)
                        or real(self, method, url, *a, **k))
    client = Clientset.from_url(stub.url, token="t")
    pods = client.core_v1().pods("default")
    assert pods.get("p1") == POD and pods.get("p1") == POD
    client.close()
    assert pods.get("p1") == POD
    assert managed == [] and stub.last().headers["authorization"] == "Bearer t"
    client.close()


def test_kubeconfig_context_selection(stub, tmp_path):
    stub.json("GET", POD_URL, 200, POD)
    path = _kubeconfig(tmp_path, stub.url)
    assert _get_and_auth(stub, Clientset.from_kubeconfig(path, context="other")) == "Bearer bob-token"


def test_master_overrides_the_kubeconfig_server_but_keeps_credentials(stub, tmp_path):
    stub.json("GET", POD_URL, 200, POD)
    path = _kubeconfig(tmp_path, stub.url, current="dead")
    client = Clientset.from_kubeconfig(path, master=stub.url)
    assert client.host == stub.url
    assert _get_and_auth(stub, client) == "Bearer alice-token"


def test_kubeconfig_from_the_environment(stub, tmp_path, monkeypatch):
    stub.json("GET", POD_URL, 200, POD)
    monkeypatch.setenv("KUBECONFIG", _kubeconfig(tmp_path, stub.url))
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    assert _get_and_auth(stub, Clientset.auto()) == "Bearer alice-token"


def test_missing_kubeconfig_names_the_path(tmp_path):
    missing = str(tmp_path / "nope")
    with pytest.raises(ConfigError, match="nope.*not found"):
        Clientset.from_kubeconfig(missing)


def test_missing_kubeconfig_with_master_connects_without_credentials(stub, tmp_path):
    stub.json("GET", POD_URL, 200, POD)
    client = Clientset.from_kubeconfig(str(tmp_path / "nope"), master=stub.url)
    assert _get_and_auth(stub, client) == ""


def test_unknown_context_is_a_config_error(stub, tmp_path):
    with pytest.raises(ConfigError, match="context 'ghost'"):
        Clientset.from_kubeconfig(_kubeconfig(tmp_path, stub.url), context="ghost")


def test_garbage_kubeconfig_is_a_config_error(tmp_path):
    path = tmp_path / "kubeconfig"
    path.write_text("this: [is not: a kubeconfig")
    with pytest.raises(ConfigError, match="cannot load kubeconfig"):
        Clientset.from_kubeconfig(str(path))


def test_in_cluster_uses_the_service_account(tmp_path, monkeypatch):
    token, ca = tmp_path / "token", tmp_path / "ca.crt"
    token.write_text("sa-token")
    ca.write_text("-----BEGIN CERTIFICATE-----\n")
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", "443")
    with Clientset.in_cluster(token_file=str(token), ca_file=str(ca)) as client:
        assert client.host == "https://10.0.0.1:443"
        assert client.configuration.ssl_ca_cert == str(ca)
        assert client.transport.auth_headers() == {"Authorization": "bearer sa-token"}


def test_in_cluster_without_the_environment_is_a_config_error(tmp_path, monkeypatch):
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    with pytest.raises(ConfigError, match="in-cluster"):
        Clientset.in_cluster(token_file=str(tmp_path / "t"), ca_file=str(tmp_path / "c"))


def test_auto_prefers_in_cluster_when_the_service_host_is_set(tmp_path, monkeypatch):
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", "443")
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "unused"))
    # the standard service-account files do not exist here: the in-cluster path is the one that fails
    with pytest.raises(ConfigError, match="in-cluster"):
        Clientset.auto()


def test_master_does_not_change_the_callers_configuration(stub):
    base = Clientset.from_url("http://127.0.0.1:1", token="t")
    with Clientset(base.configuration, master=stub.url) as client:
        assert client.host == stub.url
    assert base.host == "http://127.0.0.1:1"
    assert base.configuration.host == "http://127.0.0.1:1"
    base.close()


def test_basic_auth_from_the_configuration(stub):
    stub.json("GET", POD_URL, 200, POD)
    client = Clientset.from_url(stub.url)
    client.configuration.username, client.configuration.password = "u", "p"
    assert _get_and_auth(stub, client) == "Basic dTpw"


def test_the_refresh_hook_runs_before_every_request(stub):
    stub.json("GET", POD_URL, 200, POD)
    client = Clientset.from_url(stub.url, token="t0")
    issued = iter(["t1", "t2"])
    client.configuration.refresh_api_key_hook = lambda cfg: cfg.api_key.update(BearerToken=next(issued))
    with client:
        pods = client.core_v1().pods("default")
        pods.get("p1")
        first = stub.last().headers["authorization"]
        pods.get("p1")
    assert (first, stub.last().headers["authorization"]) == ("Bearer t1", "Bearer t2")


def test_master_takes_the_environment_proxy_for_its_own_scheme(stub, tmp_path, monkeypatch):
    """An https kubeconfig overridden by an http ``master``: the HTTPS proxy of the environment is not kept."""
    for name in ("HTTP_PROXY", "http_proxy", "NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTPS_PROXY", _dead_url())
    monkeypatch.setenv("https_proxy", _dead_url())
    stub.json("GET", POD_URL, 200, POD)
    path = _kubeconfig(tmp_path, "https://127.0.0.1:1")
    assert _get_and_auth(stub, Clientset.from_kubeconfig(path, master=stub.url)) == "Bearer alice-token"
