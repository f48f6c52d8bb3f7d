"""Accessors and helpers for objects as plain dicts shaped the way the API server serves them.

Objects handed out by listers and handlers are shared and read-only: ``deep_copy`` before changing one.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

import orjson

__all__ = [
    "namespace",
    "name",
    "generate_name",
    "uid",
    "resource_version",
    "generation",
    "labels",
    "annotations",
    "finalizers",
    "owner_references",
    "deletion_timestamp",
    "creation_timestamp",
    "metadata",
    "get_controller_of",
    "is_controlled_by",
    "new_controller_ref",
    "deep_copy",
    "now_rfc3339",
    "format_time",
    "parse_time",
    "Requirement",
    "Selector",
    "parse_selector",
    "selector_from_set",
    "selector_from_label_selector",
    "everything",
    "nothing",
    "FieldSelector",
    "parse_field_selector",
]

_EMPTY: Mapping[str, Any] = {}


def metadata(obj: Mapping[str, Any] | None) -> Mapping[str, Any]:
    """``obj["metadata"]``, or an empty mapping when the object has none."""
    if not isinstance(obj, Mapping):
        return _EMPTY
    md = obj.get("metadata")
    return md if isinstance(md, Mapping) else _EMPTY


def namespace(obj: Mapping[str, Any] | None) -> str:
    return metadata(obj).get("namespace") or ""


def name(obj: Mapping[str, Any] | None) -> str:
    return metadata(obj).get("name") or ""


def generate_name(obj: Mapping[str, Any] | None) -> str:
    return metadata(obj).get("generateName") or ""


def uid(obj: Mapping[str, Any] | None) -> str:
    return metadata(obj).get("uid") or ""


def resource_version(obj: Mapping[str, Any] | None) -> str:
    return metadata(obj).get("resourceVersion") or ""


def generation(obj: Mapping[str, Any] | None) -> int:
    return int(metadata(obj).get("generation") or 0)


def labels(obj: Mapping[str, Any] | None) -> Mapping[str, str]:
    return metadata(obj).get("labels") or _EMPTY


def annotations(obj: Mapping[str, Any] | None) -> Mapping[str, str]:
    return metadata(obj).get("annotations") or _EMPTY


def finalizers(obj: Mapping[str, Any] | None) -> list[str]:
    return list(metadata(obj).get("finalizers") or [])


def owner_references(obj: Mapping[str, Any] | None) -> list[Mapping[str, Any]]:
    return list(metadata(obj).get("ownerReferences") or [])


def deletion_timestamp(obj: Mapping[str, Any] | None) -> str | None:
    return metadata(obj).get("deletionTimestamp") or None


def creation_timestamp(obj: Mapping[str, Any] | None) -> str | None:
    return metadata(obj).get("creationTimestamp") or None


def get_controller_of(obj: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    """The ownerReference with ``controller: true``, if any."""
    for ref in owner_references(obj):
        if ref.get("controller"):
            return ref
    return None


def is_controlled_by(obj: Mapping[str, Any], owner: Mapping[str, Any]) -> bool:
    ref = get_controller_of(obj)
    return ref is not None and ref.get("uid") == uid(owner)


def new_controller_ref(owner: Mapping[str, Any], gvk: Any = None) -> dict[str, Any]:
    """A controller ownerReference to ``owner`` (blockOwnerDeletion and controller set, as metav1.NewControllerRef).

    ``gvk`` may be a GroupVersionKind (``.group``, ``.version``, ``.kind``), a ``(apiVersion, kind)`` pair, or omitted to
    use the owner's own apiVersion/kind.
    """
    if gvk is None:
        api_version, kind = owner.get("apiVersion", ""), owner.get("kind", "")
    elif isinstance(gvk, tuple):
        api_version, kind = gvk
    else:
        api_version = f"{gvk.group}/{gvk.version}" if gvk.group else gvk.version
        kind = gvk.kind
    if not api_version or not kind:
        raise ValueError("new_controller_ref: owner apiVersion and kind are required")
    if not name(owner) or not uid(owner):
        raise ValueError("new_controller_ref: owner must have metadata.name and metadata.uid")
    return {
        "apiVersion": api_version,
        "kind": kind,
        "name": name(owner),
        "uid": uid(owner),
        "controller": True,
        "blockOwnerDeletion": True,
    }


def deep_copy(obj: Any) -> Any:
    """A deep copy of a JSON-shaped value (dicts, lists, str, int, float, bool, None) via an orjson round trip."""
    return orjson.loads(orjson.dumps(obj))


def format_time(dt: datetime) -> str:
    """RFC 3339 in UTC with second precision, as the API server writes timestamps."""
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    return dt.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def now_rfc3339() -> str:
    return format_time(datetime.now(timezone.utc))


def parse_time(value: str) -> datetime:
    """Parse an RFC 3339 timestamp (``2026-01-02T03:04:05Z``, fractions and offsets accepted)."""
    if not isinstance(value, str) or not value:
        raise ValueError(f"invalid timestamp {value!r}: expected RFC 3339")
    text = value[:-1] + "+00:00" if value.endswith(("Z", "z")) else value
    try:
        dt = datetime.fromisoformat(text)
    except ValueError as exc:
        raise ValueError(f"invalid timestamp {value!r}: expected RFC 3339") from exc
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    return dt


# ---------------------------------------------------------------------------------------------------------------
# Label selectors (k8s.io/apimachinery/pkg/labels)

_OPS = ("=", "==", "!=", "in", "notin", "exists", "!", "gt", "lt")
_LABEL_KEY = re.compile(r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")
_LABEL_VALUE = re.compile(r"^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$")


def _check_key(key: str, selector: str) -> None:
    prefix, _, nm = key.rpartition("/")
    if not key or not _LABEL_KEY.match(key) or len(nm) > 63 or len(prefix) > 253:
        raise ValueError(f"invalid label selector {selector!r}: invalid label key {key!r}")


def _check_value(value: str, selector: str) -> None:
    if len(value) > 63 or not _LABEL_VALUE.match(value):
        raise ValueError(f"invalid label selector {selector!r}: invalid label value {value!r}")


@dataclass(frozen=True)
class Requirement:
    """One clause of a selector: ``key op values``; op is one of = == != in notin exists ! gt lt."""

    key: str
    operator: str
    values: tuple[str, ...] = ()

    def matches(self, lbls: Mapping[str, str]) -> bool:
        op = self.operator
        if op == "exists":
            return self.key in lbls
        if op == "!":
            return self.key not in lbls
        if op in ("=", "==", "in"):
            return self.key in lbls and lbls[self.key] in self.values
        if op in ("!=", "notin"):
            return self.key not in lbls or lbls[self.key] not in self.values
        if op in ("gt", "lt"):
            if self.key not in lbls:
                return False
            try:
                have, want = int(lbls[self.key]), int(self.values[0])
            except ValueError:
                return False
            return have > want if op == "gt" else have < want
        raise ValueError(f"unknown operator {op!r}")

    def __str__(self) -> str:
        op = self.operator
        if op == "exists":
            return self.key
        if op == "!":
            return "!" + self.key
        if op in ("in", "notin"):
            return f"{self.key} {op} ({','.join(sorted(self.values))})"
        if op in ("gt", "lt"):
            return f"{self.key}{'>' if op == 'gt' else '<'}{self.values[0]}"
        return f"{self.key}{op}{self.values[0]}"


@dataclass(frozen=True)
class Selector:
    """A conjunction of requirements. The empty selector matches everything unless ``match_nothing`` is set."""

    requirements: tuple[Requirement, ...] = ()
    match_nothing: bool = field(default=False)

    def matches(self, lbls: Mapping[str, str] | None) -> bool:
        if self.match_nothing:
            return False
        lbls = lbls or _EMPTY
        return all(r.matches(lbls) for r in self.requirements)

    def empty(self) -> bool:
        return not self.requirements and not self.match_nothing

    def __str__(self) -> str:
        return ",".join(str(r) for r in self.requirements)


def everything() -> Selector:
    return Selector()


def nothing() -> Selector:
    return Selector(match_nothing=True)


_TOKEN = re.compile(r"\s*(!=|==|=|!|,|\(|\)|>|<|[^\s!=,()<>]+)")


def _tokens(text: str) -> list[str]:
    out: list[str] = []
    pos = 0
    while pos < len(text):
        if text[pos].isspace():
            pos += 1
            continue
        m = _TOKEN.match(text, pos)
        if not m:  # pragma: no cover - the pattern accepts every non-space char
            raise ValueError(f"invalid label selector {text!r}: unexpected character at {pos}")
        out.append(m.group(1))
        pos = m.end()
    return out


def parse_selector(text: str | None) -> Selector:
    """Parse the full label selector syntax: ``a=b``, ``a==b``, ``a!=b``, ``a in (x,y)``, ``a notin (x)``, ``a``,
    ``!a``, ``a>1``, ``a<1``; clauses joined by commas. Raises ``ValueError`` naming the problem."""
    if text is None or not text.strip():
        return Selector()
    toks = _tokens(text)
    reqs: list[Requirement] = []
    i = 0

    def expect_value() -> str:
        nonlocal i
        if i < len(toks) and toks[i] not in (",", "(", ")", "=", "==", "!=", "!", ">", "<"):
            v = toks[i]
            i += 1
            return v
        return ""

    while i < len(toks):
        tok = toks[i]
        if tok == "!":
            i += 1
            if i >= len(toks) or toks[i] in (",", "(", ")", "=", "==", "!=", "!"):
                raise ValueError(f"invalid label selector {text!r}: expected a key after '!'")
            key = toks[i]
            _check_key(key, text)
            reqs.append(Requirement(key, "!"))
            i += 1
        elif tok in (",", "(", ")", "=", "==", "!=", ">", "<"):
            raise ValueError(f"invalid label selector {text!r}: expected a key, found {tok!r}")
        else:
            key = tok
            _check_key(key, text)
            i += 1
            if i >= len(toks) or toks[i] == ",":
                reqs.append(Requirement(key, "exists"))
            else:
                op = toks[i]
                i += 1
                if op in ("=", "==", "!="):
                    value = expect_value()
                    _check_value(value, text)
                    reqs.append(Requirement(key, op, (value,)))
                elif op in (">", "<"):
                    value = expect_value()
                    try:
                        int(value)
                    except ValueError:
                        raise ValueError(
                            f"invalid label selector {text!r}: {op} needs an integer value, found {value!r}"
                        ) from None
                    reqs.append(Requirement(key, "gt" if op == ">" else "lt", (value,)))
                elif op in ("in", "notin"):
                    if i >= len(toks) or toks[i] != "(":
                        raise ValueError(f"invalid label selector {text!r}: expected '(' after {op!r}")
                    i += 1
                    values: list[str] = []
                    while True:
                        if i >= len(toks):
                            raise ValueError(f"invalid label selector {text!r}: missing ')'")
                        if toks[i] == ")":
                            i += 1
                            break
                        if toks[i] == ",":
                            i += 1
                            continue
                        v = expect_value()
                        if not v and toks[i] not in (",", ")"):
                            raise ValueError(f"invalid label selector {text!r}: unexpected {toks[i]!r} in value list")
                        _check_value(v, text)
                        values.append(v)
                        if i < len(toks) and toks[i] not in (",", ")"):
                            raise ValueError(f"invalid label selector {text!r}: expected ',' or ')' before {toks[i]!r}")
                    if not values:
                        raise ValueError(f"invalid label selector {text!r}: {op!r} needs at least one value")
                    reqs.append(Requirement(key, op, tuple(values)))
                else:
                    raise ValueError(f"invalid label selector {text!r}: unknown operator {op!r} after key {key!r}")
        if i < len(toks):
            if toks[i] != ",":
                raise ValueError(f"invalid label selector {text!r}: expected ',' before {toks[i]!r}")
            i += 1
            if i >= len(toks):
                raise ValueError(f"invalid label selector {text!r}: trailing ','")
    return Selector(tuple(reqs))


def selector_from_set(lbls: Mapping[str, str] | None) -> Selector:
    """A selector requiring every ``key=value`` of ``lbls`` (empty → everything)."""
    reqs = []
    for k, v in sorted((lbls or {}).items()):
        _check_key(k, f"{k}={v}")
        _check_value(v, f"{k}={v}")
        reqs.append(Requirement(k, "=", (v,)))
    return Selector(tuple(reqs))


def selector_from_label_selector(ls: Mapping[str, Any] | None) -> Selector:
    """Convert a metav1.LabelSelector dict (``matchLabels``, ``matchExpressions``). None → nothing; {} → everything."""
    if ls is None:
        return nothing()
    reqs = list(selector_from_set(ls.get("matchLabels")).requirements)
    ops = {"In": "in", "NotIn": "notin", "Exists": "exists", "DoesNotExist": "!"}
    for expr in ls.get("matchExpressions") or []:
        op = ops.get(expr.get("operator", ""))
        if op is None:
            raise ValueError(f"invalid label selector operator {expr.get('operator')!r}")
        values = tuple(expr.get("values") or ())
        if op in ("in", "notin") and not values:
            raise ValueError(f"label selector operator {expr['operator']} needs values")
        if op in ("exists", "!") and values:
            raise ValueError(f"label selector operator {expr['operator']} takes no values")
        key = expr.get("key") or ""
        if not isinstance(key, str) or not all(isinstance(v, str) for v in values):
            raise ValueError(f"invalid label selector expression {dict(expr)!r}: key and values must be strings")
        _check_key(key, f"matchExpressions key {key!r}")
        for v in values:
            _check_value(v, f"matchExpressions {key} values")
        reqs.append(Requirement(key, op, values))
    return Selector(tuple(reqs))


# ---------------------------------------------------------------------------------------------------------------
# Field selectors (k8s.io/apimachinery/pkg/fields): only =, ==, != on dotted paths.


@dataclass(frozen=True)
class FieldSelector:
    requirements: tuple[tuple[str, str, str], ...] = ()  # (path, op, value)

    def matches(self, obj: Mapping[str, Any]) -> bool:
        for path, op, value in self.requirements:
            have = _field_value(obj, path)
            if (have == value) != (op in ("=", "==")):
                return False
        return True

    def empty(self) -> bool:
        return not self.requirements

    def __str__(self) -> str:
        return ",".join(f"{p}{op}{v}" for p, op, v in self.requirements)


def _field_value(obj: Mapping[str, Any], path: str) -> str:
    cur: Any = obj
    for part in path.split("."):
        if not isinstance(cur, Mapping):
            return ""
        cur = cur.get(part)
    if cur is None:
        return ""
    if isinstance(cur, bool):
        return "true" if cur else "false"
    return str(cur)


def parse_field_selector(text: str | None) -> FieldSelector:
    """Parse ``a.b=c,d!=e``; raises ``ValueError`` on anything else."""
    if text is None or not text.strip():
        return FieldSelector()
    reqs = []
    for clause in text.split(","):
        clause = clause.strip()
        m = re.fullmatch(r"([A-Za-z0-9_.\-]+)\s*(==|!=|=)\s*(.*)", clause)
        if not m:
            raise ValueError(f"invalid field selector {text!r}: invalid clause {clause!r}")
        reqs.append((m.group(1), m.group(2), m.group(3).strip()))
    return FieldSelector(tuple(reqs))


def matches_label_set(selector: Selector, objs: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    return [o for o in objs if selector.matches(labels(o))]
