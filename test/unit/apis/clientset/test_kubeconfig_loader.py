"""``Clientset.from_kubeconfig`` through ``apis.kubeconfig``: the kubeconfig resolved in a child process (or
in-process when ``kubernetes`` is imported already), inline TLS material, errors, and the renewal of an expiring
exec-plugin token."""

from __future__ import annotations

import base64
import os
import ssl
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from testkit import self_signed_cert
from testkit.logs import capture_library_logs

from apis import kubeconfig
from apis.clientset import Clientset, ConfigError

POD = {"kind": "Pod", "metadata": {"name": "p1", "namespace": "default"}}
POD_URL = "/api/v1/namespaces/default/pods/p1"
REPO = Path(__file__).resolve().parents[4]

EXEC_PLUGIN = textwrap.dedent('''
    """A client-go exec credential plugin: token-<n> (n counts its runs), valid for n hours; exits 3 while the file
    <state>/fail exists."""
    import datetime, json, pathlib, sys

    state = pathlib.Path(sys.argv[1])
    if (state / "fail").exists():
        print("plugin: the identity provider is unreachable", file=sys.stderr)
        sys.exit(3)
    runs = int((state / "runs").read_text()) + 1 if (state / "runs").exists() else 1
    (state / "runs").write_text(str(runs))
    expiry = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(hours=runs)
    print(json.dumps({"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential",
                      "status": {"token": f"token-{runs}",
                                 "expirationTimestamp": expiry.strftime("%Y-%m-%dT%H:%M:%SZ")}}))
''')


@pytest.fixture(params=["child", "in-process"])
def loader_mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setattr(kubeconfig, "MODE", request.param)
    return str(request.param)


@pytest.fixture
def child_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kubeconfig, "MODE", "child")


def _write_kubeconfig(tmp_path: Path, server: str, user: dict[str, Any], cluster: dict[str, Any] | None = None) -> str:
    cfg = {
        "apiVersion": "v1", "kind": "Config", "current-context": "main",
        "clusters": [{"name": "c", "cluster": {"server": server, **(cluster or {})}}],
        "users": [{"name": "u", "user": user}],
        "contexts": [{"name": "main", "context": {"cluster": "c", "user": "u"}}],
    }
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump(cfg))
    return str(path)


def _get(client: Clientset) -> None:
    assert client.core_v1().pods("default").get("p1") == POD


def test_token_and_a_merged_list(stub, tmp_path, loader_mode):
    """Two files merged as ``$KUBECONFIG`` lists are: the first names the context, the second has the user."""
    stub.json("GET", POD_URL, 200, POD)
    first = tmp_path / "first"
    first.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "main",
        "clusters": [{"name": "c", "cluster": {"server": stub.url}}],
        "contexts": [{"name": "main", "context": {"cluster": "c", "user": "u"}}]}))
    second = tmp_path / "second"
    second.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "Config",
                                      "users": [{"name": "u", "user": {"token": "merged-token"}}]}))
    with Clientset.from_kubeconfig(f"{first}{os.pathsep}{second}") as client:
        _get(client)
        assert client.configuration.refresh_api_key_hook is None  # a static token: nothing to renew
    assert stub.last().headers["authorization"] == "Bearer merged-token"


def test_client_certificate_and_ca_data(make_stub, tmp_path, loader_mode):
    """Inline CA data stays in memory; the inline client certificate and key go to private files; the server,
    which requires a client certificate signed by its CA, answers."""
    server_dir, client_dir = tmp_path / "server", tmp_path / "client"
    server_dir.mkdir()
    client_dir.mkdir()
    server_cert, server_key = self_signed_cert(server_dir)
    client_cert, client_key = self_signed_cert(client_dir)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(server_cert, server_key)
    context.verify_mode = ssl.CERT_REQUIRED
    context.load_verify_locations(client_cert)
    server = make_stub(context)
    server.json("GET", POD_URL, 200, POD)

    def b64(path: Path) -> str:
        return base64.b64encode(path.read_bytes()).decode()

    path = _write_kubeconfig(tmp_path, server.url,
                             {"client-certificate-data": b64(client_cert), "client-key-data": b64(client_key)},
                             {"certificate-authority-data": b64(server_cert)})
    with Clientset.from_kubeconfig(path) as client:
        cfg = client.configuration
        _get(client)
        assert cfg.ssl_ca_cert is None and cfg.ca_cert_data == server_cert.read_text()
        assert Path(cfg.cert_file).read_bytes() == client_cert.read_bytes()
        assert Path(cfg.key_file).read_bytes() == client_key.read_bytes()
        assert stat.S_IMODE(os.stat(cfg.key_file).st_mode) == 0o600
        assert stat.S_IMODE(os.stat(os.path.dirname(cfg.key_file)).st_mode) == 0o700
        directory = cfg.credential_files.directory
        cfg.credential_files.remove()
        assert not os.path.exists(directory)


def test_certificate_files_the_kubeconfig_names_are_used_in_place(stub, tmp_path, child_mode):
    ca = tmp_path / "ca.crt"
    ca.write_text("-----BEGIN CERTIFICATE-----\n")
    path = _write_kubeconfig(tmp_path, "https://127.0.0.1:6443", {"token": "t"},
                             {"certificate-authority": "ca.crt"})  # relative to the kubeconfig's directory
    with Clientset.from_kubeconfig(path) as client:
        assert client.configuration.ssl_ca_cert == str(ca)
        assert client.configuration.ca_cert_data is None and client.configuration.credential_files is None


def test_a_child_failure_is_a_config_error_with_its_message(tmp_path, child_mode):
    path = _write_kubeconfig(tmp_path, "http://127.0.0.1:1", {"token": "very-secret-token"})
    with pytest.raises(ConfigError) as caught:
        Clientset.from_kubeconfig(path, context="ghost")
    message = str(caught.value)
    assert message.startswith(f"cannot load kubeconfig {path!r} context 'ghost': ")
    assert "Expected object with name ghost in" in message and message.endswith("contexts list")
    assert "very-secret-token" not in message


def test_a_missing_token_file_names_it(tmp_path, child_mode):
    path = _write_kubeconfig(tmp_path, "http://127.0.0.1:1", {"tokenFile": str(tmp_path / "no-such-token")})
    with pytest.raises(ConfigError, match="no-such-token"):
        Clientset.from_kubeconfig(path)


def test_an_empty_kubeconfig(tmp_path, loader_mode):
    path = tmp_path / "kubeconfig"
    path.write_text("")
    with pytest.raises(ConfigError, match="kubeconfig file is empty"):
        Clientset.from_kubeconfig(str(path))


def _exec_kubeconfig(tmp_path: Path, server: str) -> tuple[str, Path]:
    state = tmp_path / "plugin-state"
    state.mkdir()
    plugin = tmp_path / "plugin.py"
    plugin.write_text(EXEC_PLUGIN)
    path = _write_kubeconfig(tmp_path, server, {"exec": {
        "apiVersion": "client.authentication.k8s.io/v1", "command": sys.executable,
        "args": [str(plugin), str(state)], "interactiveMode": "Never"}})
    return path, state


def test_an_expiring_exec_token_is_renewed_by_running_the_loader_again(stub, tmp_path, child_mode):
    stub.json("GET", POD_URL, 200, POD)
    path, state = _exec_kubeconfig(tmp_path, stub.url)
    with Clientset.from_kubeconfig(path) as client:
        refresh = client.configuration.refresh_api_key_hook
        assert isinstance(refresh, kubeconfig.KubeconfigRefresh)
        _get(client)
        assert stub.last().headers["authorization"] == "Bearer token-1"
        _get(client)  # valid for an hour: used again, the plugin does not run
        assert stub.last().headers["authorization"] == "Bearer token-1"
        assert (state / "runs").read_text() == "1"
        later = time.time() + 3600
        refresh.clock = lambda: later  # the token has expired
        with capture_library_logs() as logs:
            _get(client)
        assert stub.last().headers["authorization"] == "Bearer token-2"
        _get(client)
        assert stub.last().headers["authorization"] == "Bearer token-2"
        assert (state / "runs").read_text() == "2"
    assert [e["event"] for e in logs] == ["kubeconfig credential renewed"]
    assert all("token-" not in str(value) for entry in logs for value in entry.values())


def test_a_failed_renewal_keeps_the_token_and_is_tried_again_later(stub, tmp_path, child_mode):
    stub.json("GET", POD_URL, 200, POD)
    path, state = _exec_kubeconfig(tmp_path, stub.url)
    with Clientset.from_kubeconfig(path) as client:
        refresh = client.configuration.refresh_api_key_hook
        now = time.time() + 3600
        refresh.clock = lambda: now
        (state / "fail").touch()
        with capture_library_logs() as logs:
            _get(client)
            _get(client)  # within RETRY_AFTER_FAILURE: no new attempt
        assert stub.last().headers["authorization"] == "Bearer token-1"
        assert [e["event"] for e in logs] == [
            "cannot renew the kubeconfig credential; keeping the current one, trying again later"]
        assert logs[0]["retry_in_seconds"] == kubeconfig.RETRY_AFTER_FAILURE
        assert "the identity provider is unreachable" in logs[0]["error"]  # the plugin's words, via the loader
        (state / "fail").unlink()
        now += kubeconfig.RETRY_AFTER_FAILURE
        _get(client)
        assert stub.last().headers["authorization"] == "Bearer token-2"


def test_master_override_keeps_the_renewing_credential(stub, tmp_path, child_mode):
    stub.json("GET", POD_URL, 200, POD)
    path, _ = _exec_kubeconfig(tmp_path, "http://127.0.0.1:1")
    with Clientset.from_kubeconfig(path, master=stub.url) as client:
        assert client.host == stub.url
        _get(client)
    assert stub.last().headers["authorization"] == "Bearer token-1"


FRESH_INTERPRETER = textwrap.dedent('''
    import sys
    from apis.clientset import Clientset
    with Clientset.from_kubeconfig(sys.argv[1]) as client:
        assert client.core_v1().pods("default").get("p1")["metadata"]["name"] == "p1"
    loaded = sorted(m for m in sys.modules if m == "kubernetes" or m.startswith("kubernetes."))
    assert not loaded, loaded
    print("ok")
''')


def test_a_fresh_process_never_imports_kubernetes(stub, tmp_path):
    stub.json("GET", POD_URL, 200, POD)
    path = _write_kubeconfig(tmp_path, stub.url, {"token": "t"})
    done = subprocess.run([sys.executable, "-c", FRESH_INTERPRETER, path], cwd=REPO, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=120)
    assert (done.returncode, done.stdout.strip()) == (0, "ok"), done.stderr
    assert stub.last().headers["authorization"] == "Bearer t"


def test_what_the_library_only_logs_is_a_warning(stub, tmp_path, child_mode):
    """The library logs a failed exec plugin and carries on without a credential (kubectl would fail later with
    401): the child's words are logged as a warning."""
    path, state = _exec_kubeconfig(tmp_path, stub.url)
    (state / "fail").touch()
    with capture_library_logs() as logs:
        client = Clientset.from_kubeconfig(path)
    client.close()
    assert client.configuration.api_key == {}
    assert [e["event"] for e in logs] == ["the kubeconfig loader reported a problem"]
    assert "the identity provider is unreachable" in logs[0]["detail"]


def test_a_loader_that_hangs_is_stopped(tmp_path, child_mode, monkeypatch):
    plugin = tmp_path / "slow.py"
    plugin.write_text("import time\ntime.sleep(5)\n")  # e.g. a plugin waiting for a login that never comes
    path = _write_kubeconfig(tmp_path, "http://127.0.0.1:1", {"exec": {
        "apiVersion": "client.authentication.k8s.io/v1", "command": sys.executable, "args": [str(plugin)]}})
    monkeypatch.setattr(kubeconfig, "CHILD_TIMEOUT", 0.5)
    with pytest.raises(ConfigError, match=r"the loader did not finish within 0\.5 s"):
        Clientset.from_kubeconfig(path)


def test_the_loaders_answer_is_bounded(tmp_path, child_mode, monkeypatch):
    path = _write_kubeconfig(tmp_path, "http://127.0.0.1:1", {"token": "x" * 200})
    monkeypatch.setattr(kubeconfig, "MAX_CHILD_OUTPUT", 100)
    with pytest.raises(ConfigError, match="the loader's answer is larger than 100 bytes"):
        Clientset.from_kubeconfig(path)
