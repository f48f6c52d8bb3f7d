"""Names and label values derived from object names, always valid for the API server.

* ``label_value(value)``: ``value`` when it is a valid label value (≤ 63 characters, alphanumerics, ``-_.`` inside);
  otherwise a truncated prefix plus ``-`` and 10 hex characters of its SHA-256, so that a long name (object names may
  have up to 253 characters) still gives a distinct, valid label value instead of a 422 on every sync.
* ``convert_k8s_valid_name(name)``: Sedna's ``ConvertK8SValidName`` (lowercase, other characters to one ``-``, at most
  63 characters, a trailing ``-`` becomes ``z``), used for volume names.
* ``dns1123_label_error`` / ``dns1035_label_error``: the reason a name is not a valid DNS label, or ``""``.
* ``rand_string(n)``: apimachinery's ``rand.String`` (its consonant-and-digit alphabet).
"""

from __future__ import annotations

import hashlib
import random
import re

__all__ = [
    "LABEL_VALUE_MAX",
    "convert_k8s_valid_name",
    "dns1035_label_error",
    "dns1123_label_error",
    "is_label_value",
    "label_value",
    "rand_string",
]

LABEL_VALUE_MAX = 63
_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
_DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_DNS1035_LABEL = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
_HASH_CHARS = 10
_RAND_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
_rng = random.SystemRandom()


def is_label_value(value: str) -> bool:
    return len(value) <= LABEL_VALUE_MAX and bool(_LABEL_VALUE.match(value))


def label_value(value: str) -> str:
    """``value`` itself when valid, else ``<prefix>-<sha256[:10]>`` (≤ 63 characters, valid, stable)."""
    if is_label_value(value):
        return value
    digest = hashlib.sha256(value.encode()).hexdigest()[:_HASH_CHARS]
    prefix = re.sub(r"[^-A-Za-z0-9_.]", "-", value)[: LABEL_VALUE_MAX - _HASH_CHARS - 1]
    prefix = re.sub(r"^[^A-Za-z0-9]+|[^A-Za-z0-9]+$", "", prefix)
    return f"{prefix}-{digest}" if prefix else digest


def convert_k8s_valid_name(name: str) -> str:
    """Sedna's ``ConvertK8SValidName``, byte for byte."""
    fixed = bytearray()
    for c in name.lower().encode():
        if 0x61 <= c <= 0x7A or 0x30 <= c <= 0x39 or c == 0x2D:  # a-z, 0-9, '-'
            fixed.append(c)
        elif fixed and fixed[-1] != 0x2D:
            fixed.append(0x2D)
    del fixed[63:]
    if fixed and fixed[-1] == 0x2D:
        fixed[-1] = 0x7A  # 'z'
    return fixed.decode()


def _label_error(name: str, pattern: re.Pattern[str], what: str) -> str:
    if len(name) > LABEL_VALUE_MAX:
        return f"{name!r} has {len(name)} characters; a {what} has at most {LABEL_VALUE_MAX}"
    if not pattern.match(name):
        return f"{name!r} is not a valid {what}"
    return ""


def dns1123_label_error(name: str) -> str:
    """Why ``name`` is not a DNS-1123 label (lowercase alphanumerics and '-', ≤ 63), or ``""``."""
    return _label_error(name, _DNS1123_LABEL, "DNS-1123 label (lowercase letters, digits and '-')")


def dns1035_label_error(name: str) -> str:
    """Why ``name`` is not a DNS-1035 label (as Service names must be), or ``""``."""
    return _label_error(name, _DNS1035_LABEL, "DNS-1035 label (a lowercase letter, then letters, digits and '-')")


def rand_string(n: int) -> str:
    """``n`` random characters from apimachinery's ``rand.String`` alphabet (no vowels, no confusable digits)."""
    return "".join(_rng.choice(_RAND_ALPHABET) for _ in range(n))
