"""``apis.signals``: signals reach the watcher thread through the wakeup fd, counted, and the previous handlers and
wakeup fd come back on close."""

from __future__ import annotations

import os
import signal
import threading

from testkit import wait_for

from apis.signals import SignalWatcher, stop_event_on_signals


def test_signals_arrive_on_the_watcher_thread_counted_and_handlers_come_back():
    seen: list[tuple[str, int, str]] = []
    second = threading.Event()
    before = signal.getsignal(signal.SIGTERM)

    def on_signal(signum: signal.Signals, count: int) -> None:
        seen.append((signum.name, count, threading.current_thread().name))
        if count == 2:
            second.set()

    with SignalWatcher(on_signal):
        os.kill(os.getpid(), signal.SIGTERM)
        os.kill(os.getpid(), signal.SIGINT)
        assert second.wait(10)
    assert seen == [("SIGTERM", 1, "signal-watcher"), ("SIGINT", 2, "signal-watcher")]
    assert signal.getsignal(signal.SIGTERM) is before
    assert signal.set_wakeup_fd(-1) == -1  # none left behind


def test_stop_event_on_signals_sets_the_event_and_logs_the_first_signal_once():
    stop = threading.Event()
    lines: list[tuple[str, dict[str, str]]] = []

    class Log:
        def info(self, event: str, **fields: str) -> None:
            lines.append((event, fields))

    watcher = stop_event_on_signals(stop, Log())
    with watcher:
        os.kill(os.getpid(), signal.SIGTERM)
        os.kill(os.getpid(), signal.SIGTERM)
        assert stop.wait(10)
        wait_for("the second signal", lambda: watcher.count == 2, timeout=10)
    assert lines == [("signal received: shutting down", {"signal": "SIGTERM"})]
