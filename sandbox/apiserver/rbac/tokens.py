"""Bearer-token authentication of the sandbox: the admin token of the written kubeconfig, and ServiceAccount
tokens issued through the TokenRequest API (``POST .../serviceaccounts/<name>/token``, what ``kubectl create
token`` calls).

The admin token authenticates ``sandbox-admin`` in ``system:masters`` (allowed everything). A ServiceAccount token
authenticates ``system:serviceaccount:<namespace>:<name>`` in ``system:serviceaccounts``,
``system:serviceaccounts:<namespace>`` and ``system:authenticated``, until it expires or its ServiceAccount is
deleted (or re-created: the token is bound to the account's uid), as kube-apiserver's bound tokens are. Tokens are
opaque random strings (not JWTs), kept in memory (at most ``MAX_TOKENS``; the oldest go first).
"""

from __future__ import annotations

import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from apis import meta
from apis.errors import NotFoundError
from apis.fake import ObjectTracker
from apis.resources import SERVICE_ACCOUNTS

from .attributes import UserInfo

__all__ = ["ADMIN_USER", "AUTHENTICATED", "MAX_TOKENS", "IssuedToken", "TokenAuthenticator", "service_account_user"]

AUTHENTICATED = "system:authenticated"
ADMIN_USER = UserInfo("sandbox-admin", ("system:masters", AUTHENTICATED))
MAX_TOKENS = 10_000
TOKEN_PREFIX = "sandbox-sa."


def service_account_user(namespace: str, name: str, uid: str = "") -> UserInfo:
    groups = ("system:serviceaccounts", f"system:serviceaccounts:{namespace}", AUTHENTICATED)
    return UserInfo(f"system:serviceaccount:{namespace}:{name}", groups, uid)


@dataclass(frozen=True)
class IssuedToken:
    token: str
    namespace: str
    name: str
    uid: str
    expires: float  # seconds since the epoch


class TokenAuthenticator:
    """Maps bearer tokens to users (see the module doc); thread-safe."""

    def __init__(self, tracker: ObjectTracker, admin_token: str, clock: Callable[[], float] = time.time) -> None:
        self.tracker = tracker
        self.admin_token = admin_token
        self.clock = clock
        self._lock = threading.Lock()
        self._tokens: OrderedDict[str, IssuedToken] = OrderedDict()

    def issue(self, namespace: str, name: str, expiration_seconds: int) -> IssuedToken:
        """A new token for ServiceAccount ``namespace/name`` (``NotFoundError`` when it does not exist)."""
        account = self.tracker.get(SERVICE_ACCOUNTS, namespace, name)
        issued = IssuedToken(TOKEN_PREFIX + secrets.token_urlsafe(32), namespace, name, meta.uid(account),
                             self.clock() + expiration_seconds)
        with self._lock:
            self._tokens[issued.token] = issued
            while len(self._tokens) > MAX_TOKENS:
                self._tokens.popitem(last=False)
        return issued

    def authenticate(self, authorization: str | None) -> UserInfo | None:
        """The user of an ``Authorization: Bearer <token>`` header; None when it authenticates nobody."""
        scheme, _, token = (authorization or "").strip().partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not token:
            return None
        if secrets.compare_digest(token.encode(), self.admin_token.encode()):
            return ADMIN_USER
        with self._lock:
            issued = self._tokens.get(token)
        if issued is None:
            return None
        if issued.expires <= self.clock():
            with self._lock:
                self._tokens.pop(token, None)
            return None
        try:
            account = self.tracker.get(SERVICE_ACCOUNTS, issued.namespace, issued.name)
        except NotFoundError:
            return None
        if meta.uid(account) != issued.uid:  # deleted and re-created: the old tokens are void
            return None
        return service_account_user(issued.namespace, issued.name, issued.uid)
