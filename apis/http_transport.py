"""HTTP transport of the real clientset: thread-safe keep-alive connections per clientset (requests over
``apis.http_pool``'s http.client pool; watches, and requests through a proxy, over urllib3), auth and TLS taken from
an ``apis.clientconfig.ClientConfig`` (or a ``kubernetes.client.Configuration``: the same attribute names), raw JSON
in and out (orjson, parsed once).

Guarantees:
- A non-2xx answer raises the typed ``apis.errors.ApiError`` built from the ``Status`` body (``from_http``), also
  when it carries ``Retry-After`` (429/503/413): the seconds are on ``err.retry_after``; nothing here waits.
- Only GET/HEAD/OPTIONS are replayed (once) after a dropped connection; see ``apis.http_pool`` and
  ``_StaleConnectionRetry``.
- A request that gets no HTTP answer raises ``ApiConnectionError`` (a built-in ``ConnectionError``). A refused
  connection raises ``ApiConnectionRefusedError``, which is also the built-in ``ConnectionRefusedError``: code that
  treats "connection refused" as retriable (the Reflector) tests ``isinstance(err, ConnectionRefusedError)`` and
  needs no import of this module. Timeouts raise ``ApiConnectionTimeoutError`` (also the built-in ``TimeoutError``).
- Every request has a connect timeout and a read timeout (and ``total_timeout`` when set, for both together), so a
  dead socket never blocks a caller forever.

This module never imports the ``kubernetes`` package: the configuration is only read (duck-typed).
"""

from __future__ import annotations

import http.client
import ssl
import threading
from collections.abc import Mapping
from types import TracebackType
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode, urlsplit

import orjson
import urllib3
from urllib3.connectionpool import ConnectionPool, HTTPConnectionPool
from urllib3.exceptions import (
    ConnectTimeoutError,
    MaxRetryError,
    NewConnectionError,
    ReadTimeoutError,
)

from . import errors
from .http_errors import (
    REPLAYABLE_METHODS,
    ApiConnectionError,
    ApiConnectionRefusedError,
    ApiConnectionTimeoutError,
    ConnectionRefusedApiError,
)
from .http_pool import ConnectionPool as RequestPool
from .http_pool import tls_context

if TYPE_CHECKING:
    from typing import Self  # Python 3.11+; the project supports 3.10

__all__ = [
    "ApiConnectionError",
    "ApiConnectionRefusedError",
    "ConnectionRefusedApiError",
    "ApiConnectionTimeoutError",
    "ResponseDecodeError",
    "Transport",
    "DEFAULT_USER_AGENT",
    "JSON",
    "is_connection_refused",
    "new_retry_policy",
    "REPLAYABLE_METHODS",
]

DEFAULT_USER_AGENT = "sedna-controlplane/0.1.0"
JSON = "application/json"
MIN_POOL_SIZE = 10


class ResponseDecodeError(ValueError):
    """A 2xx answer whose body is not JSON."""


def is_connection_refused(err: BaseException) -> bool:
    """True for a refused connection, whichever layer raised it."""
    return isinstance(err, ConnectionRefusedError)


def _chain(exc: BaseException | None):
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        yield exc
        nxt = exc.reason if isinstance(exc, MaxRetryError) else None
        exc = nxt or exc.__cause__ or exc.__context__


def connection_error(method: str, url: str, exc: BaseException) -> ApiConnectionError:
    """Classify a transport failure into one of the ``ApiConnectionError`` kinds, keeping the cause's wording."""
    chain = list(_chain(exc))
    root = chain[-1]
    if any(isinstance(e, ConnectionRefusedError) for e in chain):
        return ApiConnectionRefusedError(method, url, "connection refused")
    if any(isinstance(e, (ConnectTimeoutError, ReadTimeoutError, TimeoutError)) for e in chain):
        kind = "connect" if any(isinstance(e, ConnectTimeoutError) for e in chain) else "read"
        return ApiConnectionTimeoutError(method, url, f"{kind} timeout ({root})")
    if any(isinstance(e, NewConnectionError) for e in chain):
        return ApiConnectionError(method, url, f"cannot connect: {root}")
    return ApiConnectionError(method, url, f"{type(root).__name__}: {root}")


def _pool_manager(cfg: Any, maxsize: int) -> urllib3.PoolManager:
    """A pool manager with the TLS, proxy and socket settings of the configuration."""
    kw: dict[str, Any] = {
        "cert_reqs": ssl.CERT_REQUIRED if getattr(cfg, "verify_ssl", True) else ssl.CERT_NONE,
        "ca_certs": getattr(cfg, "ssl_ca_cert", None),
        "cert_file": getattr(cfg, "cert_file", None),
        "key_file": getattr(cfg, "key_file", None),
        "ca_cert_data": getattr(cfg, "ca_cert_data", None),
        "maxsize": maxsize,
        "block": False,  # watches hold connections for minutes: never make a request wait for a free slot
    }
    if getattr(cfg, "assert_hostname", None) is not None:
        kw["assert_hostname"] = cfg.assert_hostname
    if getattr(cfg, "tls_server_name", None):
        kw["server_hostname"] = cfg.tls_server_name
    if getattr(cfg, "socket_options", None) is not None:
        kw["socket_options"] = cfg.socket_options
    proxy = getattr(cfg, "proxy", None)
    if proxy and not _bypasses_proxy(cfg.host, getattr(cfg, "no_proxy", None) or ""):
        if proxy.startswith("socks"):
            from urllib3.contrib.socks import SOCKSProxyManager  # needs PySocks; the import error names it

            return SOCKSProxyManager(proxy, headers=getattr(cfg, "proxy_headers", None), **kw)
        return urllib3.ProxyManager(proxy, proxy_headers=getattr(cfg, "proxy_headers", None), **kw)
    return urllib3.PoolManager(**kw)


def _bypasses_proxy(host: str, no_proxy: str) -> bool:
    hostname = (urlsplit(host).hostname or "").lower()
    for entry in (e.strip().lower().lstrip(".") for e in no_proxy.split(",")):
        if entry and (entry == "*" or hostname == entry or hostname.endswith("." + entry)):
            return True
    return False


class _StaleConnectionRetry(urllib3.Retry):
    """Retry an idempotent request (``REPLAYABLE_METHODS``) once when its pooled keep-alive connection turns out
    dead; never retry a read timeout (the server is slow, not gone: waiting twice as long helps nobody).

    Never retries on an HTTP status and ignores ``Retry-After``: a 413/429/503 answer is returned and mapped to
    its ``ApiError`` (with ``retry_after``); backing off is the caller's business. A pooled connection that urllib3
    finds closed *before* sending is replaced silently for any method (``is_connection_dropped``), spending no
    retry; once bytes may have left, urllib3 cannot tell "nothing written" apart, so a non-idempotent request is
    never replayed and the caller gets ``ApiConnectionError``."""

    def increment(
        self,
        method: str | None = None,
        url: str | None = None,
        response: urllib3.BaseHTTPResponse | None = None,
        error: Exception | None = None,
        _pool: ConnectionPool | None = None,
        _stacktrace: TracebackType | None = None,
    ) -> Self:
        if isinstance(error, ReadTimeoutError):
            # urllib3 always passes its pool here (its signature says it may be None)
            raise MaxRetryError(_pool, url or "", error) from error  # type: ignore[arg-type]
        return super().increment(method, url, response, error, _pool, _stacktrace)


def new_retry_policy() -> urllib3.Retry:
    """The transport's retry policy: no connect retries (callers back off themselves), one replay of an idempotent
    request whose pooled connection died, no status retries (``Retry-After`` is not obeyed here)."""
    return _StaleConnectionRetry(
        total=1,
        connect=0,
        read=1,
        redirect=False,
        status=0,
        other=0,
        allowed_methods=REPLAYABLE_METHODS,
        status_forcelist=(),
        raise_on_status=False,
        respect_retry_after_header=False,
    )


class Transport:
    """Sends requests to one API server. Thread-safe; one pool of keep-alive connections shared by all callers."""

    def __init__(
        self,
        configuration: Any,
        *,
        connect_timeout: float = 10.0,
        read_timeout: float = 60.0,
        user_agent: str = DEFAULT_USER_AGENT,
        compression: bool = True,
        pool_maxsize: int | None = None,
    ) -> None:
        host = (getattr(configuration, "host", "") or "").rstrip("/")
        parts = urlsplit(host)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"invalid API server address {host!r}: expected http(s)://host[:port]")
        if connect_timeout <= 0 or read_timeout <= 0:
            raise ValueError("connect_timeout and read_timeout must be positive seconds")
        self.configuration = configuration
        self.host = host
        self._origin = f"{parts.scheme}://{parts.netloc}"
        self._base_path = parts.path  # e.g. a proxy's /k8s/clusters/c-1: every request path goes under it
        self.connect_timeout = connect_timeout
        self.read_timeout = read_timeout
        self.total_timeout: float | None = None  # when set, bounds connecting and reading together
        self.user_agent = user_agent
        self.compression = compression
        size = max(MIN_POOL_SIZE, pool_maxsize or getattr(configuration, "connection_pool_maxsize", 0) or 0)
        self._pool = _pool_manager(configuration, size)
        # Without a proxy every request goes to the one pool of ``host``: asked for directly, not through the pool
        # manager's per-request URL parsing and pool lookup.
        self._direct = type(self._pool) is urllib3.PoolManager
        self._host_pool: HTTPConnectionPool | None = None
        self._retries = new_retry_policy()
        self._auth_lock = threading.Lock()
        # Plain requests to the server itself go through http.client (``apis.http_pool``); through a proxy, or with
        # urllib3's assert_hostname, they take urllib3's pool as watches do.
        self._requests: RequestPool | None = None
        if self._direct and getattr(configuration, "assert_hostname", None) is None:
            cfg = configuration
            tls = None if parts.scheme != "https" else lambda: tls_context(
                verify=bool(getattr(cfg, "verify_ssl", True)), ca_file=getattr(cfg, "ssl_ca_cert", None),
                ca_data=getattr(cfg, "ca_cert_data", None), cert_file=getattr(cfg, "cert_file", None),
                key_file=getattr(cfg, "key_file", None))
            self._requests = RequestPool(
                parts.scheme, parts.hostname, parts.port, maxsize=size, tls=tls,
                server_hostname=getattr(configuration, "tls_server_name", None) or None,
                socket_options=getattr(configuration, "socket_options", None) or (),
            )

    # -- helpers ---------------------------------------------------------------------------------------------------
    def url(self, path: str, query: dict[str, str] | None = None) -> str:
        return self._origin + self._target(path, query)

    def _target(self, path: str, query: dict[str, str] | None) -> str:
        """What goes on the request line: the server's base path, ``path`` and the encoded query."""
        return self._base_path + path + ("?" + urlencode(query) if query else "")

    def auth_headers(self) -> dict[str, str]:
        """The Authorization header for the next request (a bearer token is refreshed through the configuration)."""
        cfg = self.configuration
        with self._auth_lock:  # the refresh hook rewrites cfg.api_key
            settings = cfg.auth_settings() if hasattr(cfg, "auth_settings") else {}
            token = (settings.get("BearerToken") or {}).get("value")
            if not token and (getattr(cfg, "username", None) or getattr(cfg, "password", None)):
                token = cfg.get_basic_auth_token()
        return {"Authorization": token.strip()} if token else {}

    def _headers(self, stream: bool) -> dict[str, str]:
        headers = {"Accept": JSON, "User-Agent": self.user_agent}
        if self.compression and not stream:
            headers["Accept-Encoding"] = "gzip"
        headers.update(self.auth_headers())
        return headers

    def _urlopen(self, method: str, target: str, **kw: Any) -> urllib3.BaseHTTPResponse:
        """Send one request for ``target`` (see ``_target``) through the pool of ``host`` (or the proxy's manager);
        ``kw`` as urllib3's urlopen."""
        if not self._direct:
            return self._pool.urlopen(method, self._origin + target, **kw)
        pool = self._host_pool
        if pool is None or pool.pool is None:  # first use, or closed by close()
            pool = self._host_pool = self._pool.connection_from_url(self._origin)
        return pool.urlopen(method, target, assert_same_host=False, **kw)

    # -- requests --------------------------------------------------------------------------------------------------
    def request(
        self,
        method: str,
        path: str,
        *,
        query: dict[str, str] | None = None,
        body: Mapping[str, Any] | bytes | None = None,
        content_type: str = JSON,
    ) -> dict[str, Any]:
        """Send one request and return the decoded JSON object ({} for an empty body); an answer that is not a JSON
        object (every API server answer is one: an object, a List or a Status) raises ``ResponseDecodeError``."""
        target = self._target(path, query)
        headers = self._headers(stream=False)
        data: bytes | None = None
        if body is not None:
            data = body if isinstance(body, bytes) else orjson.dumps(body)
            headers["Content-Type"] = content_type
        if self._requests is not None:
            answer = self._requests.request(method, target, data, headers, connect_timeout=self.connect_timeout,
                                            read_timeout=self.read_timeout, total=self.total_timeout,
                                            url=self._origin + target)
            status, data, retry_after = answer.status, answer.body, answer.retry_after
        else:
            try:
                resp = self._urlopen(
                    method,
                    target,
                    body=data,
                    headers=headers,
                    timeout=urllib3.Timeout(connect=self.connect_timeout, read=self.read_timeout,
                                            total=self.total_timeout),
                    retries=self._retries,
                    redirect=False,
                )
            except (urllib3.exceptions.HTTPError, OSError, http.client.HTTPException) as exc:
                raise connection_error(method, self._origin + target, exc) from exc
            status, data, retry_after = resp.status, resp.data, resp.headers.get("Retry-After")
        if not 200 <= status < 300:
            raise errors.from_http(status, data, errors.parse_retry_after(retry_after))
        if not data:
            return {}
        try:
            answer = orjson.loads(data)
        except orjson.JSONDecodeError as exc:
            raise ResponseDecodeError(
                f"{method} {self._origin + target}: the server answered {status} with a body that is not JSON: {exc}"
            ) from None
        if not isinstance(answer, dict):
            raise ResponseDecodeError(f"{method} {self._origin + target}: the server answered {status} with JSON that "
                                      f"is not an object but {type(answer).__name__}")
        return answer

    def stream(self, path: str, query: dict[str, str], read_timeout: float) -> urllib3.BaseHTTPResponse:
        """Open a streaming GET (a watch); ``read_timeout`` bounds the silence between two reads."""
        target = self._target(path, query)
        try:
            resp = self._urlopen(
                "GET",
                target,
                headers=self._headers(stream=True),
                timeout=urllib3.Timeout(connect=self.connect_timeout, read=read_timeout),
                retries=self._retries,
                redirect=False,
                preload_content=False,
            )
        except (urllib3.exceptions.HTTPError, OSError, http.client.HTTPException) as exc:
            raise connection_error("GET", self._origin + target, exc) from exc
        if not 200 <= resp.status < 300:
            try:
                data = resp.read()
            except (urllib3.exceptions.HTTPError, OSError, http.client.HTTPException):
                data = b""
            finally:
                resp.release_conn()
            raise errors.from_http(resp.status, data, errors.parse_retry_after(resp.headers.get("Retry-After")))
        return resp

    def close(self) -> None:
        """Close every pooled connection (open watches keep theirs until they end)."""
        if self._requests is not None:
            self._requests.close()
        pools = self._pool.pools
        for key in list(pools.keys()):
            pool = pools.get(key)
            if pool is not None:
                pool.close()  # PoolManager.clear() alone leaves the connections open until the pool is collected
        self._pool.clear()
