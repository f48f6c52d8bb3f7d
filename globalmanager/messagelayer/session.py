"""One websocket connection of a node, usable from any thread, and the writer thread that drains the node's queue."""

from __future__ import annotations

import asyncio
import itertools
import threading
from collections.abc import Callable
from typing import Any

import structlog

from .node import Node, Wake

__all__ = ["Session", "run_writer"]

log = structlog.get_logger("sedna-gm.edge")

_ids = itertools.count(1)


class Session:
    """A connection of ``node`` served by the event loop ``loop``; ``features`` are the negotiated extensions."""

    def __init__(self, node: str, conn: Any, loop: asyncio.AbstractEventLoop, features: frozenset[str],
                 send_timeout: float = 40.0) -> None:
        self.id = next(_ids)
        self.node = node
        self.features = features
        self.closed = threading.Event()
        self._conn = conn
        self._loop = loop
        self._send_timeout = send_timeout

    def send(self, text: str) -> None:
        """Write one frame and wait until it is written; raises when the connection is gone or stuck.
        Call it from a thread other than the loop's."""
        if self.closed.is_set():
            raise ConnectionError("connection closed")
        future = asyncio.run_coroutine_threadsafe(self._conn.send(text), self._loop)
        try:
            future.result(self._send_timeout)
        except TimeoutError:
            future.cancel()
            raise

    def send_soon(self, text: str) -> None:
        """Write one frame without waiting (from any thread); a failure only means the connection is gone."""
        if self.closed.is_set():
            return
        try:
            asyncio.run_coroutine_threadsafe(self._send_quietly(text), self._loop)
        except RuntimeError:  # loop closed
            pass

    async def _send_quietly(self, text: str) -> None:
        try:
            await self._conn.send(text)
        except Exception as exc:
            log.debug("write failed", node=self.node, error=str(exc))

    def close(self, code: int = 1000, reason: str = "") -> None:
        """Close the connection (from any thread); the node's writer stops."""
        self.closed.set()
        try:
            asyncio.run_coroutine_threadsafe(self._conn.close(code, reason), self._loop)
        except RuntimeError:
            pass


def run_writer(session: Session, node: Node, on_sent: Callable[[str], None]) -> None:
    """Deliver ``node``'s queue over ``session`` until the session ends; a message whose write fails goes back."""
    queue = node.queue
    while True:
        item, shutdown = queue.get()
        if shutdown:
            return
        if isinstance(item, Wake):
            queue.done(item)
            if item.session_id == session.id:
                return
            continue
        if session.closed.is_set() or node.session is not session:
            queue.add(item)  # for the next session's writer (re-queued at done)
            queue.done(item)
            return
        msg = node.take(item)
        if msg is None:
            queue.done(item)
            continue
        try:
            session.send(msg.text)
        except Exception as exc:
            node.failed(msg)
            queue.done(item)
            log.warning("write to node failed; message re-queued", node=session.node, kind=msg.key[0],
                        object=f"{msg.key[1]}/{msg.key[2]}", operation=msg.operation, error=str(exc) or type(exc).__name__)
            session.close(1011, "write failed")
            return
        node.delivered(msg)
        queue.done(item)
        on_sent(msg.operation)
