"""Helpers shared by every test suite: one ``wait_for``, one process helper.

    from testkit import wait_for, Processes, free_port, http_get
"""

from .objects import update_with_retry
from .procs import CRDS, REPO, Processes, free_port, http_get, json_log_lines, start_gm, start_sandbox
from .wait import wait_for, wait_until

__all__ = [
    "CRDS",
    "REPO", "Processes", "free_port", "http_get", "json_log_lines",
    "start_gm",
    "start_sandbox",
    "update_with_retry",
    "wait_for",
    "wait_until",
]
