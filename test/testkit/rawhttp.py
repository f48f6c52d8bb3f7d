"""HTTP over a raw socket, for framing tests: send exact bytes, read every response until the server closes.

    from testkit.rawhttp import exchange, statuses, concurrent_gets
"""

from __future__ import annotations

import re
import socket
import threading

__all__ = ["concurrent_gets", "exchange", "statuses"]


def exchange(port: int, data: bytes, host: str = "127.0.0.1", timeout: float = 10.0) -> bytes:
    """Send ``data`` on a new connection and return all the server sent until it closed the connection (an
    ``AssertionError`` when it keeps it open ``timeout`` seconds: every framing case must end in a close)."""
    received = b""
    with socket.create_connection((host, port), timeout=timeout) as sock:
        sock.sendall(data)
        try:
            while chunk := sock.recv(65536):
                received += chunk
        except TimeoutError:
            raise AssertionError(f"the server kept the connection open; received so far: {received!r}") from None
    return received


def statuses(response_bytes: bytes) -> list[int]:
    """The status code of every response in ``response_bytes``, in order."""
    return [int(code) for code in re.findall(rb"^HTTP/1\.[01] (\d{3}) ", response_bytes, re.MULTILINE)]


def concurrent_gets(port: int, path: str, clients: int, host: str = "127.0.0.1") -> list[int | str]:
    """``clients`` connections opened at the same moment (a barrier), each sending one GET; the status of each, or
    the error's name where a connection failed (e.g. ``ConnectionResetError``)."""
    barrier = threading.Barrier(clients)
    results: list[int | str] = [""] * clients

    def one(index: int) -> None:
        barrier.wait()
        try:
            answer = exchange(port, f"GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode(), host)
            codes = statuses(answer)
            results[index] = codes[0] if codes else "no response"
        except (OSError, AssertionError) as exc:  # a reset, a refused connection, an answer that never came
            results[index] = type(exc).__name__

    threads = [threading.Thread(target=one, args=(i,)) for i in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    return results
