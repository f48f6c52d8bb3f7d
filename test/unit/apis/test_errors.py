"""apis.errors: typed errors from Status bodies and HTTP answers, constructors, predicates."""

from __future__ import annotations

import orjson
import pytest

from apis import errors as e


def status(code: int, reason: str = "", message: str = "", **extra) -> dict:
    body = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "code": code,
            "reason": reason, "message": message}
    body.update(extra)
    return body


@pytest.mark.parametrize(("code", "reason", "cls"), [
    (400, "BadRequest", e.BadRequestError),
    (401, "Unauthorized", e.UnauthorizedError),
    (403, "Forbidden", e.ForbiddenError),
    (404, "NotFound", e.NotFoundError),
    (405, "MethodNotAllowed", e.MethodNotAllowedError),
    (409, "AlreadyExists", e.AlreadyExistsError),
    (409, "Conflict", e.ConflictError),
    (410, "Gone", e.GoneError),
    (410, "Expired", e.GoneError),
    (422, "Invalid", e.InvalidError),
    (429, "TooManyRequests", e.TooManyRequestsError),
    (500, "InternalError", e.InternalError),
    (503, "ServiceUnavailable", e.ServiceUnavailableError),
    (504, "Timeout", e.TimeoutError),
])
def test_from_status_for_each_reason(code, reason, cls):
    err = e.from_status(status(code, reason, "why"))
    assert type(err) is cls
    assert (err.status, err.reason, err.message, str(err)) == (code, reason, "why", "why")
    assert isinstance(err, e.ApiError)


def test_from_status_without_reason_uses_the_code():
    err = e.from_status(status(404))
    assert type(err) is e.NotFoundError and err.reason == "NotFound" and str(err) == "404 NotFound"
    assert type(e.from_status(status(409))) is e.ConflictError
    assert type(e.from_status({"message": "m"}, code=410)) is e.GoneError


def test_from_status_unknown_code_and_reason_is_a_plain_api_error():
    err = e.from_status(status(418, "Teapot", "short and stout"))
    assert type(err) is e.ApiError and err.status == 418 and err.reason == "Teapot"


def test_from_status_keeps_details_and_causes():
    causes = [{"type": "FieldValueRequired", "field": "spec.x", "message": "Required value"}]
    err = e.from_status(status(422, "Invalid", "bad", details={"name": "j", "causes": causes}))
    assert err.details["name"] == "j" and err.causes == causes


def test_from_status_of_a_non_dict():
    err = e.from_status("boom")  # type: ignore[arg-type]
    assert type(err) is e.InternalError and "boom" in err.message


def test_from_http_with_a_status_body():
    body = orjson.dumps(status(404, "NotFound", 'pods "x" not found'))
    for raw in (body, body.decode(), orjson.loads(body)):
        err = e.from_http(404, raw)
        assert type(err) is e.NotFoundError and str(err) == 'pods "x" not found'


def test_from_http_with_plain_text_and_without_body():
    err = e.from_http(503, b"  upstream connect error  ")
    assert type(err) is e.ServiceUnavailableError and err.message == "upstream connect error"
    err = e.from_http(500, "")
    assert type(err) is e.InternalError and str(err) == "the server answered 500 InternalError"
    err = e.from_http(404)
    assert type(err) is e.NotFoundError and err.reason == "NotFound"
    err = e.from_http(409, b'{"kind": "NotAStatus"}')
    assert type(err) is e.ConflictError and "NotAStatus" in err.message
    assert type(e.from_http(418, b"teapot")) is e.ApiError


def test_from_http_truncates_huge_text():
    assert len(e.from_http(500, b"x" * 5000).message) == 1000


def test_kubectl_style_messages():
    assert str(e.new_not_found("pods", "x")) == 'pods "x" not found'
    assert str(e.new_not_found("datasets", "d", "sedna.io")) == 'datasets.sedna.io "d" not found'
    assert str(e.new_already_exists("pods", "x")) == 'pods "x" already exists'
    assert str(e.new_conflict("pods", "x", "the object has been modified")) == (
        'Operation cannot be fulfilled on pods "x": the object has been modified')
    inv = e.new_invalid("Dataset", "d", [{"type": "FieldValueRequired", "field": "spec.url", "message": "Required value"}],
                        "sedna.io")
    assert str(inv) == 'Dataset.sedna.io "d" is invalid: spec.url: Required value'
    assert inv.status == 422 and inv.causes[0]["field"] == "spec.url"


def test_to_status_round_trips():
    err = e.new_not_found("pods", "x")
    again = e.from_status(err.to_status())
    assert type(again) is e.NotFoundError and str(again) == str(err) and again.details == err.details


@pytest.mark.parametrize("cls", [e.NotFoundError, e.ConflictError, e.AlreadyExistsError, e.GoneError,
                                 e.InvalidError, e.TooManyRequestsError, e.InternalError, e.BadRequestError,
                                 e.ForbiddenError])
def test_subclass_constructors(cls):
    short = cls("msg")
    assert (short.status, short.reason, short.message) == (cls.default_status, cls.default_reason, "msg")
    full = cls(499, "Custom", "m2")
    assert (full.status, full.reason, full.message) == (499, "Custom", "m2")
    assert str(cls()) == f"{cls.default_status} {cls.default_reason}"
    with pytest.raises(TypeError):
        cls(1, 2)
    assert repr(short).startswith(cls.__name__ + "(")


def test_predicates():
    nf, ae, cf = e.NotFoundError("x"), e.AlreadyExistsError("x"), e.ConflictError("x")
    assert e.is_not_found(nf) and not e.is_not_found(cf) and not e.is_not_found(ValueError())
    assert e.is_not_found(e.ApiError(404, "", "x"))
    assert e.is_already_exists(ae) and not e.is_already_exists(cf)
    assert e.is_conflict(cf) and not e.is_conflict(ae) and not e.is_conflict(nf)
    assert e.is_too_many_requests(e.TooManyRequestsError("x")) and not e.is_too_many_requests(nf)
    assert e.is_internal_error(e.InternalError("x")) and e.is_internal_error(e.ApiError(500, "", "x"))
    assert not e.is_internal_error(e.ServiceUnavailableError("x"))
    assert e.is_invalid(e.InvalidError("x")) and e.is_bad_request(e.BadRequestError("x"))
    assert e.is_forbidden(e.ForbiddenError("x")) and not e.is_forbidden(nf)
    assert not any(p(RuntimeError("x")) for p in (e.is_already_exists, e.is_conflict, e.is_resource_expired,
                                                   e.is_too_many_requests, e.is_invalid, e.is_forbidden))


@pytest.mark.parametrize("reason", ["Expired", "Gone"])
def test_is_resource_expired_for_both_reasons(reason):
    err = e.from_status(status(410, reason, "too old resource version: 1 (5)"))
    assert e.is_resource_expired(err) and e.is_gone(err)
    assert not e.is_resource_expired(e.NotFoundError("x"))


def test_is_too_large_resource_version_in_its_three_forms():
    by_cause_type = e.from_status(status(504, "Timeout", "Too large resource version: 10, current: 5",
                                         details={"causes": [{"type": "ResourceVersionTooLarge",
                                                              "message": "Too large resource version"}]}))
    legacy_cause_message = e.from_status(status(504, "Timeout", "timed out",
                                                details={"causes": [{"message": "Too large resource version"}]}))
    legacy_message = e.from_status(status(504, "Timeout", "Too large resource version: 10, current: 5"))
    for err in (by_cause_type, legacy_cause_message, legacy_message):
        assert e.is_too_large_resource_version(err)
    assert not e.is_too_large_resource_version(e.from_status(status(504, "Timeout", "timed out")))
    assert not e.is_too_large_resource_version(e.InternalError("Too large resource version"))
    assert not e.is_too_large_resource_version(ValueError("Too large resource version"))
