"""Value checks and Go-style rendering for ``apis.openapi``: the string formats the API server validates, and values
printed the way Go's fmt, strconv and encoding/json print them, so that 422 messages read like kube-apiserver's."""

from __future__ import annotations

import base64
import binascii
import datetime
import decimal
import functools
import ipaddress
import json
import math
import re
from collections.abc import Mapping
from typing import Any

__all__ = ["FORMATS", "bad_value", "go_float", "go_json", "go_quote", "json_equal"]


_UUID = {
    "uuid": r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$",
    "uuid3": r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$",
    "uuid4": r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$",
    "uuid5": r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$",
}
_TIME_OF_DAY = re.compile(r"^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$")
_BASE64 = re.compile(r"^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})$")


def _is_date(text: str) -> bool:
    if not re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", text):
        return False
    try:
        datetime.date.fromisoformat(text)
    except ValueError:
        return False
    return True


def _is_date_time(text: str) -> bool:
    """strfmt.IsDateTime: ``<date>T<hh:mm:ss[.frac](Z|±hh:mm)>``, case-insensitive."""
    parts = text.lower().split("t")
    if len(text) < 4 or len(parts) < 2 or not _is_date(parts[0]):
        return False
    m = _TIME_OF_DAY.match(parts[1])
    return m is not None and m.group(1) <= "23" and m.group(2) <= "59" and m.group(3) <= "59"


def _is_ip(text: str, version: int) -> bool:
    try:
        return ipaddress.ip_address(text).version == version and "%" not in text
    except ValueError:
        return False


def _is_cidr(text: str) -> bool:
    try:
        ipaddress.ip_network(text, strict=False)
    except ValueError:
        return False
    return "/" in text


def _is_base64(text: str) -> bool:
    if not _BASE64.match(text):
        return False
    try:
        base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


# The formats the API server validates that this module implements, by go-openapi's normalised name (no dashes);
# the others it supports (email, uri, hostname, isbn*, creditcard, rgbcolor, duration) are accepted unchecked.
FORMATS: dict[str, Any] = {
    "datetime": _is_date_time,
    "date": _is_date,
    "ipv4": lambda t: _is_ip(t, 4),
    "ipv6": lambda t: ":" in t and _is_ip(t, 6),
    "cidr": _is_cidr,
    "byte": _is_base64,
    "bsonobjectid": lambda t: re.fullmatch(r"[0-9a-fA-F]{24}", t) is not None,
    "mac": lambda t: re.fullmatch(r"(?i)[0-9a-f]{2}([:-])[0-9a-f]{2}(\1[0-9a-f]{2}){4}((\1[0-9a-f]{2}){2})?", t) is not None,
    "hexcolor": lambda t: re.fullmatch(r"#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})", t) is not None,
    "ssn": lambda t: re.fullmatch(r"\d{3}[- ]?\d{2}[- ]?\d{4}", t) is not None,
    **{name: functools.partial(lambda rx, t: re.match(rx, t) is not None, rx) for name, rx in _UUID.items()},
}



def bad_value(value: object) -> str:
    """A bad value as field.Error.ErrorBody prints it: %v for numbers and booleans, %q for strings, else JSON."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return go_float(value)
    if isinstance(value, str):
        return go_quote(value)
    return go_json(value)


_QUOTE_ESCAPES = {'"': '\\"', "\\": "\\\\", "\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v"}


def go_quote(text: str) -> str:
    """strconv.Quote."""
    out = []
    for ch in text:
        if ch in _QUOTE_ESCAPES:
            out.append(_QUOTE_ESCAPES[ch])
        elif ch.isprintable():
            out.append(ch)
        elif ord(ch) < 0x80:
            out.append(f"\\x{ord(ch):02x}")
        elif ord(ch) < 0x10000:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(f"\\U{ord(ch):08x}")
    return '"' + "".join(out) + '"'


def _shortest_digits(value: float) -> tuple[str, int]:
    """The shortest round-tripping decimal digits of ``abs(value)`` and the decimal point's position in them."""
    exact = decimal.Decimal(repr(abs(value))).as_tuple()
    digits = "".join(map(str, exact.digits))
    point = len(digits) + int(exact.exponent)
    stripped = digits.rstrip("0") or "0"
    return stripped, point


def _format_float(value: float, exponent_form: bool, digits: str, point: int) -> str:
    sign = "-" if value < 0 else ""
    if exponent_form:
        exp = point - 1
        mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f"{sign}{mantissa}e{'-' if exp < 0 else '+'}{abs(exp):02d}"
    if point <= 0:
        return f"{sign}0.{'0' * -point}{digits}"
    if point >= len(digits):
        return sign + digits + "0" * (point - len(digits))
    return f"{sign}{digits[:point]}.{digits[point:]}"


def go_float(value: float) -> str:
    """fmt's %v of a float64 (strconv 'g', shortest): 1e+06, 0.5, 1.23456785e+07, 1e-05."""
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if value == 0:
        return "0"
    digits, point = _shortest_digits(value)
    return _format_float(value, not -4 <= point - 1 < 6, digits, point)


def _go_json_float(value: float) -> str:
    """encoding/json's float64: plain unless below 1e-6 or from 1e21 on, exponent without padding."""
    if value == 0:
        return "0"
    digits, point = _shortest_digits(value)
    text = _format_float(value, abs(value) < 1e-6 or abs(value) >= 1e21, digits, point)
    return re.sub(r"e([+-])0(\d)$", r"e\1\2", text)


def go_json(value: object) -> str:
    """encoding/json.Marshal: compact, map keys sorted, <>& and U+2028/9 escaped."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _go_json_float(value)
    if isinstance(value, str):
        text = json.dumps(value, ensure_ascii=False)
        for raw, escaped in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
            text = text.replace(raw, escaped)
        return text
    if isinstance(value, Mapping):
        return "{" + ",".join(f"{go_json(str(k))}:{go_json(value[k])}" for k in sorted(value)) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(go_json(v) for v in value) + "]"
    return go_json(str(value))


def json_equal(a: object, b: object) -> bool:
    """Deep equality of JSON values where booleans are not numbers and 1 == 1.0."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, (Mapping, list)) or isinstance(b, (Mapping, list)):
        return False
    return bool(a == b)
