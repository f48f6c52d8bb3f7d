"""The real clientset's retry policy: Retry-After answers become typed errors, only idempotent requests are replayed."""

from __future__ import annotations

import pytest

from apis import errors
from apis.clientset import ApiConnectionError

POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p1", "namespace": "default"}, "spec": {}}
POD_PATH = "/api/v1/namespaces/default/pods"


def _status(code: int, reason: str, message: str) -> dict:
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "code": code,
            "reason": reason, "message": message}


def _answer_with_retry_after(stub, path: str, code: int, reason: str, retry_after: str = "3") -> None:
    def route(req, resp):
        resp.send_json(code, _status(code, reason, "please try again later"), headers={"Retry-After": retry_after})

    stub.on("GET", path, route)


CALLS = {
    "get": lambda cs: cs.core_v1().pods("default").get("p1"),
    "list": lambda cs: cs.core_v1().pods("default").list(),
    "watch": lambda cs: cs.core_v1().pods("default").watch(),
}


@pytest.mark.parametrize("verb", sorted(CALLS))
def test_429_with_retry_after_is_too_many_requests(stub, cs, verb):
    _answer_with_retry_after(stub, f"{POD_PATH}/p1", 429, "TooManyRequests")
    _answer_with_retry_after(stub, POD_PATH, 429, "TooManyRequests")
    with pytest.raises(errors.TooManyRequestsError) as exc:
        CALLS[verb](cs)
    assert exc.value.status == 429 and errors.is_too_many_requests(exc.value)
    assert exc.value.retry_after == 3
    assert len(stub.requests) == 1  # answered once, not retried by the transport


@pytest.mark.parametrize("verb", sorted(CALLS))
def test_503_with_retry_after_is_service_unavailable(stub, cs, verb):
    _answer_with_retry_after(stub, f"{POD_PATH}/p1", 503, "ServiceUnavailable", "7")
    _answer_with_retry_after(stub, POD_PATH, 503, "ServiceUnavailable", "7")
    with pytest.raises(errors.ServiceUnavailableError) as exc:
        CALLS[verb](cs)
    assert exc.value.status == 503 and exc.value.retry_after == 7
    assert len(stub.requests) == 1


def test_413_with_retry_after_is_an_api_error(stub, cs):
    stub.on("POST", POD_PATH, lambda req, resp: resp.send_bytes(413, b"request entity too large",
                                                                 "text/plain", {"Retry-After": "1"}))
    with pytest.raises(errors.ApiError) as exc:
        cs.core_v1().pods("default").create(POD)
    assert exc.value.status == 413 and exc.value.retry_after == 1


def test_retry_after_in_the_status_details_wins_and_a_date_is_ignored(stub, cs):
    body = _status(429, "TooManyRequests", "slow down") | {"details": {"retryAfterSeconds": 5}}
    stub.on("GET", f"{POD_PATH}/p1", lambda req, resp: resp.send_json(429, body, headers={"Retry-After": "9"}))
    with pytest.raises(errors.TooManyRequestsError) as exc:
        cs.core_v1().pods("default").get("p1")
    assert exc.value.retry_after == 5
    stub.on("GET", f"{POD_PATH}/p1", lambda req, resp: resp.send_json(
        429, _status(429, "TooManyRequests", "x"), headers={"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"}))
    with pytest.raises(errors.TooManyRequestsError) as exc:
        cs.core_v1().pods("default").get("p1")
    assert exc.value.retry_after is None


def _reset_first_then_answer(stub, method: str, path: str) -> None:
    """Drop the connection (no answer) on the first request; answer 200 to any later one."""
    seen = []

    def route(req, resp):
        seen.append(req)
        if len(seen) == 1:
            resp.abort()
        else:
            resp.send_json(200, POD)

    stub.on(method, path, route)


MUTATIONS = {
    "PUT": (f"{POD_PATH}/p1", lambda cs: cs.core_v1().pods("default").update(POD)),
    "DELETE": (f"{POD_PATH}/p1", lambda cs: cs.core_v1().pods("default").delete("p1")),
    "POST": (POD_PATH, lambda cs: cs.core_v1().pods("default").create(POD)),
    "PATCH": (f"{POD_PATH}/p1", lambda cs: cs.core_v1().pods("default").patch("p1", {"metadata": {}})),
}


@pytest.mark.parametrize("method", sorted(MUTATIONS))
def test_a_reset_mutation_is_not_replayed(stub, cs, method):
    path, call = MUTATIONS[method]
    _reset_first_then_answer(stub, method, path)
    with pytest.raises(ApiConnectionError):
        call(cs)
    assert [r.method for r in stub.requests] == [method]  # the server saw it exactly once


def test_a_reset_get_is_replayed_once(stub, cs):
    _reset_first_then_answer(stub, "GET", f"{POD_PATH}/p1")
    assert cs.core_v1().pods("default").get("p1") == POD
    assert [r.method for r in stub.requests] == ["GET", "GET"]
