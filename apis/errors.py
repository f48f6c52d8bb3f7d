"""Kubernetes API errors as exceptions, built from a ``Status`` body or an HTTP status code.

Every error has ``.status`` (HTTP code), ``.reason`` (the Status reason) and ``.message``; ``str()`` reads like
kubectl (``pods "x" not found``).
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
    "TimeoutError",
    "TooManyRequestsError",
    "UnauthorizedError",
    "ServiceUnavailableError",
    "from_status",
    "from_http",
    "new_not_found",
    "new_already_exists",
    "new_conflict",
    "new_invalid",
    "is_not_found",
    "is_already_exists",
    "is_conflict",
    "is_resource_expired",
    "is_gone",
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


class AlreadyExistsError(ConflictError):
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


class TimeoutError(ApiError):  # noqa: A001 - mirrors apimachinery's StatusReasonTimeout
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
    "Timeout": TimeoutError,
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
    504: TimeoutError,
}

_REASON_BY_CODE = {code: cls.default_reason for code, cls in _BY_CODE.items()}
_REASON_BY_CODE[409] = "Conflict"


def from_status(status: dict[str, Any], code: int | None = None) -> ApiError:
    """Build the matching error from a Kubernetes ``Status`` body (as in an ERROR watch event or a failed request)."""
    if not isinstance(status, dict):
        return InternalError(500, "InternalError", f"unexpected error object: {status!r}")
    http = int(status.get("code") or code or 500)
    reason = status.get("reason") or _REASON_BY_CODE.get(http, "")
    cls = _BY_REASON.get(reason) or _BY_CODE.get(http) or ApiError
    message = status.get("message") or f"{http} {reason}".strip()
    return cls(http, reason, message, details=status.get("details") or None)


def from_http(code: int, body: bytes | str | dict[str, Any] | None = None) -> ApiError:
    """Build an error from an HTTP answer: a Status body when there is one, else the code alone."""
    if isinstance(body, (bytes, str)) and body:
        try:
            import orjson

            parsed = orjson.loads(body)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict) and parsed.get("kind") == "Status":
            return from_status(parsed, code)
        text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
        reason = _REASON_BY_CODE.get(code, "")
        return (_BY_CODE.get(code) or ApiError)(code, reason, text.strip()[:1000] or f"{code} {reason}")
    if isinstance(body, dict):
        return from_status(body, code)
    reason = _REASON_BY_CODE.get(code, "")
    return (_BY_CODE.get(code) or ApiError)(code, reason, f"the server answered {code} {reason}".strip())


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


def _reason(err: BaseException) -> str | None:
    return err.reason if isinstance(err, ApiError) else None


def is_not_found(err: BaseException) -> bool:
    return isinstance(err, ApiError) and (err.reason == "NotFound" or (err.status == 404 and not err.reason))


def is_already_exists(err: BaseException) -> bool:
    return _reason(err) == "AlreadyExists"


def is_conflict(err: BaseException) -> bool:
    return isinstance(err, ApiError) and (err.reason == "Conflict" or (err.status == 409 and err.reason != "AlreadyExists"))


def is_resource_expired(err: BaseException) -> bool:
    """410 Expired or Gone: the resourceVersion or continue token is no longer available."""
    return isinstance(err, ApiError) and (err.reason in ("Expired", "Gone") or err.status == 410)


is_gone = is_resource_expired


def is_too_many_requests(err: BaseException) -> bool:
    return isinstance(err, ApiError) and (err.reason == "TooManyRequests" or err.status == 429)


def is_internal_error(err: BaseException) -> bool:
    return isinstance(err, ApiError) and (err.reason == "InternalError" or (err.status == 500 and not err.reason))


def is_invalid(err: BaseException) -> bool:
    return isinstance(err, ApiError) and (err.reason == "Invalid" or err.status == 422)


def is_bad_request(err: BaseException) -> bool:
    return isinstance(err, ApiError) and (err.reason == "BadRequest" or err.status == 400)


def is_forbidden(err: BaseException) -> bool:
    return isinstance(err, ApiError) and (err.reason == "Forbidden" or err.status == 403)


def is_too_large_resource_version(err: BaseException) -> bool:
    """The server's cache has not caught up with the requested resourceVersion (any of the three wire forms)."""
    if not isinstance(err, ApiError):
        return False
    if any(c.get("type") == CAUSE_RESOURCE_VERSION_TOO_LARGE for c in err.causes):
        return True
    if err.reason == "Timeout" or err.status == 504:
        if any(c.get("message") == "Too large resource version" for c in err.causes):
            return True
        return "Too large resource version" in err.message
    return False
