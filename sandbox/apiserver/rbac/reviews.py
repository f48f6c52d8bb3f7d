"""Requests answered from the requester's identity rather than stored: TokenRequest
(``serviceaccounts/<name>/token``), SelfSubjectAccessReview and SubjectAccessReview (``kubectl auth can-i``) and
SelfSubjectReview (``kubectl auth whoami``). Each is a POST answered 201 with the request completed by its
``status``, as kube-apiserver answers them; nothing is stored."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timezone
from typing import Any, Protocol

from apis.errors import BadRequestError, MethodNotAllowedError, new_invalid
from apis.resources import (
    SELF_SUBJECT_ACCESS_REVIEWS,
    SELF_SUBJECT_REVIEWS,
    SERVICE_ACCOUNTS,
    SUBJECT_ACCESS_REVIEWS,
)
from sandbox.apiserver.endpoints import Headers, Response, unsupported_media_type
from sandbox.apiserver.request import ResourceRequest, media_type, parse_json, parse_yaml

from .attributes import RequestAttributes, UserInfo

__all__ = ["serves", "serve", "DEFAULT_TOKEN_SECONDS", "MIN_TOKEN_SECONDS", "TOKEN_AUDIENCE"]

DEFAULT_TOKEN_SECONDS = 3600
MIN_TOKEN_SECONDS = 600  # kube-apiserver refuses shorter tokens
MAX_TOKEN_SECONDS = 2**32
TOKEN_AUDIENCE = "https://kubernetes.default.svc.cluster.local"
_REVIEWS = (SELF_SUBJECT_ACCESS_REVIEWS, SUBJECT_ACCESS_REVIEWS, SELF_SUBJECT_REVIEWS)


class AccessContext(Protocol):
    """What reviews need from the server's access control."""

    def issue_token(self, namespace: str, name: str, expiration_seconds: int) -> Any: ...

    def decide(self, attrs: RequestAttributes) -> tuple[bool, str]: ...


def serves(req: ResourceRequest) -> bool:
    """Whether ``req`` is one of the requests answered here."""
    return req.gvr in _REVIEWS or (req.gvr == SERVICE_ACCOUNTS and req.subresource == "token")


def _timestamp(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _body(body: bytes, headers: Headers) -> dict[str, Any]:
    media = media_type(headers.get("Content-Type")) or "application/json"
    if media not in ("application/json", "application/yaml"):
        raise unsupported_media_type(("application/json", "application/yaml"))
    doc = parse_yaml(body) if media == "application/yaml" else parse_json(body)
    if not isinstance(doc, dict):
        raise BadRequestError("the request body must be a JSON object")
    return doc


def serve(access: AccessContext, user: UserInfo, method: str, req: ResourceRequest, body: bytes,
          headers: Headers) -> Response:
    if method != "POST" or (req.name and req.subresource != "token"):
        raise MethodNotAllowedError("the server does not allow this method on the requested resource")
    doc = _body(body, headers)
    if req.gvr == SERVICE_ACCOUNTS:
        return _token_request(access, req, doc)
    if req.gvr == SELF_SUBJECT_REVIEWS:
        info = {"username": user.name, "groups": list(user.groups)}
        if user.uid:
            info["uid"] = user.uid
        return Response(201, {**_echo(doc, req), "status": {"userInfo": info}})
    spec = found if isinstance(found := doc.get("spec"), Mapping) else {}
    if req.gvr == SUBJECT_ACCESS_REVIEWS:
        subject = UserInfo(str(spec.get("user") or ""), tuple(str(g) for g in spec.get("groups") or []),
                           str(spec.get("uid") or ""))
        if not subject.name and not subject.groups:
            raise new_invalid("SubjectAccessReview", "", [_cause("spec.user", "at least one of user or group must be "
                                                                 "specified")], "authorization.k8s.io")
    else:
        subject = user
    attrs = _review_attributes(subject, spec, req.info.kind)
    allowed, reason = access.decide(attrs)
    status: dict[str, Any] = {"allowed": allowed}
    if reason:
        status["reason"] = reason
    return Response(201, {**_echo(doc, req), "status": status})


def _echo(doc: Mapping[str, Any], req: ResourceRequest) -> dict[str, Any]:
    out = {k: v for k, v in doc.items() if k != "status"}
    out["apiVersion"], out["kind"] = req.gvr.api_version, req.info.kind
    out["metadata"] = {**(doc.get("metadata") or {}), "creationTimestamp": None}
    return out


def _cause(path: str, message: str) -> dict[str, str]:
    return {"type": "FieldValueRequired", "field": path, "message": f"Required value: {message}"}


def _review_attributes(user: UserInfo, spec: Mapping[str, Any], kind: str) -> RequestAttributes:
    resource = spec.get("resourceAttributes")
    non_resource = spec.get("nonResourceAttributes")
    if isinstance(resource, Mapping) == isinstance(non_resource, Mapping):
        raise new_invalid(kind, "", [_cause("spec.resourceAttributes", "exactly one of nonResourceAttributes or "
                                            "resourceAttributes must be specified")], "authorization.k8s.io")
    if isinstance(non_resource, Mapping):
        return RequestAttributes(user, str(non_resource.get("verb") or ""), False, path=str(non_resource.get("path") or ""))
    assert isinstance(resource, Mapping)
    return RequestAttributes(
        user, str(resource.get("verb") or ""), True, "", str(resource.get("group") or ""),
        str(resource.get("version") or ""), str(resource.get("namespace") or ""), str(resource.get("resource") or ""),
        str(resource.get("subresource") or ""), str(resource.get("name") or ""),
    )


def _token_request(access: AccessContext, req: ResourceRequest, doc: Mapping[str, Any]) -> Response:
    spec = dict(doc.get("spec") or {}) if isinstance(doc.get("spec"), Mapping) else {}
    seconds = spec.get("expirationSeconds", DEFAULT_TOKEN_SECONDS)
    if seconds is None:
        seconds = DEFAULT_TOKEN_SECONDS
    if isinstance(seconds, bool) or not isinstance(seconds, int) or seconds < MIN_TOKEN_SECONDS:
        raise new_invalid("TokenRequest", req.name, [{
            "type": "FieldValueInvalid", "field": "spec.expirationSeconds",
            "message": f"Invalid value: {seconds!r}: may not specify a duration less than 10 minutes"}],
            "authentication.k8s.io")
    seconds = min(seconds, MAX_TOKEN_SECONDS)
    issued = access.issue_token(req.namespace, req.name, seconds)
    spec["expirationSeconds"] = seconds
    spec["audiences"] = list(spec.get("audiences") or [TOKEN_AUDIENCE])
    spec.setdefault("boundObjectRef", None)
    return Response(201, {
        "kind": "TokenRequest",
        "apiVersion": "authentication.k8s.io/v1",
        "metadata": {"name": req.name, "namespace": req.namespace, "creationTimestamp": None},
        "spec": spec,
        "status": {"token": issued.token, "expirationTimestamp": _timestamp(issued.expires)},
    })
