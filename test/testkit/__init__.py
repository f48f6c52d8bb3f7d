"""Helpers shared by every test suite: one ``wait_for``, one process helper.

    from testkit import wait_for, Processes, free_port, http_get
"""

from .crds import minimal_crd
from .hostile import billion_laughs, copy_bomb, nested_json, nested_yaml
from .procs import CRDS, REPO, Processes, free_port, http_get, json_log_lines, start_gm, start_sandbox
from .wait import wait_for, wait_until

__all__ = [
    "CRDS",
    "billion_laughs",
    "copy_bomb",
    "minimal_crd",
    "nested_json",
    "nested_yaml",
    "REPO", "Processes", "free_port", "http_get", "json_log_lines",
    "start_gm",
    "start_sandbox",
    "wait_for",
    "wait_until",
]
