"""Kubernetes API errors as exceptions, built from a ``Status`` body or an HTTP status code.

Every error has ``.status`` (HTTP code), ``.reason`` (the Status reason) and ``.message``; ``str()`` reads like
kubectl (``pods "x" not found``). ``.retry_after`` is the delay in seconds the server asked for (a ``Retry-After``
header or ``details.retryAfterSeconds``), else None.

The ``is_*`` predicates follow apimachinery's: the reason decides; the HTTP code counts only when the reason is
empty or not one apimachinery knows (so a 409 ``AlreadyExists`` is not ``is_conflict``, a 400 ``Invalid`` is not
``is_bad_request``). ``is_too_many_requests`` alone also accepts code 429 whatever the reason, as in Go.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "ApiError",
    "BadRequestError",
    "ConflictError",
    "AlreadyExistsError",
    "ForbiddenError",
    "GoneError",
    "InternalError",
    "InvalidError",
    "MethodNotAllowedError",
    "NotFoundError",
    "RequestTimeoutError",
    "TooManyRequestsError",
    "UnauthorizedError",
    "ServiceUnavailableError",
    "from_status",
    "from_http",
    "parse_retry_after",
    "new_not_found",
    "new_already_exists",
    "new_conflict",
    "new_invalid",
    "is_not_found",
    "is_already_exists",
    "is_conflict",
    "is_resource_expired",
    "is_gone",
    "is_expired_or_gone",
    "is_service_unavailable",
    "is_unauthorized",
    "is_timeout",
    "reason_for_error",
    "KNOWN_REASONS",
    "is_too_many_requests",
    "is_internal_error",
    "is_invalid",
    "is_bad_request",
    "is_forbidden",
    "is_too_large_resource_version",
    "CAUSE_RESOURCE_VERSION_TOO_LARGE",
]

CAUSE_RESOURCE_VERSION_TOO_LARGE = "ResourceVersionTooLarge"


class ApiError(Exception):
    """An error answered by the API server (or by a fake standing in for it)."""

    default_status = 500
    default_reason = "InternalError"

    def __init__(self, *args: Any, details: dict[str, Any] | None = None) -> None:
        # Subclasses accept either (message) or the full (status, reason, message).
        if len(args) == 1:
            status, reason, message = self.default_status, self.default_reason, args[0]
        elif len(args) == 3:
            status, reason, message = args
        elif len(args) == 0:
            status, reason, message = self.default_status, self.default_reason, ""
        else:
            raise TypeError("ApiError takes (message) or (status, reason, message)")
        super().__init__(message)
        self.status: int = int(status)
        self.reason: str = reason or ""
        self.message: str = message or ""
        self.details: dict[str, Any] = details or {}

    @property
    def retry_after(self) -> int | None:
        """Seconds the server asked the client to wait before retrying (``details.retryAfterSeconds``), or None."""
        value = self.details.get("retryAfterSeconds")
        return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None

    def __str__(self) -> str:
        return self.message or f"{self.status} {self.reason}"

    def __repr__(self) -> str:
        return f"{type(self).__name__}(status={self.status}, reason={self.reason!r}, message={self.message!r})"

    def to_status(self) -> dict[str, Any]:
        """The Kubernetes ``Status`` object describing this error."""
        body: dict[str, Any] = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.status,
        }
        if self.details:
            body["details"] = self.details
        return body

    @property
    def causes(self) -> list[dict[str, Any]]:
        return list(self.details.get("causes") or [])


class BadRequestError(ApiError):
    default_status, default_reason = 400, "BadRequest"


class UnauthorizedError(ApiError):
    default_status, default_reason = 401, "Unauthorized"


class ForbiddenError(ApiError):
    default_status, default_reason = 403, "Forbidden"


class NotFoundError(ApiError):
    default_status, default_reason = 404, "NotFound"


class MethodNotAllowedError(ApiError):
    default_status, default_reason = 405, "MethodNotAllowed"


class ConflictError(ApiError):
    default_status, default_reason = 409, "Conflict"


class AlreadyExistsError(ApiError):
    """409 AlreadyExists. Not a ``ConflictError``: a create that lost to another creator is not an update conflict
    (apimachinery's ``IsConflict`` is false for it too)."""

    default_status, default_reason = 409, "AlreadyExists"


class GoneError(ApiError):
    """410: the requested resourceVersion (or continue token) is too old (reason ``Expired`` or ``Gone``)."""

    default_status, default_reason = 410, "Expired"


class InvalidError(ApiError):
    default_status, default_reason = 422, "Invalid"


class TooManyRequestsError(ApiError):
    default_status, default_reason = 429, "TooManyRequests"


class InternalError(ApiError):
    default_status, default_reason = 500, "InternalError"


class ServiceUnavailableError(ApiError):
    default_status, default_reason = 503, "ServiceUnavailable"


class RequestTimeoutError(ApiError):
    """The server could not complete the request in time (apimachinery ``StatusReasonTimeout``, 504), e.g. "Too
    large resource version". Not a client-side timeout: that is ``apis.http_transport.ApiConnectionTimeoutError``."""

    default_status, default_reason = 504, "Timeout"


_BY_REASON: dict[str, type[ApiError]] = {
    "BadRequest": BadRequestError,
    "Unauthorized": UnauthorizedError,
    "Forbidden": ForbiddenError,
    "NotFound": NotFoundError,
    "MethodNotAllowed": MethodNotAllowedError,
    "AlreadyExists": AlreadyExistsError,
    "Conflict": ConflictError,
    "Gone": GoneError,
    "Expired": GoneError,
    "Invalid": InvalidError,
    "TooManyRequests": TooManyRequestsError,
    "InternalError": InternalError,
    "ServiceUnavailable": ServiceUnavailableError,
    "Timeout": RequestTimeoutError,
}

_BY_CODE: dict[int, type[ApiError]] = {
    400: BadRequestError,
    401: UnauthorizedError,
    403: ForbiddenError,
    404: NotFoundError,
    405: MethodNotAllowedError,
    409: ConflictError,
    410: GoneError,
    422: InvalidError,
    429: TooManyRequestsError,
    500: InternalError,
    503: ServiceUnavailableError,
    504: RequestTimeoutError,
}

# The reason apimachinery's NewGenericServerResponse gives a bare HTTP answer: none for 410 (then is_gone holds,
# is_resource_expired does not), Conflict for 409.
_REASON_BY_CODE = {code: cls.default_reason for code, cls in _BY_CODE.items()}
_REASON_BY_CODE[409] = "Conflict"
_REASON_BY_CODE[410] = ""

# apimachinery's knownReasons: for these the reason alone decides a predicate.
KNOWN_REASONS = frozenset({
    "Unauthorized", "Forbidden", "NotFound", "AlreadyExists", "Conflict", "Gone", "Invalid", "ServerTimeout",
    "StoreReadError", "Timeout", "TooManyRequests", "BadRequest", "MethodNotAllowed", "NotAcceptable",
    "RequestEntityTooLarge", "UnsupportedMediaType", "InternalError", "Expired", "ServiceUnavailable",
})


def from_status(status: dict[str, Any], code: int | None = None, retry_after: int | None = None) -> ApiError:
    """Build the matching error from a Kubernetes ``Status`` body (as in an ERROR watch event or a failed request).

    ``retry_after`` (seconds, from a ``Retry-After`` header) fills ``details.retryAfterSeconds`` when the body has
    none."""
    if not isinstance(status, dict):
        return InternalError(500, "InternalError", f"unexpected error object: {status!r}")
    http = int(status.get("code") or code or 500)
    reason = status.get("reason") or _REASON_BY_CODE.get(http, "")
    cls = _BY_REASON.get(reason) or _BY_CODE.get(http) or ApiError
    message = status.get("message") or f"{http} {reason}".strip()
    details = status.get("details") if isinstance(status.get("details"), dict) else None
    if retry_after and not (details or {}).get("retryAfterSeconds"):
        details = {**(details or {}), "retryAfterSeconds": retry_after}
    return cls(http, reason, message, details=details or None)


def from_http(code: int, body: bytes | str | dict[str, Any] | None = None, retry_after: int | None = None) -> ApiError:
    """Build an error from an HTTP answer: a Status body when there is one, else the code alone. ``retry_after``
    is the answer's ``Retry-After`` in seconds (see ``parse_retry_after``)."""
    if isinstance(body, (bytes, str)) and body:
        try:
            import orjson

            parsed = orjson.loads(body)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict) and parsed.get("kind") == "Status":
            return from_status(parsed, code, retry_after)
        text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
        message = text.strip()[:1000]
    elif isinstance(body, dict):
        return from_status(body, code, retry_after)
    else:
        message = ""
    reason = _REASON_BY_CODE.get(code, "")
    details = {"retryAfterSeconds": retry_after} if retry_after else None
    message = message or f"the server answered {code} {reason}".strip()
    return (_BY_CODE.get(code) or ApiError)(code, reason, message, details=details)


def parse_retry_after(value: str | None) -> int | None:
    """A ``Retry-After`` header as whole seconds (client-go reads only the integer form), else None."""
    if not value:
        return None
    value = value.strip()
    if not value.isascii() or not value.isdigit():
        return None
    seconds = int(value)
    return seconds if seconds > 0 else None


def _qualified(resource: str, group: str = "") -> str:
    return f"{resource}.{group}" if group else resource


def new_not_found(resource: str, name: str, group: str = "") -> NotFoundError:
    """``<resource>[.<group>] "<name>" not found``, as the API server words it."""
    return NotFoundError(
        404,
        "NotFound",
        f'{_qualified(resource, group)} "{name}" not found',
        details={"name": name, "group": group, "kind": resource},
    )


def new_already_exists(resource: str, name: str, group: str = "") -> AlreadyExistsError:
    return AlreadyExistsError(
        409,
        "AlreadyExists",
        f'{_qualified(resource, group)} "{name}" already exists',
        details={"name": name, "group": group, "kind": resource},
    )


def new_conflict(resource: str, name: str, why: str, group: str = "") -> ConflictError:
    return ConflictError(
        409,
        "Conflict",
        f'Operation cannot be fulfilled on {_qualified(resource, group)} "{name}": {why}',
        details={"name": name, "group": group, "kind": resource},
    )


def new_invalid(kind: str, name: str, causes: list[dict[str, str]], group: str = "") -> InvalidError:
    """422 with one cause per bad field (``{"type", "message", "field"}``), worded like the API server."""
    parts = [f"{c.get('field', '')}: {c.get('message', '')}".strip(": ") for c in causes]
    message = f'{kind}{"." + group if group else ""} "{name}" is invalid: ' + ", ".join(parts)
    return InvalidError(
        422, "Invalid", message, details={"name": name, "group": group, "kind": kind, "causes": causes}
    )


def reason_for_error(err: BaseException) -> str:
    """The Status reason of an API error; "" (StatusReasonUnknown) for anything else."""
    return err.reason if isinstance(err, ApiError) else ""


def _reason_or_code(err: BaseException, reason: str, code: int) -> bool:
    """apimachinery's rule: the reason matches, or the reason is unknown and the HTTP code matches."""
    if not isinstance(err, ApiError):
        return False
    return err.reason == reason or (err.reason not in KNOWN_REASONS and err.status == code)


def is_not_found(err: BaseException) -> bool:
    return _reason_or_code(err, "NotFound", 404)


def is_already_exists(err: BaseException) -> bool:
    return reason_for_error(err) == "AlreadyExists"


def is_conflict(err: BaseException) -> bool:
    return _reason_or_code(err, "Conflict", 409)


def is_resource_expired(err: BaseException) -> bool:
    """Reason ``Expired`` only (apimachinery's ``IsResourceExpired``). See ``is_expired_or_gone``."""
    return reason_for_error(err) == "Expired"


def is_gone(err: BaseException) -> bool:
    """Reason ``Gone``, or code 410 with an unknown reason (apimachinery's ``IsGone``)."""
    return _reason_or_code(err, "Gone", 410)


def is_expired_or_gone(err: BaseException) -> bool:
    """The resourceVersion or continue token is no longer available: the Reflector's ``isExpiredError``."""
    return is_resource_expired(err) or is_gone(err)


def is_too_many_requests(err: BaseException) -> bool:
    """Reason ``TooManyRequests`` or code 429 whatever the reason (Go keeps the code check unconditional)."""
    return isinstance(err, ApiError) and (err.reason == "TooManyRequests" or err.status == 429)


def is_internal_error(err: BaseException) -> bool:
    return _reason_or_code(err, "InternalError", 500)


def is_invalid(err: BaseException) -> bool:
    return _reason_or_code(err, "Invalid", 422)


def is_bad_request(err: BaseException) -> bool:
    return _reason_or_code(err, "BadRequest", 400)


def is_unauthorized(err: BaseException) -> bool:
    return _reason_or_code(err, "Unauthorized", 401)


def is_forbidden(err: BaseException) -> bool:
    return _reason_or_code(err, "Forbidden", 403)


def is_service_unavailable(err: BaseException) -> bool:
    return _reason_or_code(err, "ServiceUnavailable", 503)


def is_timeout(err: BaseException) -> bool:
    return _reason_or_code(err, "Timeout", 504)


def is_too_large_resource_version(err: BaseException) -> bool:
    """The server's cache has not caught up with the requested resourceVersion (any of the three wire forms)."""
    if not isinstance(err, ApiError):
        return False
    # a StatusCause's type is "reason" on the wire ("type" in causes built locally)
    if any(CAUSE_RESOURCE_VERSION_TOO_LARGE in (c.get("reason"), c.get("type")) for c in err.causes):
        return True
    if err.reason == "Timeout" or err.status == 504:
        if any(c.get("message") == "Too large resource version" for c in err.causes):
            return True
        return "Too large resource version" in err.message
    return False


def __getattr__(name: str) -> Any:
    # the former name, kept importable without a module-level binding that would shadow the builtin here
    if name == "TimeoutError":
        return RequestTimeoutError
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
