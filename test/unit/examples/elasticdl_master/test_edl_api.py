"""The worker API over real HTTP: the happy path, the dynamic worker count, and a 400 with a reason for every bad
request."""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator

import pytest
from testkit.rawhttp import exchange, statuses

from examples.elasticdl_master.api import MAX_BODY, WorkerAPI
from examples.elasticdl_master.client import MasterClient, MasterError


@pytest.fixture
def api(harness) -> Iterator[tuple[WorkerAPI, object]]:
    h = harness(2).started()  # workers 0 and 1 are launched (registered)
    server = WorkerAPI("127.0.0.1", 0, h.dispatcher, h.manager, lambda: {"job": "mnist"}, max_workers=8)
    server.start()
    yield server, h
    server.stop()


def raw(server: WorkerAPI, method: str, path: str, body: bytes | None = None,
        headers: dict[str, str] | None = None) -> tuple[int, dict]:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
    try:
        conn.putrequest(method, path)
        for k, v in (headers if headers is not None else {"Content-Length": str(len(body or b""))}).items():
            conn.putheader(k, v)
        conn.endheaders()
        if body:
            conn.send(body)
        resp = conn.getresponse()
        data = resp.read()
        return resp.status, json.loads(data) if resp.headers.get("Content-Type") == "application/json" else {"text": data}
    finally:
        conn.close()


def test_workers_get_tasks_report_them_and_progress(api):
    server, h = api
    client = MasterClient(server.url)
    answer = client.get_task(0)
    assert answer["status"] == "task"
    task = answer["task"]
    assert set(task) == {"task_id", "type", "epoch", "unit", "file", "start", "end"} and task["type"] == "training"
    assert client.progress(0, task_id=task["task_id"], records=3) == {"accepted": True}
    assert h.table.get(0).records == 3 and h.table.get(0).last_progress == h.clock.now()
    assert client.report(0, task["task_id"], success=True) == {"accepted": True}
    assert client.report(1, client.get_task(1)["task"]["task_id"], success=False, err_message="oom") == {"accepted": True}
    assert h.dispatcher.status()["tasks_done"] == 1
    assert client.status() == {"job": "mnist"}
    assert raw(server, "GET", "/healthz", headers={}) == (200, {"text": b"ok\n"})


def test_wait_then_finished(api):
    server, h = api
    client = MasterClient(server.url)
    held = [client.get_task(0)["task"] for _ in range(4)]
    assert client.get_task(1) == {"status": "wait", "retry_after_seconds": 1.0}
    for task in held:
        client.report(0, task["task_id"])
    assert client.get_task(1) == {"status": "finished"}


def test_the_worker_count_changes_at_run_time(api):
    server, h = api
    client = MasterClient(server.url)
    assert client.call("GET", "/api/v1/num_workers") == {"num_workers": 2}
    assert client.set_num_workers(4) == {"num_workers": 4, "previous": 2}
    h.settle()
    assert h.worker_ids() == [0, 1, 2, 3]
    assert client.call("POST", "/api/v1/num_workers", {"num_workers": 1}) == {"num_workers": 1, "previous": 4}
    h.settle()
    assert h.worker_ids() == [0]


def test_a_retired_workers_report_is_refused(api):
    server, h = api
    client = MasterClient(server.url)
    task = client.get_task(1)["task"]
    h.fail(1)
    h.settle()
    with pytest.raises(MasterError) as exc:
        client.report(1, task["task_id"])
    assert exc.value.status == 400 and exc.value.reason == "worker 1 is not a live worker of this job"
    assert client.get_task(0)["task"]["unit"] == 1  # the dead worker's task was handed out again (unit 0 is next)


def post(server: WorkerAPI, path: str, body: object) -> tuple[int, dict]:
    return raw(server, "POST", path, json.dumps(body).encode())


BAD_BODIES = [
    ("/api/v1/tasks/get", {}, "field 'worker_id' is required"),
    ("/api/v1/tasks/get", {"worker_id": "0"}, "field 'worker_id' must be an integer, got str"),
    ("/api/v1/tasks/get", {"worker_id": True}, "field 'worker_id' must be an integer, got bool"),
    ("/api/v1/tasks/get", {"worker_id": -1}, "field 'worker_id' must be between 0 and"),
    ("/api/v1/tasks/get", {"worker_id": 7}, "worker 7 is not a live worker of this job"),
    ("/api/v1/tasks/get", {"worker_id": 0, "extra": 1}, "unknown field(s) 'extra'"),
    ("/api/v1/tasks/report", {"worker_id": 0, "success": True}, "field 'task_id' is required"),
    ("/api/v1/tasks/report", {"worker_id": 0, "task_id": 0, "success": True}, "field 'task_id' must be between 1"),
    ("/api/v1/tasks/report", {"worker_id": 0, "task_id": 5}, "field 'success' is required"),
    ("/api/v1/tasks/report", {"worker_id": 0, "task_id": 5, "success": "yes"}, "field 'success' must be a bool"),
    ("/api/v1/tasks/report", {"worker_id": 0, "task_id": 5, "success": False, "err_message": 3},
     "field 'err_message' must be a string"),
    ("/api/v1/tasks/report", {"worker_id": 0, "task_id": 5, "success": False, "err_message": "x" * 5000},
     "field 'err_message' is longer than 4096 characters"),
    ("/api/v1/tasks/report", {"worker_id": 0, "task_id": 999, "success": True}, "task 999 is not in progress"),
    ("/api/v1/progress", {"worker_id": 0, "records": -1}, "field 'records' must be between 0"),
    ("/api/v1/progress", {"worker_id": 0, "task_id": 999}, "worker 0 does not hold task 999"),
    ("/api/v1/num_workers", {"num_workers": 9}, "field 'num_workers' must be between 0 and 8, got 9"),
    ("/api/v1/num_workers", {"num_workers": 1.5}, "field 'num_workers' must be an integer, got float"),
    ("/api/v1/num_workers", {}, "field 'num_workers' is required"),
]


@pytest.mark.parametrize("path, body, reason", BAD_BODIES)
def test_bad_fields_get_400_with_the_reason(api, path, body, reason):
    server, h = api
    code, answer = post(server, path, body)
    assert code == 400 and answer["error"].startswith(reason), answer
    assert h.dispatcher.status()["tasks_done"] == 0 and h.manager.threshold == 2


def test_a_task_held_by_another_worker_cannot_be_reported(api):
    server, h = api
    task = h.dispatcher.get(0)
    code, answer = post(server, "/api/v1/tasks/report", {"worker_id": 1, "task_id": task.task_id, "success": True})
    assert code == 400 and answer["error"] == f"task {task.task_id} is held by worker 0, not by worker 1"


@pytest.mark.parametrize("body, headers, reason", [
    (b"{not json", None, "body is not JSON"),
    (b"[1, 2]", None, "body must be a JSON object, got list"),
    (b"", None, "body is not JSON"),
    (b'{"worker_id": 0}', {}, "Content-Length is required"),
    (b"", {"Content-Length": str(MAX_BODY + 1)}, f"body of {MAX_BODY + 1} bytes is over the limit of {MAX_BODY}"),
    (b"", {"Content-Length": "-5"}, "Content-Length '-5' is not a number"),
    (b'5\r\n{"a":\r\n0\r\n\r\n', {"Transfer-Encoding": "chunked"}, "chunked bodies are not accepted"),
])
def test_bad_bodies_get_400_with_the_reason(api, body, headers, reason):
    server, _ = api
    code, answer = raw(server, "POST", "/api/v1/tasks/get", body, headers)
    assert code == 400 and answer["error"].startswith(reason), answer


def test_unknown_paths_and_methods(api):
    server, _ = api
    assert raw(server, "GET", "/api/v1/tasks")[0] == 404
    code, answer = raw(server, "GET", "/api/v1/tasks/get", headers={})
    assert code == 405 and answer == {"error": "GET /api/v1/tasks/get is not served"}
    assert raw(server, "DELETE", "/api/v1/num_workers")[0] == 405


def test_a_connection_stays_usable_after_a_400(api):
    server, _ = api
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
    try:
        for body, status in ((b"nope", 400), (b'{"worker_id": 0}', 200)):
            conn.request("POST", "/api/v1/tasks/get", body=body)
            resp = conn.getresponse()
            resp.read()
            assert resp.status == status
    finally:
        conn.close()


def test_an_unexpected_error_is_a_500_and_the_server_keeps_serving(harness):
    h = harness(1).started()

    def broken() -> dict:
        raise RuntimeError("bug")

    server = WorkerAPI("127.0.0.1", 0, h.dispatcher, h.manager, broken, max_workers=8)
    server.start()
    try:
        assert raw(server, "GET", "/api/v1/status", headers={}) == (500, {"error": "internal error; see the master's log"})
        assert raw(server, "GET", "/api/v1/num_workers", headers={}) == (200, {"num_workers": 1})
    finally:
        server.stop()


@pytest.mark.parametrize("lengths", [("2", "40"), ("\u00b2",)])
def test_content_lengths_that_cannot_frame_the_body_are_400_and_close(api, lengths):
    """Two different ``Content-Length`` fields (the bytes after the first length were read as a second request:
    smuggled), or one that is not ASCII digits (``int`` refused it: a 500)."""
    server, _ = api
    smuggled = b'POST /api/v1/num_workers HTTP/1.1\r\nContent-Length: 17\r\n\r\n{"num_workers":5}'
    head = "POST /api/v1/tasks/get HTTP/1.1\r\nHost: x\r\n" + "".join(f"Content-Length: {n}\r\n" for n in lengths)
    answer = exchange(server.port, head.encode("latin-1") + b"\r\n{}" + smuggled)  # until the server closes
    assert statuses(answer) == [400], answer
    assert b"Content-Length" in answer and b"\r\nConnection: close\r\n" in answer
    assert MasterClient(server.url).call("GET", "/api/v1/num_workers") == {"num_workers": 2}
