"""``ClientConfig``: what the real clientset needs to reach an API server (address, credentials, TLS, proxy), as a
plain value of our own, so that no long-running process imports the ``kubernetes`` package (its generated client
models cost about 18 MB of RSS and half a second of start-up).

It has the attribute names of ``kubernetes.client.Configuration`` that ``apis.http_transport`` reads (the transport
takes either, duck-typed): ``host``, ``api_key``/``api_key_prefix`` with ``refresh_api_key_hook`` (run before every
``auth_settings()``), ``username``/``password``, ``verify_ssl``, ``ssl_ca_cert`` (a CA file), ``ca_cert_data`` (CA
PEM in memory), ``cert_file``/``key_file``, ``assert_hostname``, ``tls_server_name``, ``proxy``, ``no_proxy``,
``proxy_headers``, ``socket_options`` and ``connection_pool_maxsize``.

Guarantees: a proxy that came from the environment (``HTTPS_PROXY``/``HTTP_PROXY``/``ALL_PROXY`` for the host's
scheme, ``NO_PROXY``) is resolved once, when the host is set (``for_host``, ``with_host``), never per request.
Credential files written for in-memory data (``CredentialFiles``) are private (0700 directory, 0600 files) and
removed at exit or when no configuration uses them any more.
"""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import os
import shutil
import tempfile
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit
from urllib.request import getproxies

__all__ = ["ClientConfig", "ConfigError", "CredentialFiles", "env_proxy", "MAX_CREDENTIAL_BYTES"]

# A client certificate, key or CA bundle larger than this is refused (a real one is a few kilobytes).
MAX_CREDENTIAL_BYTES = 1024 * 1024


class ConfigError(Exception):
    """The client configuration (kubeconfig, in-cluster environment, address) is missing or unusable."""


def env_proxy(host: str, proxies: Mapping[str, str] | None = None) -> str | None:
    """The environment's proxy for the scheme of ``host`` (else its ``all`` proxy), as
    ``kubernetes.client.Configuration`` picks it; ``None`` when there is none."""
    proxies = getproxies() if proxies is None else proxies
    return proxies.get(urlsplit(host).scheme) or proxies.get("all")


def _default_pool_maxsize() -> int:
    return (os.cpu_count() or 1) * 5  # kubernetes.client.Configuration's default


@dataclass
class ClientConfig:
    """How to reach one API server; see the module docstring for the fields. ``proxy_from_env`` says whether
    ``proxy`` came from the environment (then ``with_host`` picks the environment's proxy for the new host)."""

    host: str = "http://localhost"
    api_key: dict[str, str] = field(default_factory=dict)
    api_key_prefix: dict[str, str] = field(default_factory=dict)
    refresh_api_key_hook: Callable[[ClientConfig], None] | None = None
    username: str | None = None
    password: str | None = None
    verify_ssl: bool = True
    ssl_ca_cert: str | None = None
    ca_cert_data: str | bytes | None = None
    cert_file: str | None = None
    key_file: str | None = None
    assert_hostname: str | bool | None = None
    tls_server_name: str | None = None
    proxy: str | None = None
    no_proxy: str | None = None
    proxy_headers: dict[str, str] | None = None
    socket_options: list[tuple[int, int, int]] | None = None
    connection_pool_maxsize: int = field(default_factory=_default_pool_maxsize)
    proxy_from_env: bool = False
    credential_files: CredentialFiles | None = field(default=None, repr=False)

    @classmethod
    def for_host(cls, host: str, **fields: Any) -> ClientConfig:
        """A configuration for ``host`` with the environment's proxy settings (unless ``fields`` set ``proxy``)."""
        proxies = getproxies()
        cfg = cls(host=host, **fields)
        if cfg.no_proxy is None:
            cfg.no_proxy = proxies.get("no")
        if "proxy" not in fields:
            cfg.proxy, cfg.proxy_from_env = env_proxy(host, proxies), True
        return cfg

    def with_host(self, host: str) -> ClientConfig:
        """A copy for ``host`` (credentials shared); an environment proxy is picked again for its scheme."""
        copy = dataclasses.replace(self, host=host, api_key=dict(self.api_key), api_key_prefix=dict(self.api_key_prefix))
        if self.proxy_from_env:
            copy.proxy = env_proxy(host)
        return copy

    # -- the kubernetes.client.Configuration surface that apis.http_transport uses ------------------------------------
    def get_api_key_with_prefix(self, identifier: str, alias: str | None = None) -> str | None:
        """``api_key[identifier]`` (else ``[alias]``) with its prefix, after running the refresh hook."""
        if self.refresh_api_key_hook is not None:
            self.refresh_api_key_hook(self)
        return self._key_with_prefix(identifier, alias)

    def _key_with_prefix(self, identifier: str, alias: str | None) -> str | None:
        key = self.api_key.get(identifier) or (self.api_key.get(alias) if alias else None)
        if not key:
            return None
        prefix = self.api_key_prefix.get(identifier) or (self.api_key_prefix.get(alias) if alias else None)
        return f"{prefix} {key}" if prefix else key

    def auth_settings(self) -> dict[str, dict[str, Any]]:
        """``{"BearerToken": {"value": "<Authorization header>", ...}}`` when there is a token, else ``{}``. The
        refresh hook runs first, whatever the configuration has now (it may renew a client certificate too)."""
        if self.refresh_api_key_hook is not None:
            self.refresh_api_key_hook(self)
        if "BearerToken" not in self.api_key and "authorization" not in self.api_key:
            return {}
        value = self._key_with_prefix("BearerToken", "authorization")
        return {"BearerToken": {"type": "api_key", "in": "header", "key": "authorization", "value": value}}

    def get_basic_auth_token(self) -> str:
        """The ``Authorization`` value for ``username``/``password``."""
        raw = f"{self.username or ''}:{self.password or ''}".encode("latin-1")
        return "Basic " + base64.b64encode(raw).decode("ascii")


class CredentialFiles:
    """A private directory of credential files (client certificate and key given as data: urllib3 loads them from
    files only). Removed at interpreter exit or when the last configuration holding it is collected."""

    def __init__(self) -> None:
        self.directory = tempfile.mkdtemp(prefix="sedna-credentials-")  # mode 0700
        self._finalizer = weakref.finalize(self, shutil.rmtree, self.directory, ignore_errors=True)

    def write(self, name: str, data: bytes) -> str:
        """Write ``data`` to ``<directory>/<name>`` (mode 0600), replacing it atomically; returns the path (stable
        per name, so a pool that loads it on each new connection gets the new content)."""
        if len(data) > MAX_CREDENTIAL_BYTES:
            raise ValueError(f"{name} is larger than {MAX_CREDENTIAL_BYTES} bytes")
        path = os.path.join(self.directory, name)
        fd, staging = tempfile.mkstemp(dir=self.directory)  # mode 0600
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            os.replace(staging, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(staging)
            raise
        return path

    def remove(self) -> None:
        """Remove the directory now (a configuration that still names its files cannot open new connections)."""
        self._finalizer()
