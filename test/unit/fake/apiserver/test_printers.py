"""kube-apiserver's printers as the sandbox ports them: the pod STATUS/READY/RESTARTS rules and a few others."""

from __future__ import annotations

import pytest

from sandbox.apiserver.columns import human_duration
from sandbox.apiserver.printers import printer_for, row_conditions
from sandbox.apiserver.tables import to_table


def _cells(group: str, resource: str, obj: dict) -> dict[str, object]:
    return {c.name: c.cell(obj) for c in printer_for(group, resource)}


def _pod(status: dict, **meta: object) -> dict:
    return {"metadata": {"name": "p", **meta}, "spec": {"containers": [{"name": "a"}, {"name": "b"}],
                                                        "initContainers": [{"name": "init"}]}, "status": status}


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        ({"phase": "Pending"}, ("0/2", "Pending", "0")),
        ({"phase": "Pending", "initContainerStatuses": [{"state": {"running": {}}}]}, ("0/2", "Init:0/1", "0")),
        ({"phase": "Pending", "initContainerStatuses": [{"state": {"terminated": {"exitCode": 2}}}]},
         ("0/2", "Init:ExitCode:2", "0")),
        ({"phase": "Pending", "initContainerStatuses": [{"state": {"waiting": {"reason": "ErrImagePull"}}}]},
         ("0/2", "Init:ErrImagePull", "0")),
        ({"phase": "Running", "initContainerStatuses": [{"state": {"terminated": {"exitCode": 0}}}],
          "containerStatuses": [{"ready": True, "state": {"running": {}}}, {"ready": True, "state": {"running": {}}}]},
         ("2/2", "Running", "0")),
        ({"phase": "Succeeded", "containerStatuses": [{"state": {"terminated": {"exitCode": 0, "reason": "Completed"}}}]},
         ("0/2", "Completed", "0")),
        ({"phase": "Failed", "reason": "Evicted"}, ("0/2", "Evicted", "0")),
        ({"phase": "Running", "containerStatuses": [{"state": {"terminated": {"exitCode": 137, "signal": 9}}}]},
         ("0/2", "Signal:9", "0")),
    ],
)
def test_pod_ready_status_and_restarts(status: dict, expected: tuple[str, str, str]) -> None:
    cells = _cells("", "pods", _pod(status))
    assert (cells["Ready"], cells["Status"], cells["Restarts"]) == expected


def test_terminating_pods_and_row_conditions() -> None:
    deleting = _pod({"phase": "Running"}, deletionTimestamp="2026-01-01T00:00:00Z")
    assert _cells("", "pods", deleting)["Status"] == "Terminating"
    assert _cells("", "pods", _pod({"phase": "Running", "reason": "NodeLost"}, deletionTimestamp="x"))["Status"] == "Unknown"
    assert row_conditions("", "pods", _pod({"phase": "Succeeded"}))[0]["reason"] == "Succeeded"
    assert row_conditions("", "pods", _pod({"phase": "Running"})) is None


def test_event_columns_from_series_and_events_v1() -> None:
    event = {"metadata": {"name": "e"}, "involvedObject": {"kind": "Deployment", "name": "web"}, "type": "Normal",
             "reason": "ScalingReplicaSet", "message": "  scaled  ", "series": {"count": 4, "lastObservedTime": "bad"}}
    cells = _cells("", "events", event)
    assert (cells["Object"], cells["Message"], cells["Count"], cells["Last Seen"]) == (
        "deployment/web", "scaled", 4, "<invalid>")
    v1 = {"metadata": {"name": "e"}, "regarding": {"kind": "Pod", "name": "p"}, "note": "hello", "type": "Warning",
          "reason": "Failed", "reportingController": "ctl", "reportingInstance": "i-1"}
    cells = _cells("events.k8s.io", "events", v1)
    assert (cells["Object"], cells["Message"], cells["Source"], cells["Count"]) == ("pod/p", "hello", "ctl, i-1", 1)


def test_tables_fall_back_to_name_and_age() -> None:
    table = to_table({"metadata": {"name": "x", "resourceVersion": "3"}}, "example.com", "widgets")
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Age"]
    assert table["rows"][0]["cells"] == ["x", "<unknown>"]


@pytest.mark.parametrize(("seconds", "text"), [(5, "5s"), (150, "2m30s"), (3 * 3600 + 60, "3h1m"), (50 * 3600, "2d2h")])
def test_human_duration(seconds: int, text: str) -> None:
    assert human_duration(seconds) == text
