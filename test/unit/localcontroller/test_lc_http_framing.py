"""The worker API's HTTP layer (issue 26 item 4, issue 27 item 16): RFC 9112 framing over a raw socket, many
concurrent clients, a deadline for a slow body, ``/livez``, the body bound and the answers to an empty ``ownerName``
and to a report the LC cannot keep now."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator

import pytest
import structlog.testing
from prometheus_client import CollectorRegistry
from testkit.logs import capture_library_logs
from testkit.rawhttp import concurrent_gets, exchange, statuses

from apis.httpserver import HTTPLimits
from localcontroller.metrics import LCMetrics
from localcontroller.server import DELIVERED, MAX_BODY_BYTES, LCServer, ReportRefused
from localcontroller.worker import WorkerMessage

REPORT = {"name": "w", "namespace": "default", "ownerName": "il", "ownerKind": "incrementallearningjob",
          "kind": "train", "status": "completed"}
BODY = json.dumps(REPORT).encode()


class Worker:
    """An LC server whose deliveries are recorded (or refused when ``refuse`` is set)."""

    def __init__(self, limits: HTTPLimits | None = None) -> None:
        self.delivered: list[WorkerMessage] = []
        self.refuse: str = ""
        self.registry = CollectorRegistry()
        self.server = LCServer("127.0.0.1", 0, LCMetrics(self.registry, lambda: 0), self.deliver, lambda: True,
                               limits=limits)
        self.server.start()

    def deliver(self, message: WorkerMessage, client: str = "") -> str:
        if self.refuse:
            raise ReportRefused(self.refuse, retry_after=7)
        self.delivered.append(message)
        return DELIVERED

    def post(self, body: bytes, extra_headers: str = "") -> bytes:
        head = (f"POST /sedna/workers/w/info HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                f"Content-Length: {len(body)}\r\n{extra_headers}\r\n")
        return exchange(self.server.port, head.encode() + body)

    def count(self, result: str) -> float:
        return self.registry.get_sample_value("sedna_lc_worker_reports_total", {"result": result}) or 0.0


@pytest.fixture
def worker() -> Iterator[Worker]:
    w = Worker()
    yield w
    w.server.stop()


HEAD = b"POST /sedna/workers/w/info HTTP/1.1\r\nHost: x\r\n"


@pytest.mark.parametrize("framing", [
    "Content-Length: \u00b2".encode(),  # a Unicode digit, UTF-8
    b"Content-Length: \xb2",  # the same in Latin-1, as HTTP header bytes are read: str.isdigit() and int() take it
    b"Content-Length: +2",
    b"Content-Length: 2abc",
    b"Content-Length: 2\r\nContent-Length: 5",  # two different lengths
    b"Content-Length: 2, 5",
])
def test_a_bad_content_length_is_a_400_and_a_close_without_a_traceback(worker, framing, capsys):
    answer = exchange(worker.server.port, HEAD + framing + b"\r\n\r\n{}abc")
    assert statuses(answer) == [400]
    assert not worker.delivered
    assert "Traceback" not in capsys.readouterr().err


def test_chunked_with_content_length_is_refused_and_nothing_is_smuggled(worker):
    smuggled = b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"
    body = b"0\r\n\r\n" + smuggled
    with capture_library_logs() as logs:
        answer = exchange(worker.server.port, HEAD + b"Transfer-Encoding: chunked\r\nContent-Length: "
                          + str(len(body)).encode() + b"\r\n\r\n" + body)
    assert statuses(answer) == [400]  # one answer: the GET after the chunked end was never read as a request
    assert any(e["event"] == "refused an HTTP request" and "Transfer-Encoding" in e["reason"] for e in logs)


def test_a_chunked_report_alone_is_accepted(worker):
    chunk = hex(len(BODY))[2:].encode()
    answer = exchange(worker.server.port, HEAD + b"Connection: close\r\nTransfer-Encoding: chunked\r\n\r\n"
                      + chunk + b"\r\n" + BODY + b"\r\n0\r\n\r\n")
    assert statuses(answer) == [200] and worker.delivered[0].owner_name == "il"


def test_64_concurrent_clients_are_all_served_without_a_reset(worker):
    assert concurrent_gets(worker.server.port, "/healthz", 64) == [200] * 64


def read_all(sock: socket.socket) -> bytes:
    answer = b""
    while chunk := sock.recv(65536):
        answer += chunk
    return answer


def test_clients_past_the_connection_limit_wait_in_the_listen_backlog_and_are_served():
    w = Worker(HTTPLimits(connection_limit=1, threads=2))
    try:
        held = socket.create_connection(("127.0.0.1", w.server.port), timeout=10)
        held.sendall(b"GET /livez HTTP/1.1\r\nHost: x\r\n\r\n")
        assert held.recv(65536).startswith(b"HTTP/1.1 200")  # accepted and kept alive: the one connection allowed
        # the server accepts no more now; the kernel completes 64 handshakes into the backlog (a backlog of 5, as
        # http.server's, would leave most of these connects unanswered or reset)
        waiting = [socket.create_connection(("127.0.0.1", w.server.port), timeout=10) for _ in range(64)]
        for sock in waiting:
            sock.sendall(b"GET /livez HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        held.close()  # room again: the waiting ones are accepted one after another
        assert [statuses(read_all(sock)) for sock in waiting] == [[200]] * 64
        for sock in waiting:
            sock.close()
    finally:
        w.server.stop()


def test_a_slow_body_hits_the_request_deadline():
    w = Worker(HTTPLimits(request_deadline=0.5, idle_timeout=30, max_body_bytes=MAX_BODY_BYTES))
    try:
        with socket.create_connection(("127.0.0.1", w.server.port), timeout=20) as slow, \
                capture_library_logs() as logs:
            slow.sendall(HEAD + f"Content-Length: {len(BODY)}\r\n\r\n".encode() + BODY[:5])
            answer = read_all(slow)  # the server answers and closes: no more trickling needed
        assert statuses(answer) == [408]
        assert any(e["event"] == "refused an HTTP request" and e["status"] == 408 for e in logs)
        assert not w.delivered
    finally:
        w.server.stop()


def test_livez_and_healthz_answer_while_the_process_serves(worker):
    for path in ("/livez", "/healthz"):
        answer = exchange(worker.server.port, f"GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
        assert statuses(answer) == [200] and answer.endswith(b"ok\n")


def test_a_report_of_several_mib_is_accepted_and_one_over_the_bound_is_a_413(worker):
    big = json.dumps({**REPORT, "ownerInfo": {"metrics": "x" * (3 * 1024 * 1024)}}).encode()
    assert statuses(worker.post(big)) == [200]
    assert len(worker.delivered[0].owner_info["metrics"]) == 3 * 1024 * 1024
    over = b" " * (MAX_BODY_BYTES + 1)
    head = (f"POST /sedna/workers/w/info HTTP/1.1\r\nHost: x\r\nContent-Length: {len(over)}\r\n\r\n").encode()
    assert statuses(exchange(worker.server.port, head)) == [413]  # refused from its headers, before any body


def test_an_empty_owner_name_is_answered_200_and_dropped_with_a_log(worker):
    with structlog.testing.capture_logs() as logs:
        answer = worker.post(json.dumps({**REPORT, "ownerName": ""}).encode())
    assert statuses(answer) == [200] and answer.endswith(b'{"Status":200,"Message":"OK"}')
    assert not worker.delivered and worker.count("dropped") == 1
    assert any("without ownerName" in e["event"] for e in logs)


def test_a_report_the_lc_cannot_keep_now_is_a_503_with_retry_after(worker):
    worker.refuse = "the outbox is full"
    with structlog.testing.capture_logs() as logs:
        answer = worker.post(BODY)
    assert statuses(answer) == [503] and b"Retry-After: 7\r\n" in answer
    assert answer.endswith(b'{"Status":503,"Message":"the outbox is full"}')
    assert worker.count("refused") == 1
    assert any(e["event"].startswith("refused a worker report") and e["reason"] == "the outbox is full" for e in logs)
