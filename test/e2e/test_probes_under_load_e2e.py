"""Issue 38 item 3, end to end: while 1,000 connections trickle into sedna-lc's worker API (or sedna-gm's metrics
port) from many client addresses, more than that server's whole connection limit, the kubelet's probes, on their own
listener, still answer; and the trickling requests are ended by the header deadline (408), not held for as long as
they trickle. No wall-clock assertion: each probe has a bounded client timeout, and the trickling connections are
counted open while it answers."""

from __future__ import annotations

import resource
import selectors
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from testkit import Processes, announced_url, http_get, start_gm, start_lc, wait_for
from testkit.rawhttp import statuses

pytestmark = pytest.mark.e2e

SOURCES = [f"127.0.0.{i}" for i in range(2, 18)]  # 16 client addresses: each under the per-client limit (64)
PER_SOURCE = 63
TRICKLING = len(SOURCES) * PER_SOURCE  # 1,008
PROBE_TIMEOUT = 3.0  # seconds: a probe that waits longer fails (kubelet's default is 1 s)


class Trickle:
    """Slowloris: ``TRICKLING`` connections to ``port``, each sending a request line and then one header byte every
    0.2 s; counts those the server still holds open and the answers of those it ended."""

    def __init__(self, port: int) -> None:
        self.selector = selectors.DefaultSelector()
        self.received: dict[socket.socket, bytes] = {}
        self.ended: list[bytes] = []  # what each connection the server closed had received
        self._lock = threading.Lock()
        self._stop = threading.Event()
        for source in SOURCES:
            for _ in range(PER_SOURCE):
                sock = socket.socket()
                sock.bind((source, 0))
                sock.settimeout(10)
                sock.connect(("127.0.0.1", port))  # completes in the listen backlog even before the server accepts
                sock.setblocking(False)
                sock.send(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ")
                self.selector.register(sock, selectors.EVENT_READ)
                self.received[sock] = b""
        self._thread = threading.Thread(target=self._run, name="trickle", daemon=True)
        self._thread.start()

    def open_connections(self) -> int:
        with self._lock:
            return len(self.received)

    def timed_out(self) -> int:
        """Connections the server ended with a 408 (the header deadline)."""
        with self._lock:
            return sum(1 for answer in self.ended if statuses(answer) == [408])

    def _run(self) -> None:
        while not self._stop.is_set():
            for key, _ in self.selector.select(timeout=0.2):
                self._read(key.fileobj)  # type: ignore[arg-type]
            with self._lock:
                socks = list(self.received)
            for sock in socks:
                try:
                    sock.send(b"a")
                except (BlockingIOError, InterruptedError):
                    pass
                except OSError:
                    self._end(sock)

    def _read(self, sock: socket.socket) -> None:
        try:
            data = sock.recv(4096)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        if data:
            with self._lock:
                self.received[sock] += data
            return
        self._end(sock)

    def _end(self, sock: socket.socket) -> None:
        with self._lock:
            answer = self.received.pop(sock, None)
            if answer is None:
                return
            self.ended.append(answer)
        self.selector.unregister(sock)
        sock.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(10)
        for sock in list(self.received):
            sock.close()
        self.selector.close()


@pytest.fixture(autouse=True)
def enough_descriptors() -> Iterator[None]:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    needed = TRICKLING + 200
    if hard != resource.RLIM_INFINITY and hard < needed:
        pytest.skip(f"needs {needed} open files, the hard limit is {hard}")
    if soft != resource.RLIM_INFINITY and soft < needed:
        resource.setrlimit(resource.RLIMIT_NOFILE, (needed, hard))
    try:
        with socket.socket() as probe:
            probe.bind((SOURCES[-1], 0))
    except OSError:
        pytest.skip(f"{SOURCES[-1]} is not a loopback address here")
    yield
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


@dataclass
class Program:
    loaded_port: int  # the server the trickle targets
    probes_url: str
    connection_limit: int  # of the loaded server


def start_program(procs: Processes, program: str, tmp_path: Path) -> Program:
    if program == "sedna-lc":
        _, url = start_lc(procs, "edge-1", "127.0.0.1:1", tmp_path / "rootfs")  # no GM needed
        return Program(int(url.rsplit(":", 1)[1]), announced_url(procs, "edge-1", "probes"), 256)
    _, url = start_gm(procs, "gm", None, "--master", "http://127.0.0.1:1", "--no-leader-elect")
    return Program(int(url.rsplit(":", 1)[1]), announced_url(procs, "gm", "probes"), 128)


@pytest.mark.parametrize("program", ["sedna-lc", "sedna-gm"])
def test_probes_answer_while_1000_connections_trickle_into_the_other_endpoint(procs, tmp_path, program):
    target = start_program(procs, program, tmp_path)
    assert http_get(target.probes_url + "/healthz", timeout=PROBE_TIMEOUT) == (200, "ok\n")
    trickle = Trickle(target.loaded_port)
    try:
        for _ in range(3):
            held = trickle.open_connections()
            assert http_get(target.probes_url + "/healthz", timeout=PROBE_TIMEOUT) == (200, "ok\n")
            assert http_get(target.probes_url + "/livez", timeout=PROBE_TIMEOUT)[0] == 200
            # more trickling connections than the loaded server's whole limit were open while the probe answered
            assert min(held, trickle.open_connections()) > target.connection_limit
        # the header deadline ends them (a 408 each), as many as the server had accepted at a time and more
        wait_for("trickling requests ended by the header deadline", trickle.timed_out,
                 check=lambda n: n > target.connection_limit, timeout=60)
        assert http_get(target.probes_url + "/healthz", timeout=PROBE_TIMEOUT) == (200, "ok\n")
    finally:
        trickle.close()
    procs.procs["edge-1" if program == "sedna-lc" else "gm"].terminate()
