"""``EdgeAuth``: which node an LC's upgrade request proves it is (docs/edge.md, "Node identity").

A connection is admitted as the node its ``Node-Name`` header names only when its credential proves that node:

* a TLS client certificate (``websocket.clientCAFile``) whose subject CN or a DNS subjectAltName is the node name
  (or, as a kubelet's, CN ``system:node:<name>``); a verified certificate naming another node is refused with 403;
* a per-node bearer token (``websocket.nodeTokensDir``: ``NodeTokens``);
* the shared bearer token (``websocket.tokenFile``: ``EdgeTokens``) — proves nothing about the node: any holder can
  act as any node. Kept as an opt-in for small set-ups and for moving to per-node tokens.

With none of them configured, auth is off and every well-formed request is admitted (Go Sedna's LC sends no
credential). The request's headers are checked first: a repeated ``Node-Name`` is a 400 and a repeated or malformed
``Authorization`` a 401 (never a 500); the ``Bearer`` scheme is matched in any case.
"""

from __future__ import annotations

import http
from dataclasses import dataclass
from typing import Any

from websockets.datastructures import Headers

from apis.edge import NODE_NAME_HEADER

from .tokens import EdgeTokens, NodeTokens, parse_bearer

__all__ = ["Credential", "EdgeAuth", "Verdict", "cert_names"]

CERT = "certificate"
NODE_TOKEN = "node-token"
SHARED_TOKEN = "shared-token"
NONE = "none"


@dataclass(frozen=True)
class Credential:
    """What admitted a connection: ``kind`` (certificate, node-token, shared-token, none) and, for a node token,
    the token (kept to check again later: a revoked node's live connection is closed)."""

    kind: str
    token: str = ""

    def __repr__(self) -> str:  # never the token
        return f"Credential(kind={self.kind!r})"


@dataclass(frozen=True)
class Verdict:
    """An admitted ``credential`` (``status`` 0) or a refusal: HTTP ``status``, the metric ``reason``, the
    ``detail`` logged and answered."""

    status: int = 0
    reason: str = ""
    detail: str = ""
    credential: Credential | None = None


def cert_names(peercert: dict[str, Any] | None) -> set[str]:
    """The node names a verified certificate (``SSLSocket.getpeercert()``) vouches for."""
    if not peercert:
        return set()
    names: set[str] = set()
    for rdn in peercert.get("subject", ()):
        for key, value in rdn:
            if key == "commonName":
                names.add(value.removeprefix("system:node:"))
    for kind, value in peercert.get("subjectAltName", ()):
        if kind == "DNS":
            names.add(value)
    return names


class EdgeAuth:
    def __init__(self, shared: EdgeTokens | None = None, nodes: NodeTokens | None = None,
                 client_certs: bool = False) -> None:
        self.shared = shared if shared is not None else EdgeTokens()
        self.nodes = nodes
        self.client_certs = client_certs

    @property
    def enabled(self) -> bool:
        return self.shared.enabled or self.nodes is not None or self.client_certs

    @property
    def mode(self) -> str:
        """For the start-up log: which credentials are accepted."""
        parts = [name for name, on in (("client-certificate", self.client_certs), ("node-token", self.nodes),
                                       ("shared-token", self.shared.enabled)) if on]
        return "+".join(parts) or "off"

    def check_headers(self, headers: Headers) -> Verdict:
        """Refuse a request whose identity headers are repeated or malformed (before the node name is read)."""
        if len(headers.get_all(NODE_NAME_HEADER)) > 1:
            return Verdict(http.HTTPStatus.BAD_REQUEST, "bad_header", "the Node-Name header is repeated")
        authorization = headers.get_all("Authorization")
        if len(authorization) > 1:
            return _unauthorized("bad_header", "the Authorization header is repeated")
        if authorization and self.enabled and parse_bearer(authorization[0]) is None:
            return _unauthorized("bad_header", "the Authorization header is not 'Bearer <token>'")
        return Verdict()

    def authenticate(self, node: str, headers: Headers, peercert: dict[str, Any] | None) -> Verdict:
        """Whether the request proves ``node`` (call ``check_headers`` first)."""
        if not self.enabled:
            return Verdict(credential=Credential(NONE))
        if self.client_certs and peercert:
            names = cert_names(peercert)
            if node in names:
                return Verdict(credential=Credential(CERT))
            return Verdict(http.HTTPStatus.FORBIDDEN, "forbidden",
                           f"the client certificate names {', '.join(sorted(names)) or 'no node'}, not this node")
        token = parse_bearer(headers.get("Authorization", "")) or ""
        if not token:
            return _unauthorized("unauthorized", "no credential: a bearer token or a client certificate is required")
        problem = "wrong token"
        if self.nodes is not None:
            problem = self.nodes.check(node, token)
            if not problem:
                return Verdict(credential=Credential(NODE_TOKEN, token))
        if self.shared.accepts(token):
            return Verdict(credential=Credential(SHARED_TOKEN))
        return _unauthorized("unauthorized", problem)

    def still_valid(self, node: str, credential: Credential) -> str:
        """"" while ``credential`` still proves ``node``; else why not. Only a node token is checked again (a
        revoked or rotated one, past its grace, ends the connection); a shared token or a certificate stays valid
        for the connection's life."""
        if credential.kind != NODE_TOKEN or self.nodes is None:
            return ""
        return self.nodes.check(node, credential.token)


def _unauthorized(reason: str, detail: str) -> Verdict:
    return Verdict(http.HTTPStatus.UNAUTHORIZED, reason, detail)
