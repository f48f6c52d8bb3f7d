"""Stop signals for every program of the project (``sedna-gm``, ``sedna-lc``, the sandbox API server, the worker
simulator, the ElasticDL master example, ``hack/local_up``): one pattern, safe whenever a signal arrives.

Two ways a Python signal handler hangs a program for good, both seen with SIGTERM and SIGINT arriving together:

* Python runs a handler in the main thread between two bytecodes, possibly while that thread holds a lock: a handler
  that calls ``Event.set()`` (a ``Condition``), logs (``logging``'s handler locks) or takes any other lock deadlocks
  on it.
* A signal that lands just before the main thread blocks on a lock (``Event.wait()``) leaves the Python handler
  pending until the thread wakes up, which may be never.

So nothing here depends on the main thread: ``signal.set_wakeup_fd`` makes the C-level handler write the signal's
number to a pipe the moment it arrives, the Python-level handler does nothing at all, and a watcher thread reads the
pipe and does the work — logging, ``Event.set()``, stopping things::

    stop = threading.Event()
    SignalWatcher(lambda signum, count: stop.set()).install()
    run_until(stop)

A program installs its watcher for its whole life and never closes it: a signal that lands during the last clean-up
is then still the watcher's (ignored once ``stop`` is set, or a second-signal rule), never a default handler's (a
``KeyboardInterrupt`` in the middle of stopping). At interpreter exit (``atexit``) an installed watcher's signals are
set to be ignored: Python's finalization puts the default action back on every signal with a Python handler, so a
second signal landing after the program's last line (SIGTERM then SIGINT a few milliseconds apart) would otherwise
kill the process with that signal (exit status -2) after a clean stop. ``with SignalWatcher(...)`` (``close()``) is for scoped use, such
as tests. ``stop_event_on_signals(stop, log)`` is the watcher with the usual log line. ``count`` is how many signals were received so
far, so a program can treat a second one differently (``sedna-gm`` exits at once). A process has one wakeup fd:
one watcher at a time, installed from the main thread.
"""

from __future__ import annotations

import atexit
import os
import signal
import threading
from collections.abc import Callable
from types import TracebackType
from typing import Any, Protocol

__all__ = ["STOP_SIGNALS", "SignalWatcher", "stop_event_on_signals"]

STOP_SIGNALS: tuple[signal.Signals, ...] = (signal.SIGTERM, signal.SIGINT)

OnSignal = Callable[[signal.Signals, int], None]
"""``on_signal(signum, count)``: called on the watcher thread for each signal, ``count`` from 1."""


class SignalWatcher:
    """Routes ``signals`` through the wakeup fd (main thread only) and calls ``on_signal`` on its own thread;
    ``close()`` (or leaving the ``with`` block) puts the previous handlers and wakeup fd back and ends the thread."""

    def __init__(self, on_signal: OnSignal, signals: tuple[signal.Signals, ...] = STOP_SIGNALS) -> None:
        self._on_signal = on_signal
        self._signals = signals
        self._previous: dict[signal.Signals, Any] = {}
        self._read_fd = self._write_fd = -1
        self._previous_wakeup_fd = -1
        self._thread: threading.Thread | None = None
        self.count = 0

    def install(self) -> SignalWatcher:
        self._read_fd, self._write_fd = os.pipe()
        # non-blocking, as set_wakeup_fd requires: a full pipe (64 KiB of unread signals) drops the byte, and the
        # watcher has work waiting anyway
        os.set_blocking(self._write_fd, False)
        self._thread = threading.Thread(target=self._watch, name="signal-watcher", daemon=True)
        self._thread.start()
        self._previous_wakeup_fd = signal.set_wakeup_fd(self._write_fd, warn_on_full_buffer=False)
        self._previous = {sig: signal.signal(sig, _ignore) for sig in self._signals}
        atexit.register(self._ignore_from_now_on)
        return self

    def _ignore_from_now_on(self) -> None:
        """At exit (main thread): the kernel drops these signals from now on; finalization leaves SIG_IGN alone."""
        for sig in self._previous:
            signal.signal(sig, signal.SIG_IGN)

    def _watch(self) -> None:
        while True:
            try:
                data = os.read(self._read_fd, 64)
            except OSError:
                return
            if not data:  # the write end was closed: close() was called
                return
            for signum in data:
                if signum not in self._signals:  # another signal with a Python handler
                    continue
                self.count += 1
                self._on_signal(signal.Signals(signum), self.count)

    def close(self) -> None:
        atexit.unregister(self._ignore_from_now_on)
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
        self._previous = {}
        if self._write_fd >= 0:
            signal.set_wakeup_fd(self._previous_wakeup_fd)
            os.close(self._write_fd)
            self._write_fd = -1
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(5)
        if self._read_fd >= 0:
            os.close(self._read_fd)
            self._read_fd = -1

    def __enter__(self) -> SignalWatcher:
        return self.install()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


class _InfoLogger(Protocol):
    def info(self, event: str, **fields: object) -> object: ...


def _ignore(_signum: int, _frame: object) -> None:
    """The Python-level handler: the wakeup fd already told the watcher (a handler must exist, or the default action
    — terminate — would be taken)."""


def stop_event_on_signals(stop: threading.Event, log: _InfoLogger | None = None, message: str = "signal received: shutting down",
                          signals: tuple[signal.Signals, ...] = STOP_SIGNALS) -> SignalWatcher:
    """A watcher (not installed yet) that logs the first signal on ``log`` and sets ``stop``."""

    def on_signal(signum: signal.Signals, count: int) -> None:
        if count == 1 and log is not None:
            log.info(message, signal=signum.name)
        stop.set()

    return SignalWatcher(on_signal, signals)
