"""``AccessControl``: who a request comes from and whether it may proceed, the sandbox's stand-in for
kube-apiserver's authentication and authorization filters.

RBAC mode off (the default): every request is allowed, as before; a ServiceAccount token still names its account
(``kubectl auth whoami``), any other token is the admin. RBAC mode on: a request without a known token gets 401
``Unauthorized``; others are authorized by ``RBACAuthorizer`` and a denial gets kube-apiserver's 403. Health
probes are answered before this gate, to anyone. Every denial is logged (``sandbox RBAC denied`` with user, verb,
resource, namespace, name) and counted per user; the allowed ``(group, resource, verb)`` of each user are kept (at
most ``MAX_USAGE`` entries), so that a test can compare what a program used with what it was granted.
"""

from __future__ import annotations

import threading
from collections import Counter, deque
from dataclasses import dataclass

from apis.errors import ApiError, UnauthorizedError
from apis.fake import ObjectTracker
from apis.logs import get_logger

from ..request import Headers
from .attributes import RequestAttributes, UserInfo, request_attributes
from .authorizer import RBACAuthorizer, forbidden
from .bootstrap import bootstrap_policy
from .tokens import ADMIN_USER, IssuedToken, TokenAuthenticator

__all__ = ["AccessControl", "Denial", "MAX_USAGE"]

log = get_logger(__name__)

MAX_USAGE = 10_000
MAX_DENIALS_KEPT = 1_000


@dataclass(frozen=True)
class Denial:
    """One refused request: its attributes and the message answered."""

    attributes: RequestAttributes
    message: str


class AccessControl:
    """Authentication and (in RBAC mode) authorization of every request but the health probes; thread-safe."""

    def __init__(self, tracker: ObjectTracker, admin_token: str, rbac: bool = False) -> None:
        self.tracker = tracker
        self.rbac = rbac
        self.tokens = TokenAuthenticator(tracker, admin_token)
        self.authorizer = RBACAuthorizer(tracker)
        self._lock = threading.Lock()
        self._denied: Counter[str] = Counter()
        self._denials: deque[Denial] = deque(maxlen=MAX_DENIALS_KEPT)
        self._usage: dict[str, set[tuple[str, str, str]]] = {}
        self._usage_size = 0

    def bootstrap(self) -> None:
        """Create kube-apiserver's default RBAC policy (RBAC mode only): see ``bootstrap``."""
        if self.rbac:
            bootstrap_policy(self.tracker)

    # -- the gate ---------------------------------------------------------------------------------------------------
    def admit(self, method: str, path: str, query: dict[str, list[str]], headers: Headers) -> UserInfo:
        """The requesting user; raises 401/403 ``ApiError`` when the request may not proceed."""
        user = self.tokens.authenticate(headers.get("Authorization"))
        if not self.rbac:
            return user or ADMIN_USER
        if user is None:
            raise UnauthorizedError(401, "Unauthorized", "Unauthorized")
        attrs = request_attributes(user, method, path, query)
        allowed, reason = self.decide(attrs)
        if not allowed:
            err = forbidden(attrs, reason)
            self._record_denial(attrs, err)
            raise err
        if attrs.resource_request:
            self._record_use(user.name, (attrs.api_group, attrs.combined_resource, attrs.verb))
        return user

    def decide(self, attrs: RequestAttributes) -> tuple[bool, str]:
        """``(allowed, reason)`` for ``attrs``: RBAC in RBAC mode, else always allowed."""
        if not self.rbac:
            return True, ""
        decision = self.authorizer.authorize(attrs)
        return decision.allowed, decision.reason

    def issue_token(self, namespace: str, name: str, expiration_seconds: int) -> IssuedToken:
        return self.tokens.issue(namespace, name, expiration_seconds)

    # -- what tests read --------------------------------------------------------------------------------------------
    def denied(self, user: str | None = None) -> int:
        """How many requests were refused with 403 (of ``user``, or of everyone)."""
        with self._lock:
            return self._denied[user] if user is not None else sum(self._denied.values())

    def denials(self, user: str | None = None) -> list[Denial]:
        """The last refused requests (at most 1,000), oldest first."""
        with self._lock:
            return [d for d in self._denials if user is None or d.attributes.user.name == user]

    def usage(self, user: str) -> set[tuple[str, str, str]]:
        """The ``(apiGroup, resource[/subresource], verb)`` that ``user`` was allowed."""
        with self._lock:
            return set(self._usage.get(user, ()))

    def _record_denial(self, attrs: RequestAttributes, err: ApiError) -> None:
        with self._lock:
            self._denied[attrs.user.name] += 1
            self._denials.append(Denial(attrs, err.message))
        log.warning("sandbox RBAC denied", user=attrs.user.name, verb=attrs.verb, group=attrs.api_group,
                    resource=attrs.combined_resource or attrs.path, namespace=attrs.namespace, name=attrs.name)

    def _record_use(self, user: str, entry: tuple[str, str, str]) -> None:
        with self._lock:
            used = self._usage.setdefault(user, set())
            if entry not in used and self._usage_size < MAX_USAGE:
                used.add(entry)
                self._usage_size += 1
