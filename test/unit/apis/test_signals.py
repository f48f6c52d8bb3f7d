"""``apis.signals``: signals reach the watcher thread through the wakeup fd, counted, and the previous handlers and
wakeup fd come back on close."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading

from testkit import REPO, wait_for

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


_AT_EXIT = """
import atexit, signal, sys, threading
from apis.signals import SignalWatcher
# registered first, so it runs last: after the watcher's own exit hook
atexit.register(lambda: print(signal.getsignal(signal.SIGINT) is signal.SIG_IGN,
                              signal.getsignal(signal.SIGTERM) is signal.SIG_IGN))
watcher = SignalWatcher(lambda signum, count: None).install()
if sys.argv[1] == "closed":
    watcher.close()
"""


def test_an_installed_watcher_leaves_its_signals_ignored_at_exit_and_a_closed_one_does_not():
    """Python's finalization puts SIG_DFL back on every signal with a Python handler, but leaves SIG_IGN: a SIGINT in
    the last milliseconds of a cleanly stopped program must not kill it (exit status -2)."""
    for mode, expected in (("installed", "True True"), ("closed", "False False")):
        done = subprocess.run([sys.executable, "-c", _AT_EXIT, mode], cwd=REPO, capture_output=True, text=True,
                              timeout=60, env={**os.environ, "PYTHONPATH": str(REPO)})
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == expected, (mode, done.stdout, done.stderr)
