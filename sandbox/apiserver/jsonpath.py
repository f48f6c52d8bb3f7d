"""Kubernetes JSONPath (client-go ``util/jsonpath``) as kube-apiserver evaluates a CRD's additionalPrinterColumns.

A column's ``jsonPath`` is parsed as the template ``{<jsonPath>}``: one action made of fields (``.a.b``,
``['a.b']``), recursive descent (``..name``), wildcards (``.*``, ``[*]``), indices and slices (``[0]``, ``[-1]``,
``[1:3]``; a negative index counts from the end), unions (``[0,2]``, ``['a','b']``) and filters
(``[?(@.type=="Ready")]``, ``[?(@.x)]``; ``== != < > <= >=``). Templates with several actions, text or
``range``/``end`` are what ``kubectl -o jsonpath`` prints, not printer columns, and are refused.

Semantics follow client-go's evaluator with ``AllowMissingKeys(true)``: a missing key yields nothing, an index out
of range or a field of a non-object is an error (the column's cell is then empty), ``[n]`` on an array of any
length never wraps twice. ``format_value`` prints a value as Go's ``fmt.Fprint`` does (what a ``string`` column
shows for a number, a list or an object).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Union

__all__ = ["JSONPath", "JSONPathError", "format_value", "parse"]

MAX_EXPRESSION_LENGTH = 4096


class JSONPathError(ValueError):
    """A JSONPath that does not parse, or that fails on the data it is evaluated on."""


@dataclass(frozen=True)
class Field:
    name: str


@dataclass(frozen=True)
class Wildcard:
    pass


@dataclass(frozen=True)
class Recursive:
    pass


@dataclass(frozen=True)
class Slice:
    """``[start:end:cap]``; ``end_derived`` marks ``[n]`` (end is start + 1, counted from the end as start is)."""

    start: int | None
    end: int | None
    cap: int | None
    end_derived: bool = False


@dataclass(frozen=True)
class Literal:
    value: Any


@dataclass(frozen=True)
class Union_:
    branches: tuple[tuple[Node, ...], ...]


@dataclass(frozen=True)
class Filter:
    left: tuple[Node, ...]
    operator: str  # "exists" or a comparison
    right: tuple[Node, ...]


Node = Union[Field, Wildcard, Recursive, Slice, Literal, Union_, Filter]

_SLICE = re.compile(r"^(-?\d*)(:-?\d*)?(:-?\d*)?$")
_DICT_KEY = re.compile(r"^'([^']*)'$")
_COMPARISON = re.compile(r"^([^!<>=]+)([!<>=]+)(.+?)$")
_TERMINATORS = set(" \t\r\n.,[]$@{}")
_OPERATORS = ("==", "!=", "<", ">", "<=", ">=")


class _Parser:
    """A recursive-descent parser of one action's text (what is between ``{`` and ``}``)."""

    def __init__(self, text: str) -> None:
        self.text, self.pos = text, 0

    def parse(self) -> tuple[Node, ...]:
        nodes: list[Node] = []
        text = self.text
        while self.pos < len(text):
            rest = text[self.pos:]
            char = text[self.pos]
            if rest.startswith("[?("):
                nodes.append(self._filter())
            elif rest.startswith(".."):
                if nodes and isinstance(nodes[-1], Recursive):
                    raise JSONPathError("invalid multiple recursive descent")
                self.pos += 2
                nodes.append(Recursive())
                if self.pos < len(text) and (text[self.pos].isalnum() or text[self.pos] == "_"):
                    nodes.append(self._field())
            elif char in " @$":
                self.pos += 1
            elif char == ".":
                self.pos += 1
                nodes.append(self._field())
            elif char == "[":
                nodes.extend(self._array())
            elif char in "\"'":
                nodes.append(self._quoted(char))
            elif char in "+-" or char.isdigit():
                nodes.append(self._number())
            elif char.isalnum() or char == "_":
                nodes.append(self._identifier())
            else:
                raise JSONPathError(f"unrecognized character in action: {char!r}")
        return tuple(nodes)

    def _word(self) -> str:
        start, text = self.pos, self.text
        while self.pos < len(text):
            if text[self.pos] == "\\" and self.pos + 1 < len(text):
                self.pos += 2
                continue
            if text[self.pos] in _TERMINATORS:
                break
            self.pos += 1
        return text[start:self.pos]

    def _field(self) -> Node:
        word = self._word()
        return Wildcard() if word == "*" else Field(word.replace("\\", ""))

    def _identifier(self) -> Node:
        word = self._word()
        if word in ("true", "false"):
            return Literal(word == "true")
        raise JSONPathError(f"unrecognized identifier {word} (range/end are not supported in a column)")

    def _number(self) -> Node:
        match = re.compile(r"[+-]?[\d.]*").match(self.text, self.pos)
        assert match is not None
        word = match.group(0)
        self.pos = match.end()
        try:
            return Literal(int(word))
        except ValueError:
            pass
        try:
            return Literal(float(word))
        except ValueError:
            raise JSONPathError(f"cannot parse number {word}") from None

    def _quoted(self, quote: str) -> Node:
        text, start = self.text, self.pos
        self.pos += 1
        while True:
            if self.pos >= len(text) or text[self.pos] == "\n":
                raise JSONPathError("unterminated quoted string")
            if text[self.pos] == quote and text[self.pos - 1] != "\\":
                break
            self.pos += 1
        self.pos += 1
        body = text[start + 1:self.pos - 1]
        try:
            value = json.loads('"' + body.replace('"', '\\"').replace("\\'", "'").replace('\\\\"', '\\"') + '"')
        except json.JSONDecodeError:
            raise JSONPathError(f"unquote string {text[start:self.pos]} error") from None
        return Literal(value)

    def _array(self) -> list[Node]:
        end = self.text.find("]", self.pos)
        newline = self.text.find("\n", self.pos)
        if end < 0 or 0 <= newline < end:
            raise JSONPathError("unterminated array")
        inner = self.text[self.pos + 1:end]
        self.pos = end + 1
        if inner == "*":
            inner = ":"
        parts = inner.split(",")
        if len(parts) > 1:
            return [Union_(tuple(_Parser(f"[{p.strip()}]").parse() for p in parts))]
        key = _DICT_KEY.match(inner)
        if key:
            return list(_Parser("." + key.group(1)).parse())
        match = _SLICE.match(inner)
        if not match:
            raise JSONPathError(f"invalid array index {inner}")
        start_text, end_text, cap_text = match.groups()
        start = int(start_text) if start_text not in ("", "-") else None
        if start_text == "-":
            raise JSONPathError("array index - is not a number")
        if end_text is None:  # [n]
            if start is None:
                raise JSONPathError(f"invalid array index {inner}")
            return [Slice(start, start + 1, None, end_derived=True)]
        return [Slice(start, _bound(end_text), _bound(cap_text))]

    def _filter(self) -> Node:
        text = self.text
        self.pos += 3
        start = self.pos
        opened = closed = False
        quote = ""
        while True:
            if self.pos >= len(text) or text[self.pos] == "\n":
                raise JSONPathError("unterminated filter")
            char = text[self.pos]
            self.pos += 1
            if char in "\"'":
                if not opened:
                    opened, quote = True, char
                elif char == quote and text[self.pos - 2] != "\\":
                    closed = True
            elif char == ")" and opened == closed:
                break
        if self.pos >= len(text) or text[self.pos] != "]":
            raise JSONPathError("unclosed array expect ]")
        self.pos += 1
        body = text[start:self.pos - 2]
        comparison = _COMPARISON.match(body)
        if comparison is None:
            return Filter(_Parser(body).parse(), "exists", ())
        left, operator, right = comparison.groups()
        if operator not in _OPERATORS:
            raise JSONPathError(f"unrecognized filter operator {operator}")
        return Filter(_Parser(left).parse(), operator, _Parser(right).parse())


def _bound(part: str | None) -> int | None:
    if part is None or part == ":":
        return None
    try:
        return int(part[1:])
    except ValueError:
        raise JSONPathError(f"array index {part[1:]} is not a number") from None


@dataclass(frozen=True)
class JSONPath:
    """One parsed JSONPath; ``find`` evaluates it."""

    expression: str
    nodes: tuple[Node, ...]

    def find(self, data: object, allow_missing_keys: bool = True) -> list[Any]:
        """Every value the path selects, in order (raises JSONPathError where client-go's evaluator fails)."""
        return _walk([data], self.nodes, allow_missing_keys)

    def first(self, data: object) -> tuple[bool, Any]:
        """``(found, value)``: the first value the path selects, as a printer column takes it; an evaluation error
        counts as nothing found."""
        try:
            values = self.find(data)
        except JSONPathError:
            return False, None
        return (True, values[0]) if values else (False, None)


def parse(expression: str) -> JSONPath:
    """Parse a printer column's path (``.status.conditions[-1].type``), or the same wrapped in ``{}``."""
    if len(expression) > MAX_EXPRESSION_LENGTH:
        raise JSONPathError(f"a JSONPath may be at most {MAX_EXPRESSION_LENGTH} characters")
    text = expression.strip()
    if text.startswith("{") and text.endswith("}"):
        text = text[1:-1]
    if "{" in text or "}" in text:
        raise JSONPathError(f"only one JSONPath action is supported: {expression}")
    return JSONPath(expression, _Parser(text).parse())


def _walk(values: list[Any], nodes: tuple[Node, ...], allow_missing: bool) -> list[Any]:
    for node in nodes:
        values = _step(values, node, allow_missing)
    return values


def _step(values: list[Any], node: Node, allow_missing: bool) -> list[Any]:
    if isinstance(node, Field):
        found = [v[node.name] for v in values if isinstance(v, Mapping) and node.name in v]
        if not found and values and not allow_missing:
            raise JSONPathError(f"{node.name} is not found")
        return found
    if isinstance(node, Slice):
        return [item for v in values if v is not None for item in _slice(v, node)]
    if isinstance(node, Wildcard):
        return [item for v in values for item in _children(v)]
    if isinstance(node, Recursive):
        return _recursive(values)
    if isinstance(node, Literal):
        return [node.value for _ in values]
    if isinstance(node, Union_):
        return [item for branch in node.branches for item in _walk(values, branch, allow_missing)]
    return _filter(values, node, allow_missing)


def _slice(value: object, node: Slice) -> list[Any]:
    if not isinstance(value, list):
        raise JSONPathError(f"{_go_type(value)} is not array or slice")
    length = len(value)
    start = 0 if node.start is None else node.start
    if start < 0:
        start += length
    end = length if node.end is None else node.end
    if end < 0 or (node.end_derived and end == 0):
        end += length
    if end != start:
        if start >= length or start < 0:
            raise JSONPathError(f"array index out of bounds: index {start}, length {length}")
        if end > length:
            raise JSONPathError(f"array index out of bounds: index {end - 1}, length {length}")
    if end < start or start < 0:
        raise JSONPathError(f"slice bounds out of range [{start}:{end}]")
    if node.cap is not None and not end <= node.cap <= length:  # Go's three-index slice: the third is a capacity
        raise JSONPathError(f"slice bounds out of range [:{end}:{node.cap}] with capacity {length}")
    return value[start:end]


def _children(value: object) -> list[Any]:
    if isinstance(value, Mapping):
        return list(value.values())
    if isinstance(value, list):
        return list(value)
    if isinstance(value, str):  # Go indexes a string's bytes
        return list(value.encode())
    return []


def _recursive(values: list[Any]) -> list[Any]:
    out: list[Any] = []
    for value in values:
        children = _children(value)
        if children:
            out.append(value)
            out.extend(_recursive(children))
    return out


def _filter(values: list[Any], node: Filter, allow_missing: bool) -> list[Any]:
    out: list[Any] = []
    for value in values:
        if not isinstance(value, list):
            raise JSONPathError(f"{format_value(value)} is not array or slice and cannot be filtered")
        for item in value:
            if node.operator == "exists":
                try:
                    if _walk([item], node.left, allow_missing):
                        out.append(item)
                except JSONPathError:
                    pass
                continue
            lefts = _walk([item], node.left, allow_missing)
            rights = _walk([item], node.right, allow_missing)
            if len(lefts) != 1 or len(rights) != 1:
                raise JSONPathError("can only compare one element at a time")
            if _compare(lefts[0], node.operator, rights[0]):
                out.append(item)
    return out


def _kind(value: object) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "string"
    return "other"


def _compare(left: Any, operator: str, right: Any) -> bool:
    """Go text/template's eq/ne/lt/le/gt/ge on JSON values: the same basic kind only (ints and floats apart)."""
    kind = _kind(left)
    if kind != _kind(right) or kind == "other":
        if operator in ("==", "!=") and kind == "other" and _kind(right) == "other":
            raise JSONPathError("uncomparable type")
        raise JSONPathError("incompatible types for comparison")
    if operator == "==":
        return bool(left == right)
    if operator == "!=":
        return bool(left != right)
    if kind == "bool":
        raise JSONPathError("invalid type for comparison")
    return bool({"<": left < right, ">": left > right, "<=": left <= right, ">=": left >= right}[operator])


def _go_type(value: object) -> str:
    return {"bool": "bool", "int": "int64", "float": "float64", "string": "string"}.get(
        _kind(value), "map[string]interface {}" if isinstance(value, Mapping) else "interface {}"
    )


def format_value(value: object) -> str:
    """``fmt.Fprint`` of a decoded JSON value: ``true``, ``3``, ``1e+06``, ``[a b]``, ``map[a:1 b:x]``."""
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _go_float(value)
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        return "map[" + " ".join(f"{k}:{format_value(value[k])}" for k in sorted(value)) + "]"
    if isinstance(value, list):
        return "[" + " ".join(format_value(v) for v in value) + "]"
    return str(value)


def _go_float(value: float) -> str:
    """strconv.FormatFloat(f, 'g', -1, 64): the shortest digits, exponent form below 1e-4 or from 1e6."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if value == 0:
        return "0"
    digits, exponent = _shortest_digits(value)
    decimal_exponent = exponent + len(digits)  # value = 0.<digits> * 10**decimal_exponent
    sign = "-" if value < 0 else ""
    if decimal_exponent - 1 < -4 or decimal_exponent - 1 >= 6:
        mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        exp = decimal_exponent - 1
        return f"{sign}{mantissa}e{'+' if exp >= 0 else '-'}{abs(exp):02d}"
    if decimal_exponent <= 0:
        return f"{sign}0.{'0' * -decimal_exponent}{digits}"
    if decimal_exponent >= len(digits):
        return f"{sign}{digits}{'0' * (decimal_exponent - len(digits))}"
    return f"{sign}{digits[:decimal_exponent]}.{digits[decimal_exponent:]}"


def _shortest_digits(value: float) -> tuple[str, int]:
    """The shortest round-tripping decimal digits of ``|value|`` and the power of ten of their last digit."""
    mantissa, _, exp = repr(abs(value)).partition("e")
    whole, _, fraction = mantissa.partition(".")
    digits = (whole + fraction).lstrip("0")
    exponent = (int(exp) if exp else 0) - len(fraction)
    stripped = digits.rstrip("0")
    exponent += len(digits) - len(stripped)
    return stripped or "0", exponent
