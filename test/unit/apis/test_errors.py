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
    (504, "Timeout", e.RequestTimeoutError),
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


def test_expired_and_gone_are_separate_predicates_like_apimachinery():
    expired = e.from_status(status(410, "Expired", "too old resource version: 1 (5)"))
    gone = e.from_status(status(410, "Gone", "gone"))
    bare_410 = e.from_http(410, b"")  # no Status body: no reason, as NewGenericServerResponse builds it
    assert type(bare_410) is e.GoneError and bare_410.reason == ""
    assert e.is_resource_expired(expired) and not e.is_gone(expired)
    assert e.is_gone(gone) and not e.is_resource_expired(gone)
    assert e.is_gone(bare_410) and not e.is_resource_expired(bare_410)
    assert e.is_gone(e.ApiError(410, "SomethingNew", "x"))  # unknown reason: the code decides
    assert all(e.is_expired_or_gone(x) for x in (expired, gone, bare_410))
    assert not e.is_expired_or_gone(e.NotFoundError("x")) and not e.is_expired_or_gone(RuntimeError())
    assert not e.is_resource_expired(e.NotFoundError("x"))


@pytest.mark.parametrize(("predicate", "reason", "code"), [
    (e.is_not_found, "NotFound", 404),
    (e.is_conflict, "Conflict", 409),
    (e.is_gone, "Gone", 410),
    (e.is_invalid, "Invalid", 422),
    (e.is_bad_request, "BadRequest", 400),
    (e.is_unauthorized, "Unauthorized", 401),
    (e.is_forbidden, "Forbidden", 403),
    (e.is_internal_error, "InternalError", 500),
    (e.is_service_unavailable, "ServiceUnavailable", 503),
    (e.is_timeout, "Timeout", 504),
])
def test_predicates_use_the_reason_and_the_code_only_for_unknown_reasons(predicate, reason, code):
    assert predicate(e.ApiError(code, reason, "x"))
    assert predicate(e.ApiError(499, reason, "x"))  # the reason alone decides
    assert predicate(e.ApiError(code, "", "x"))  # no reason: the code decides
    assert predicate(e.ApiError(code, "NotAKnownReason", "x"))  # unknown reason: the code decides
    other_known = "AlreadyExists" if reason != "AlreadyExists" else "Conflict"
    assert not predicate(e.ApiError(code, other_known, "x"))  # a known other reason never matches by code
    assert not predicate(e.ApiError(418, "", "x")) and not predicate(ValueError("x"))


def test_known_other_reasons_do_not_match_by_code():
    assert not e.is_invalid(e.ApiError(422, "BadRequest", "x"))
    assert not e.is_bad_request(e.ApiError(400, "Invalid", "x"))
    assert not e.is_forbidden(e.ApiError(403, "Unauthorized", "x"))
    assert not e.is_not_found(e.ApiError(404, "Gone", "x"))
    assert not e.is_internal_error(e.ApiError(500, "ServiceUnavailable", "x"))
    assert not e.is_conflict(e.new_already_exists("pods", "p"))
    assert e.is_already_exists(e.new_already_exists("pods", "p"))
    assert not e.is_already_exists(e.ApiError(409, "", "x"))  # reason only, as in Go


def test_too_many_requests_accepts_429_whatever_the_reason():
    assert e.is_too_many_requests(e.ApiError(429, "Forbidden", "x"))  # Go keeps this unconditional
    assert e.is_too_many_requests(e.ApiError(200, "TooManyRequests", "x"))


def test_reason_for_error():
    assert e.reason_for_error(e.NotFoundError("x")) == "NotFound" and e.reason_for_error(KeyError()) == ""


def test_already_exists_is_not_a_conflict_error():
    assert not issubclass(e.AlreadyExistsError, e.ConflictError)
    assert issubclass(e.AlreadyExistsError, e.ApiError)
    with pytest.raises(e.AlreadyExistsError):
        try:
            raise e.new_already_exists("pods", "p")
        except e.ConflictError:  # pragma: no cover - must not catch it
            pytest.fail("except ConflictError caught AlreadyExists")


def test_retry_after_from_header_or_details():
    assert e.from_http(429, b"", retry_after=4).retry_after == 4
    assert e.from_http(429, status(429, "TooManyRequests", "x"), retry_after=2).retry_after == 2
    with_details = status(429, "TooManyRequests", "x", details={"retryAfterSeconds": 6})
    assert e.from_http(429, orjson.dumps(with_details), retry_after=2).retry_after == 6
    assert e.TooManyRequestsError("x").retry_after is None
    assert e.from_http(503, b"busy").retry_after is None


@pytest.mark.parametrize(("header", "seconds"), [("3", 3), (" 10 ", 10), ("0", None), ("-1", None), ("1.5", None),
                                                  ("Wed, 21 Oct 2015 07:28:00 GMT", None), ("", None), (None, None),
                                                  ("\u0663", None)])
def test_parse_retry_after(header, seconds):
    assert e.parse_retry_after(header) == seconds


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


def test_the_former_timeout_name_still_imports_and_no_builtin_is_shadowed():
    from apis.errors import TimeoutError as former

    assert former is e.RequestTimeoutError
    assert "TimeoutError" not in vars(e) and "TimeoutError" not in e.__all__
    assert not issubclass(e.RequestTimeoutError, TimeoutError)  # the builtin: a server answer is no local timeout
