"""Helpers shared by every test suite: one ``wait_for``, one process helper.

    from testkit import wait_for, Processes, free_port, http_get

Modules not re-exported here are imported by name: ``testkit.kubectl``, ``testkit.logs``, ``testkit.s3``.
"""

from .crds import minimal_crd
from .edgepeers import FakeGM, GoLC, make_frame, parse_frame
from .hostile import billion_laughs, copy_bomb, nested_json, nested_yaml
from .jobs import create_job, fl_round_reports, job_phase, lease_holder
from .objects import gone, update_with_retry
from .procs import (
    CRDS,
    REPO,
    Processes,
    address_of,
    announced_url,
    free_port,
    gm_edge_address,
    http_get,
    json_log_lines,
    log_event,
    metric_value,
    port_open,
    retry_while_port_taken,
    sandbox_url,
    self_signed_cert,
    start_gm,
    start_lc,
    start_sandbox,
    start_workersim,
)
from .wait import wait_for

__all__ = [
    "CRDS",
    "REPO",
    "FakeGM",
    "GoLC",
    "Processes",
    "address_of",
    "announced_url",
    "billion_laughs",
    "copy_bomb",
    "create_job",
    "fl_round_reports",
    "free_port",
    "gm_edge_address",
    "gone",
    "http_get",
    "job_phase",
    "json_log_lines",
    "lease_holder",
    "log_event",
    "make_frame",
    "metric_value",
    "minimal_crd",
    "nested_json",
    "nested_yaml",
    "parse_frame",
    "port_open",
    "retry_while_port_taken",
    "sandbox_url",
    "self_signed_cert",
    "start_gm",
    "start_lc",
    "start_sandbox",
    "start_workersim",
    "update_with_retry",
    "wait_for",
]
