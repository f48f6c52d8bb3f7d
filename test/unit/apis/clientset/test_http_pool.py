"""``apis.http_pool.ConnectionPool`` (the transport's plain requests) against conftest's real HTTP/1.1 stub server."""

from __future__ import annotations

import gzip
import socket
import ssl
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import orjson
import pytest
from testkit.procs import free_port, self_signed_cert

from apis.http_errors import ApiConnectionError, ApiConnectionRefusedError, ApiConnectionTimeoutError
from apis.http_pool import ConnectionPool, PooledAnswer
from apis.http_transport import Transport

WAIT = 5.0  # the longest anything here waits for the other side (never reached when the code works)


@pytest.fixture
def pools() -> Iterator[Callable[..., ConnectionPool]]:
    """``pool(port, maxsize=4)``: an http pool to 127.0.0.1:port, closed at teardown."""
    made: list[ConnectionPool] = []

    def make(port: int, maxsize: int = 4) -> ConnectionPool:
        pool = ConnectionPool("http", "127.0.0.1", port, maxsize=maxsize)
        made.append(pool)
        return pool

    yield make
    for pool in made:
        pool.close()


def call(pool: ConnectionPool, method: str = "GET", path: str = "/x", body: bytes | None = None,
         read_timeout: float = WAIT) -> PooledAnswer:
    return pool.request(method, path, body, {"Accept": "application/json"}, connect_timeout=WAIT,
                        read_timeout=read_timeout, total=None, url=f"http://127.0.0.1{path}")


def ok(req: Any, resp: Any) -> None:
    resp.send_json(200, {"path": req.path, "method": req.method, "body": req.body.decode()})


# -- keep-alive --------------------------------------------------------------------------------------------------
def test_keep_alive_reuses_one_connection(stub, pools):
    stub.on_any(ok)
    pool = pools(stub.port)
    for i in range(5):
        answer = call(pool, "GET", f"/r{i}")
        assert answer.status == 200
        assert orjson.loads(answer.body)["path"] == f"/r{i}"
    answer = call(pool, "POST", "/p", b"payload")
    assert orjson.loads(answer.body) == {"path": "/p", "method": "POST", "body": "payload"}
    assert pool.connections_opened == 1
    assert pool.requests_sent == 6
    assert stub.connections == 1 and stub.count() == 6


def test_answer_fields(stub, pools):
    stub.on_any(lambda req, resp: resp.send_bytes(429, b'{"kind":"Status"}', headers={"Retry-After": "7"}))
    answer = call(pools(stub.port))
    assert answer == PooledAnswer(429, "7", b'{"kind":"Status"}')


def test_connection_close_answer_is_not_pooled(stub, pools):
    stub.on_any(lambda req, resp: resp.send_bytes(200, b"{}", headers={"Connection": "close"}))
    pool = pools(stub.port)
    for _ in range(3):
        assert call(pool).status == 200
    assert pool.connections_opened == 3 and pool.requests_sent == 3
    assert stub.count() == 3


def test_at_most_maxsize_idle_connections_are_kept(stub, pools):
    """Two requests in flight at once take two connections; with maxsize 1 only one is kept afterwards."""
    both_in = threading.Barrier(2, timeout=WAIT)

    def answer(req: Any, resp: Any) -> None:
        if req.path == "/together":
            both_in.wait()
        resp.send_json(200, {})

    stub.on_any(answer)
    pool = pools(stub.port, maxsize=1)
    results: list[int] = []
    threads = [threading.Thread(target=lambda: results.append(call(pool, path="/together").status))
               for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=WAIT)
    assert results == [200, 200]
    assert pool.connections_opened == 2
    stub.closed.get(timeout=WAIT)  # the connection not kept was closed by the client, then by the server
    for _ in range(3):
        assert call(pool).status == 200
    assert pool.connections_opened == 2  # the one idle connection served the rest
    assert stub.connections == 2


# -- an idle connection the server closed --------------------------------------------------------------------------
def _wait_until_readable(sock: socket.socket) -> None:
    """Wait (bounded) until the FIN of the server's close has reached the client socket."""
    import select

    readable, _, _ = select.select([sock], [], [], WAIT)
    assert readable, "the server's close never reached the client"


@pytest.mark.parametrize("method", ["POST", "GET", "PUT", "DELETE"])
def test_idle_connection_closed_by_the_server_is_replaced_before_sending(stub, pools, method):
    def answer(req: Any, resp: Any) -> None:
        ok(req, resp)
        if req.path == "/first":
            resp.hang_up()  # closes after answering, without "Connection: close"

    stub.on_any(answer)
    pool = pools(stub.port)
    assert call(pool, "GET", "/first").status == 200
    assert pool.connections_opened == 1
    stub.closed.get(timeout=WAIT)  # the server has closed its end
    (idle,) = pool._idle  # kept: the answer did not say it would close
    assert idle.sock is not None
    _wait_until_readable(idle.sock)

    answer_ = call(pool, method, "/second", b"data" if method in ("POST", "PUT") else None)
    assert answer_.status == 200
    assert orjson.loads(answer_.body)["method"] == method
    assert stub.count(method, "/second") == 1
    assert stub.count() == 2
    assert pool.connections_opened == 2
    assert pool.requests_sent == 2  # nothing was sent on the dead connection
    assert stub.connections == 2


# -- a connection lost once the request may have been sent ---------------------------------------------------------
def drop_first(stub: Any) -> None:
    """No answer to the first request: the connection is closed; later requests are answered."""
    def answer(req: Any, resp: Any) -> None:
        if stub.count() == 1:
            resp.hang_up()
            return
        ok(req, resp)

    stub.on_any(answer)


def test_get_is_replayed_once_after_a_lost_connection(stub, pools):
    drop_first(stub)
    pool = pools(stub.port)
    answer = call(pool, "GET", "/g")
    assert answer.status == 200
    assert stub.count("GET", "/g") == 2
    assert pool.connections_opened == 2 and pool.requests_sent == 2


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE"])
def test_non_idempotent_request_is_not_replayed_after_a_lost_connection(stub, pools, method):
    drop_first(stub)
    pool = pools(stub.port)
    with pytest.raises(ApiConnectionError) as exc:
        call(pool, method, "/p", b"x")
    assert not isinstance(exc.value, ApiConnectionTimeoutError)
    assert exc.value.method == method
    assert stub.count() == 1
    assert pool.requests_sent == 1
    # the pool is still usable
    assert call(pool, method, "/p", b"x").status == 200


def test_get_is_replayed_only_once(stub, pools):
    stub.on_any(lambda req, resp: resp.hang_up())  # never answers
    pool = pools(stub.port)
    with pytest.raises(ApiConnectionError):
        call(pool, "GET", "/g")
    assert pool.requests_sent == 2
    assert pool.connections_opened == 2


# -- gzip ---------------------------------------------------------------------------------------------------------
def test_gzip_answer_is_decompressed(stub, pools):
    payload = orjson.dumps({"items": ["x" * 50] * 20})
    stub.on_any(lambda req, resp: resp.send_bytes(200, gzip.compress(payload), headers={"Content-Encoding": "gzip"}))
    answer = call(pools(stub.port))
    assert answer.body == payload


def test_gzip_answer_through_the_transport(stub):
    payload = {"kind": "PodList", "items": [{"name": f"p{i}"} for i in range(50)]}
    stub.on_any(lambda req, resp: resp.send_bytes(200, gzip.compress(orjson.dumps(payload)),
                                                  headers={"Content-Encoding": "gzip"}))
    transport = Transport(SimpleNamespace(host=stub.url), connect_timeout=WAIT,
                          read_timeout=WAIT)
    try:
        assert transport.request("GET", "/api/v1/pods") == payload
        assert transport.request("GET", "/api/v1/pods") == payload
        assert transport._requests is not None
        assert transport._requests.connections_opened == 1
        assert transport._requests.requests_sent == 2
    finally:
        transport.close()
    assert [r.headers.get("accept-encoding") for r in stub.requests] == ["gzip", "gzip"]


def test_undecodable_gzip_answer_is_a_connection_error(stub, pools):
    stub.on_any(lambda req, resp: resp.send_bytes(200, b"not gzip at all", headers={"Content-Encoding": "gzip"}))
    with pytest.raises(ApiConnectionError, match="gzip"):
        call(pools(stub.port))


def test_identity_answer_is_left_alone(stub, pools):
    raw = gzip.compress(b"{}")
    stub.on_any(lambda req, resp: resp.send_bytes(200, raw))
    assert call(pools(stub.port)).body == raw


# -- failures to connect --------------------------------------------------------------------------------------------
def test_connection_refused(pools):
    pool = pools(free_port())
    with pytest.raises(ApiConnectionRefusedError) as exc:
        call(pool, "GET", "/nobody")
    assert isinstance(exc.value, ConnectionRefusedError)
    assert isinstance(exc.value, ApiConnectionError)
    assert exc.value.method == "GET" and "/nobody" in exc.value.url
    assert pool.requests_sent == 0


def test_connection_refused_for_post_too(pools):
    with pytest.raises(ApiConnectionRefusedError):
        call(pools(free_port()), "POST", "/p", b"x")


def test_connection_refused_through_the_transport():
    transport = Transport(SimpleNamespace(host=f"http://127.0.0.1:{free_port()}"), connect_timeout=WAIT,
                          read_timeout=WAIT)
    try:
        with pytest.raises(ConnectionRefusedError):
            transport.request("GET", "/api")
    finally:
        transport.close()


# -- read timeout -------------------------------------------------------------------------------------------------
def answer_slowly(stub: Any) -> None:
    """Requests are answered only once the test is over."""
    over = stub.gate()

    def answer(req: Any, resp: Any) -> None:
        over.wait(WAIT)
        resp.send_json(200, {})

    stub.on_any(answer)


def test_read_timeout_is_not_replayed(stub, pools):
    answer_slowly(stub)
    pool = pools(stub.port)
    with pytest.raises(ApiConnectionTimeoutError) as exc:
        call(pool, "GET", "/slow", read_timeout=0.2)
    assert "read timeout" in str(exc.value)
    assert isinstance(exc.value, TimeoutError) and isinstance(exc.value, ApiConnectionError)
    assert pool.requests_sent == 1
    assert pool.connections_opened == 1
    assert stub.count() == 1
    assert not pool._idle  # the timed-out connection is not given back


def test_total_timeout_bounds_the_read(stub, pools):
    answer_slowly(stub)
    pool = pools(stub.port)
    with pytest.raises(ApiConnectionTimeoutError, match="read timeout"):
        pool.request("GET", "/slow", None, {}, connect_timeout=WAIT, read_timeout=WAIT, total=0.2,
                     url="http://127.0.0.1/slow")
    assert pool.requests_sent == 1


def test_https_pool_needs_a_tls_context():
    with pytest.raises(ValueError):
        ConnectionPool("https", "127.0.0.1", 443, maxsize=1)


# -- TLS ------------------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def certificate(tmp_path_factory) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 and its key (made once: generating the key takes a while)."""
    return self_signed_cert(tmp_path_factory.mktemp("tls"), host="127.0.0.1")


@pytest.fixture
def tls_server(certificate, make_stub):
    """An HTTPS stub server with the self-signed certificate; returns (server, CA file)."""
    cert, key = certificate
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(str(cert), str(key))
    srv = make_stub(context)
    srv.on_any(lambda req, resp: resp.send_json(200, {"tls": True, "path": req.path}))
    return srv, cert


def _tls_config(port: int, **kw: Any) -> SimpleNamespace:
    cfg: dict[str, Any] = {"host": f"https://127.0.0.1:{port}", "verify_ssl": True, "ssl_ca_cert": None,
                           "cert_file": None, "key_file": None, "tls_server_name": None, "ca_cert_data": None}
    cfg.update(kw)
    return SimpleNamespace(**cfg)


@pytest.fixture
def transports() -> Iterator[Callable[[SimpleNamespace], Transport]]:
    made: list[Transport] = []

    def make(cfg: SimpleNamespace) -> Transport:
        transport = Transport(cfg, connect_timeout=WAIT, read_timeout=WAIT)
        made.append(transport)
        return transport

    yield make
    for transport in made:
        transport.close()


def test_tls_verified_with_the_ca_file(tls_server, transports):
    srv, ca = tls_server
    transport = transports(_tls_config(srv.port, ssl_ca_cert=str(ca)))
    assert transport._requests is not None  # the request goes through apis.http_pool
    assert transport.request("GET", "/api") == {"tls": True, "path": "/api"}
    assert transport.request("GET", "/apis") == {"tls": True, "path": "/apis"}
    assert transport._requests.connections_opened == 1


def test_tls_verified_with_ca_data(tls_server, transports):
    srv, ca = tls_server
    transport = transports(_tls_config(srv.port, ca_cert_data=ca.read_text()))
    assert transport.request("GET", "/api") == {"tls": True, "path": "/api"}


def test_tls_without_verification_needs_no_ca(tls_server, transports):
    srv, _ = tls_server
    transport = transports(_tls_config(srv.port, verify_ssl=False))
    assert transport.request("GET", "/api") == {"tls": True, "path": "/api"}


def test_tls_without_the_ca_fails_verification(tls_server, transports):
    srv, _ = tls_server
    transport = transports(_tls_config(srv.port))  # the system's CAs do not know the self-signed certificate
    with pytest.raises(ApiConnectionError, match="(?i)certificate"):
        transport.request("GET", "/api")
    assert srv.count() == 0


def test_tls_server_name_other_than_the_certificate_fails(tls_server, transports):
    srv, ca = tls_server
    transport = transports(_tls_config(srv.port, ssl_ca_cert=str(ca), tls_server_name="other.example"))
    with pytest.raises(ApiConnectionError, match="(?i)certificate") as exc:
        transport.request("GET", "/api")
    assert not isinstance(exc.value, ConnectionRefusedError)
    assert srv.count() == 0


def test_missing_ca_file_fails_the_request_not_the_construction(tls_server, transports, tmp_path):
    srv, _ = tls_server
    missing = tmp_path / "no-such-ca.crt"
    transport = transports(_tls_config(srv.port, ssl_ca_cert=str(missing)))  # does not raise
    with pytest.raises(ApiConnectionError) as exc:
        transport.request("GET", "/api")
    assert exc.value.method == "GET"
    assert srv.count() == 0
    # still failing on the next request (nothing half-made was cached)
    with pytest.raises(ApiConnectionError):
        transport.request("GET", "/api")


def test_tls_pool_directly(tls_server):
    from apis.http_pool import tls_context

    srv, ca = tls_server
    pool = ConnectionPool("https", "127.0.0.1", srv.port, maxsize=2, tls=lambda: tls_context(
        verify=True, ca_file=str(ca), ca_data=None, cert_file=None, key_file=None))
    try:
        for _ in range(3):
            assert call(pool).status == 200
        assert pool.connections_opened == 1 and pool.requests_sent == 3
    finally:
        pool.close()


# -- an answer before the whole body was read ---------------------------------------------------------------------
def test_an_answer_sent_before_the_body_was_read_is_returned(pools):
    """A server that answers 413 to a body over its limit without reading it and closes (the sandbox, kube-apiserver):
    the client's send breaks, and the answer is returned all the same, not a connection error."""
    listener = socket.create_server(("127.0.0.1", 0))
    status = orjson.dumps({"kind": "Status", "code": 413, "reason": "RequestEntityTooLarge"})

    def serve_once() -> None:
        conn, _ = listener.accept()
        with conn:
            head = b""
            while b"\r\n\r\n" not in head:
                head += conn.recv(65536)
            conn.sendall(b"HTTP/1.1 413 Request Entity Too Large\r\nContent-Type: application/json\r\n"
                         b"Connection: close\r\nContent-Length: %d\r\n\r\n%s" % (len(status), status))

    server = threading.Thread(target=serve_once, daemon=True)
    server.start()
    try:
        answer = call(pools(listener.getsockname()[1]), "PUT", body=b"x" * (16 * 1024 * 1024))
    finally:
        server.join(WAIT)
        listener.close()
    assert (answer.status, orjson.loads(answer.body)["reason"]) == (413, "RequestEntityTooLarge")
