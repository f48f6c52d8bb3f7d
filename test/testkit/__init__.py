"""Helpers shared by every test suite: one ``wait_for``, one process helper.

    from testkit import wait_for, Processes, free_port, http_get
"""

from .edgepeers import FakeGM, GoLC, make_frame, parse_frame
from .procs import (
    CRDS,
    REPO,
    Processes,
    free_port,
    http_get,
    json_log_lines,
    log_event,
    metric_value,
    self_signed_cert,
    start_gm,
    start_lc,
    start_sandbox,
    start_workersim,
)
from .wait import wait_for, wait_until

__all__ = [
    "CRDS",
    "FakeGM",
    "GoLC",
    "REPO",
    "Processes",
    "free_port",
    "http_get",
    "json_log_lines",
    "log_event",
    "make_frame",
    "metric_value",
    "parse_frame",
    "self_signed_cert",
    "start_gm",
    "start_lc",
    "start_sandbox",
    "start_workersim",
    "wait_for",
    "wait_until",
]
