"""Accessors and helpers for objects as plain dicts shaped the way the API server serves them.

Objects handed out by listers and handlers are shared and read-only: ``deep_copy`` before changing one.
"""

# No ``from __future__ import annotations`` here: the public accessor ``annotations(obj)`` would shadow it (mypy
# reports a redefinition); the annotations of this module need no postponed evaluation.
import re
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Protocol, TypeVar, overload

import orjson

__all__ = [
    "Obj",
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
    "SelectorLike",
    "parse_selector",
    "selector_from_set",
    "selector_from_label_selector",
    "everything",
    "nothing",
    "FieldSelector",
    "parse_field_selector",
]

# An API object as a plain dict shaped the way the API server serves it (read-only when shared): the one name for the
# parameters and results that carry objects.
Obj = Mapping[str, Any]

_EMPTY: Mapping[str, Any] = {}


class _HasGVK(Protocol):
    """A GroupVersionKind (``apis.resources.GroupVersionKind``; ``apis.meta`` imports nothing of ``apis``)."""

    @property
    def group(self) -> str: ...

    @property
    def version(self) -> str: ...

    @property
    def kind(self) -> str: ...


def metadata(obj: Mapping[str, Any] | None) -> Mapping[str, Any]:
    """``obj["metadata"]``, or an empty mapping when the object has none."""
    # `type(...) is dict` first: isinstance against the Mapping ABC is several times slower, and this is asked
    # for every object on the informers' and the sandbox's hot paths (plain dicts nearly always).
    if type(obj) is not dict and not isinstance(obj, Mapping):
        return _EMPTY
    md = obj.get("metadata")
    return md if type(md) is dict or isinstance(md, Mapping) else _EMPTY


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


def new_controller_ref(owner: Mapping[str, Any], gvk: _HasGVK | tuple[str, str] | None = None) -> dict[str, Any]:
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


_Scalar = TypeVar("_Scalar", str, int, float, bool, None)


@overload
def deep_copy(obj: Mapping[str, Any]) -> dict[str, Any]: ...


@overload
def deep_copy(obj: list[Any]) -> list[Any]: ...


@overload
def deep_copy(obj: _Scalar) -> _Scalar: ...


# A dict argument must match only the Mapping overload: mypy answers Any when an argument with Any inside (as
# dict[str, Any]) matches several overloads, so no catch-all `object` overload here.
def deep_copy(obj: object) -> Any:
    """A deep copy of a JSON-shaped value (dicts, lists, str, int, float, bool, None) via an orjson round trip."""
    return orjson.loads(orjson.dumps(obj))


def format_time(dt: datetime) -> str:
    """RFC 3339 in UTC with second precision, as the API server writes timestamps."""
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    dt = dt.astimezone(timezone.utc)
    # an f-string rather than strftime: this runs for every write the sandbox stores (a hot path), ~3x faster
    return f"{dt.year:04d}-{dt.month:02d}-{dt.day:02d}T{dt.hour:02d}:{dt.minute:02d}:{dt.second:02d}Z"


_now_text: tuple[int, str] = (-1, "")  # (UNIX second, its RFC 3339 text): one format per second, not per write


def now_rfc3339() -> str:
    """The current time as ``format_time`` writes it."""
    global _now_text
    second = int(time.time())
    cached = _now_text
    if cached[0] != second:
        cached = _now_text = (second, format_time(datetime.fromtimestamp(second, timezone.utc)))
    return cached[1]


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
        """Whether ``lbls`` satisfy the requirement; never raises: a value that is not a string (which no valid
        object has) equals no selector value and is no number."""
        op = self.operator
        if op == "exists":
            return self.key in lbls
        if op == "!":
            return self.key not in lbls
        value = lbls.get(self.key)
        if op in ("=", "==", "in"):
            return isinstance(value, str) and value in self.values
        if op in ("!=", "notin"):
            return not isinstance(value, str) or value not in self.values
        if op in ("gt", "lt"):
            if not isinstance(value, str):
                return False
            have, want = parse_int64(value), parse_int64(self.values[0]) if len(self.values) == 1 else None
            if have is None or want is None:
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
        lbls = lbls if isinstance(lbls, Mapping) else _EMPTY  # a malformed object's labels are no labels
        return all(r.matches(lbls) for r in self.requirements)

    def empty(self) -> bool:
        return not self.requirements and not self.match_nothing

    def __str__(self) -> str:
        """Like Go's ``String()``: requirements ordered by key (stable), values of a set sorted."""
        return ",".join(str(r) for r in sorted(self.requirements, key=lambda r: r.key))


# What listers take as a label selector: a Selector, the selector syntax, a label set, or None (everything).
SelectorLike = Selector | str | dict[str, str] | None


def everything() -> Selector:
    return Selector()


def nothing() -> Selector:
    return Selector(match_nothing=True)


# The lexer of apimachinery's labels parser: whitespace is exactly " \t\r\n"; an identifier runs to the next
# whitespace or special symbol; special symbols combine greedily into "!=", "==".
_TOKEN = re.compile(r"!=|==|[=!(),<>]|[^ \t\r\n=!(),<>]+")
_OPERATOR_TOKENS = {"=": "=", "==": "==", "!=": "!=", ">": "gt", "<": "lt", "in": "in", "notin": "notin"}
_INT64 = re.compile(r"[+-]?[0-9]+")


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(text)


def parse_int64(value: str) -> int | None:
    """Go's ``strconv.ParseInt(value, 10, 64)``: optional sign, ASCII digits only, int64 range; else None."""
    if not _INT64.fullmatch(value):
        return None
    n = int(value)
    return n if -(2**63) <= n < 2**63 else None


class _SelectorParser:
    """apimachinery's labels.Parser. In a value position "in"/"notin" are plain identifiers."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.toks = _tokens(text)
        self.i = 0

    def error(self, why: str) -> ValueError:
        return ValueError(f"invalid label selector {self.text!r}: {why}")

    def peek(self) -> str | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def take(self) -> str | None:
        tok = self.peek()
        self.i += tok is not None
        return tok

    @staticmethod
    def is_identifier(tok: str | None) -> bool:
        return tok is not None and tok not in ("!=", "==", "=", "!", "(", ")", ",", "<", ">")

    def parse(self) -> list[Requirement]:
        reqs: list[Requirement] = []
        while self.peek() is not None:
            reqs.append(self.requirement())
            tok = self.take()
            if tok is None:
                break
            if tok != ",":
                raise self.error(f"expected ',' before {tok!r}")
            if self.peek() is None:
                raise self.error("trailing ','")
            if not (self.is_identifier(self.peek()) or self.peek() == "!"):
                raise self.error(f"expected a key after ',', found {self.peek()!r}")
        return sorted(reqs, key=lambda r: r.key)  # stable: Go sorts by key too

    def requirement(self) -> Requirement:
        negated = self.peek() == "!"
        if negated:
            self.take()
        key = self.take()
        if not self.is_identifier(key):
            where = " after '!'" if negated else ""
            raise self.error(f"expected a key{where}, found {key!r}" if key else f"expected a key{where}")
        assert key is not None
        _check_key(key, self.text)
        if self.peek() in (None, ","):
            return Requirement(key, "!" if negated else "exists")
        if negated:  # "!a=b": the requirement ended at the key
            raise self.error(f"expected ',' after '!{key}', found {self.peek()!r}")
        op_tok = self.take()
        op = _OPERATOR_TOKENS.get(op_tok or "")
        if op is None:
            raise self.error(f"unknown operator {op_tok!r} after key {key!r}: expected one of = == != in notin > <")
        values = self.value_set() if op in ("in", "notin") else (self.exact_value(),)
        for v in values:
            _check_value(v, self.text)
        if op in ("gt", "lt") and parse_int64(values[0]) is None:
            raise self.error(f"{op_tok} needs an integer value, found {values[0]!r}")
        return Requirement(key, op, values)

    def exact_value(self) -> str:
        if self.peek() in (None, ","):
            return ""
        tok = self.take()
        if not self.is_identifier(tok):
            raise self.error(f"expected a value, found {tok!r}")
        assert tok is not None
        return tok

    def value_set(self) -> tuple[str, ...]:
        """``( v1, v2 )``: "()" is {""}; an empty slot (``(a,)``, ``(,a)``, ``(a,,b)``) adds ""."""
        if self.take() != "(":
            raise self.error("expected '(' after 'in'/'notin'")
        values: set[str] = set()
        if self.peek() == ")":
            self.take()
            return ("",)
        if self.peek() is None:
            raise self.error("missing ')'")
        if not (self.is_identifier(self.peek()) or self.peek() == ","):
            raise self.error(f"expected ',', ')' or a value, found {self.peek()!r}")
        while True:
            tok = self.take()
            if self.is_identifier(tok):
                assert tok is not None
                values.add(tok)
                if self.peek() == ")":
                    break
                if self.peek() is None:
                    raise self.error("missing ')'")
                if self.peek() != ",":
                    raise self.error(f"expected ',' or ')' before {self.peek()!r}")
            elif tok == ",":
                if not values or self.peek() in (",", ")"):
                    values.add("")
                if self.peek() == ")":
                    break
            elif tok is None:
                raise self.error("missing ')'")
            else:
                raise self.error(f"expected ',' or a value, found {tok!r}")
        self.take()  # ")"
        return tuple(sorted(values))


def parse_selector(text: str | None) -> Selector:
    """Parse the label selector syntax exactly as apimachinery does: ``a=b``, ``a==b``, ``a!=b``, ``a in (x,y)``,
    ``a notin (x)``, ``a``, ``!a``, ``a>1``, ``a<1``; clauses joined by commas; requirements sorted by key; value
    sets deduplicated and sorted. Raises ``ValueError`` naming the problem."""
    if text is None or not text.strip(" \t\r\n"):
        return Selector()
    return Selector(tuple(_SelectorParser(text).parse()))


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
    return Selector(tuple(sorted(reqs, key=lambda r: r.key)))  # Go's Add sorts by key


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
