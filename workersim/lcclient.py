"""``LCClient.send`` of Sedna's SDK: ``POST {lc}/sedna/workers/{worker}/info`` with the report as JSON, tried
``attempts`` times ``retry_wait`` seconds apart until the LC answers 200 (the SDK: 5 tries, 3 s apart; any other
answer, 2xx included, counts as a failure)."""

from __future__ import annotations

import threading
import urllib.error
import urllib.request
from typing import Any
from urllib.parse import quote

import orjson

from apis.logs import get_logger

__all__ = ["LCClient", "worker_info_url"]

log = get_logger(__name__)


def worker_info_url(lc_server: str, worker_name: str) -> str:
    return f"{lc_server.rstrip('/')}/sedna/workers/{quote(worker_name, safe='')}/info"


class LCClient:
    """Thread-safe (no shared state beyond its settings)."""

    def __init__(self, attempts: int = 5, retry_wait: float = 3.0, timeout: float = 10.0) -> None:
        if attempts < 1 or retry_wait < 0 or timeout <= 0:
            raise ValueError("attempts must be ≥ 1, retry_wait ≥ 0 and timeout > 0")
        self.attempts = attempts
        self.retry_wait = retry_wait
        self.timeout = timeout

    def send(self, lc_server: str, worker_name: str, message: dict[str, Any],
             stop: threading.Event | None = None, pod: str = "") -> bool:
        """True once the LC answered 200; False after the last attempt or when ``stop`` is set while waiting."""
        stop = stop if stop is not None else threading.Event()
        url = worker_info_url(lc_server, worker_name)
        body = orjson.dumps(message)
        for attempt in range(1, self.attempts + 1):
            request = urllib.request.Request(url, data=body, method="POST",
                                             headers={"Content-Type": "application/json"})
            try:
                with urllib.request.urlopen(request, timeout=self.timeout) as resp:
                    resp.read()
                    if resp.status == 200:
                        return True
                    log.warning("the LC answered other than 200", pod=pod, url=url, status=resp.status,
                                attempt=attempt)
            except urllib.error.HTTPError as exc:
                detail = exc.read()[:500].decode(errors="replace")
                log.warning("the LC refused a worker report", pod=pod, url=url, status=exc.code, answer=detail,
                            attempt=attempt)
            except (OSError, ValueError) as exc:
                log.warning("cannot reach the LC", pod=pod, url=url, error=str(exc), attempt=attempt)
            if attempt < self.attempts and stop.wait(self.retry_wait):
                return False
        log.error("gave up sending a worker report; the worker goes on, as the SDK does", pod=pod, url=url,
                  attempts=self.attempts)
        return False
