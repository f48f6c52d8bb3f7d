"""Helpers shared by every test suite: one ``wait_for``, one process helper.

    from testkit import wait_for, Processes, free_port, http_get
"""

from .jobs import create_job, job_phase, lease_holder
from .procs import CRDS, REPO, Processes, free_port, http_get, json_log_lines, start_gm, start_sandbox
from .wait import wait_for, wait_until

__all__ = [
    "CRDS",
    "REPO", "Processes", "create_job", "free_port", "http_get", "job_phase", "json_log_lines", "lease_holder",
    "start_gm",
    "start_sandbox",
    "wait_for",
    "wait_until",
]
