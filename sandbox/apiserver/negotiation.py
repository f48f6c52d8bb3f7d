"""Output media type negotiation, as kube-apiserver's ``negotiation.NegotiateOutputMediaType`` does it for the one
media type the sandbox serves: JSON (plain, streamed for watches, or as a ``meta.k8s.io`` Table)."""

from __future__ import annotations

from functools import lru_cache

from apis.errors import ApiError

__all__ = ["SERVED_MEDIA_TYPES", "check_acceptable"]

SERVED_MEDIA_TYPES = ("application/json",)
_ACCEPTABLE_RANGES = frozenset({"application/json", "application/*", "*/*"})


@lru_cache(maxsize=256)  # clients send a few Accept headers over and over; a refused one is not cached (it raises)
def check_acceptable(accept: str | None) -> None:
    """406 NotAcceptable unless ``accept`` is missing or empty, or one of its media ranges (parameters such as
    ``as=Table`` or ``stream=watch`` included) matches JSON with a non-zero quality."""
    if accept is None or not accept.strip():
        return
    for entry in accept.split(","):
        media_type, *params = (p.strip() for p in entry.split(";"))
        quality = next((v.strip() for k, _, v in (p.partition("=") for p in params) if k.strip() == "q"), "1")
        if media_type.lower() in _ACCEPTABLE_RANGES and quality.strip("0.") != "":
            return
    raise ApiError(
        406, "NotAcceptable", "only the following media types are accepted: " + ", ".join(SERVED_MEDIA_TYPES)
    )
