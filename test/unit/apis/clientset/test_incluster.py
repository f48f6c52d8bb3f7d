"""``Clientset.in_cluster`` (``apis.incluster``): the service account's address, CA and token, natively."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from apis.clientset import Clientset, ConfigError
from apis.incluster import in_cluster_config, join_host_port


def _mount(tmp_path: Path, token: str = "sa-token") -> tuple[Path, Path]:
    token_file, ca_file = tmp_path / "token", tmp_path / "ca.crt"
    token_file.write_text(token)
    ca_file.write_text("-----BEGIN CERTIFICATE-----\n")
    return token_file, ca_file


ENV = {"KUBERNETES_SERVICE_HOST": "10.0.0.1", "KUBERNETES_SERVICE_PORT": "443"}


def test_a_rotated_token_is_used_from_the_next_request_on(tmp_path):
    token_file, ca_file = _mount(tmp_path)
    cfg = in_cluster_config(str(token_file), str(ca_file), ENV)
    assert cfg.auth_settings()["BearerToken"]["value"] == "bearer sa-token"
    # the kubelet swaps the projected volume's files: a new inode
    rotated = tmp_path / "token.new"
    rotated.write_text("sa-token-2\n")
    os.replace(rotated, token_file)
    assert cfg.auth_settings()["BearerToken"]["value"] == "bearer sa-token-2"


def test_an_unreadable_rotation_keeps_the_last_token(tmp_path):
    token_file, ca_file = _mount(tmp_path)
    cfg = in_cluster_config(str(token_file), str(ca_file), ENV)
    token_file.write_text("")  # half-written
    assert cfg.auth_settings()["BearerToken"]["value"] == "bearer sa-token"


def test_an_ipv6_service_host_is_bracketed(tmp_path):
    token_file, ca_file = _mount(tmp_path)
    cfg = in_cluster_config(str(token_file), str(ca_file),
                            {"KUBERNETES_SERVICE_HOST": "fd00::1", "KUBERNETES_SERVICE_PORT": "6443"})
    assert cfg.host == "https://[fd00::1]:6443"
    assert cfg.ssl_ca_cert == str(ca_file) and cfg.verify_ssl
    assert join_host_port("10.0.0.1", "443") == "10.0.0.1:443"


@pytest.mark.parametrize(("environ", "files", "message"), [
    ({"KUBERNETES_SERVICE_HOST": "10.0.0.1"}, "both", "Service host/port is not set."),
    ({"KUBERNETES_SERVICE_HOST": "", "KUBERNETES_SERVICE_PORT": "443"}, "both", "Service host/port is set but empty."),
    (ENV, "none", "Service token file does not exist."),
    (ENV, "token", "Service certification file does not exist."),
    (ENV, "empty-token", "is empty"),
    (ENV, "empty-ca", "Cert file exists but empty."),
])
def test_what_is_missing_is_named(tmp_path, environ, files, message):
    token_file, ca_file = tmp_path / "token", tmp_path / "ca.crt"
    if files in ("both", "token", "empty-ca"):
        token_file.write_text("t")
    if files == "empty-token":
        token_file.write_text("")
    if files in ("both", "empty-token"):
        ca_file.write_text("ca")
    if files == "empty-ca":
        ca_file.write_text("")
    with pytest.raises(ConfigError, match="^cannot load the in-cluster configuration: .*" + message.replace(".", r"\.")):
        in_cluster_config(str(token_file), str(ca_file), environ)


def test_in_cluster_clientset_sends_the_current_token(stub, tmp_path):
    """The address is overridden with the stub's (plain HTTP here): the token file's content reaches it."""
    token_file, ca_file = _mount(tmp_path)
    stub.json("GET", "/api/v1/namespaces/default/pods/p1", 200, {"kind": "Pod", "metadata": {"name": "p1"}})
    with Clientset(in_cluster_config(str(token_file), str(ca_file), ENV), master=stub.url) as client:
        pods = client.core_v1().pods("default")
        pods.get("p1")
        first = stub.last().headers["authorization"]
        rotated = tmp_path / "token.new"
        rotated.write_text("sa-token-2")
        os.replace(rotated, token_file)
        pods.get("p1")
    assert (first, stub.last().headers["authorization"]) == ("bearer sa-token", "bearer sa-token-2")
