"""A label selector never raises on a stored object, whatever its labels hold (a non-string value, a list): such a
value equals no selector value and is no number, as nothing in Go could hold it."""

from __future__ import annotations

import pytest

from apis import meta


@pytest.mark.parametrize(
    "selector, labels, expected",
    [
        ("k>3", {"k": 5}, False),
        ("k<3", {"k": 1}, False),
        ("k=5", {"k": 5}, False),
        ("k in (5)", {"k": 5}, False),
        ("k!=5", {"k": 5}, True),
        ("k notin (5)", {"k": 5}, True),
        ("k", {"k": None}, True),
        ("!k", {"k": [1]}, False),
        ("k>3", {"k": "5"}, True),
        ("k=a", ["k"], False),
        ("!k", "k=a", True),
    ],
)
def test_selectors_match_malformed_labels_without_raising(selector: str, labels: object, expected: bool) -> None:
    assert meta.parse_selector(selector).matches(labels) is expected  # type: ignore[arg-type]
