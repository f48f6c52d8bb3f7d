"""The pod's service account as a ``ClientConfig``, natively (what client-go's ``rest.InClusterConfig`` does):
``https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT`` (an IPv6 address in brackets), the mounted CA file and
the mounted token, which the kubelet rotates: it is read again whenever the file changes (one ``stat`` per request,
``apis.tokenfile.TokenFile``), so a rotated token is used from the next request on.

The error messages are those of the ``kubernetes`` package's in-cluster loader, which this replaces.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from .clientconfig import ClientConfig, ConfigError
from .tokenfile import TokenFile

__all__ = ["SERVICE_TOKEN_FILENAME", "SERVICE_CERT_FILENAME", "InClusterError", "ServiceAccountToken",
           "in_cluster_config", "join_host_port"]

SERVICE_HOST_ENV_NAME = "KUBERNETES_SERVICE_HOST"
SERVICE_PORT_ENV_NAME = "KUBERNETES_SERVICE_PORT"
SERVICE_TOKEN_FILENAME = "/var/run/secrets/kubernetes.io/serviceaccount/token"
SERVICE_CERT_FILENAME = "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt"


class InClusterError(ConfigError):
    """The in-cluster environment is missing or unusable."""

    def __init__(self, reason: str) -> None:
        super().__init__(f"cannot load the in-cluster configuration: {reason}")
        self.reason = reason


def join_host_port(host: str, port: str) -> str:
    """``host:port``, ``[host]:port`` for an IPv6 address (Go's ``net.JoinHostPort``)."""
    return f"[{host}]:{port}" if ":" in host or "%" in host else f"{host}:{port}"


class ServiceAccountToken:
    """The refresh hook of an in-cluster configuration: puts the token file's current content in ``api_key``."""

    def __init__(self, token_file: TokenFile) -> None:
        self.token_file = token_file

    def __call__(self, cfg: ClientConfig) -> None:
        cfg.api_key["BearerToken"] = "bearer " + self.token_file.current()


def in_cluster_config(
    token_file: str = SERVICE_TOKEN_FILENAME,
    ca_file: str = SERVICE_CERT_FILENAME,
    environ: Mapping[str, str] = os.environ,
) -> ClientConfig:
    """The service account's configuration; ``InClusterError`` says what is missing."""
    host, port = environ.get(SERVICE_HOST_ENV_NAME), environ.get(SERVICE_PORT_ENV_NAME)
    if host is None or port is None:
        raise InClusterError("Service host/port is not set.")
    if not host or not port:
        raise InClusterError("Service host/port is set but empty.")
    if not os.path.isfile(token_file):
        raise InClusterError("Service token file does not exist.")
    try:
        token = TokenFile(token_file)
    except (OSError, ValueError) as exc:
        raise InClusterError(f"Service token file cannot be used: {exc}") from None
    if not os.path.isfile(ca_file):
        raise InClusterError("Service certification file does not exist.")
    try:
        with open(ca_file, "rb") as fh:
            if not fh.read(1):
                raise InClusterError("Cert file exists but empty.")
    except OSError as exc:
        raise InClusterError(f"Service certification file cannot be read: {exc}") from None
    hook = ServiceAccountToken(token)
    cfg = ClientConfig.for_host("https://" + join_host_port(host, port), ssl_ca_cert=ca_file,
                                refresh_api_key_hook=hook)
    hook(cfg)
    return cfg
