"""Decoded documents are bounded while they are decoded: YAML alias bombs, deep nesting and non-JSON values are
refused before anything is expanded (``apis.yamlutil``, ``apis.limits``)."""

from __future__ import annotations

import pytest
import yaml
from testkit import billion_laughs, nested_yaml

from apis import yamlutil
from apis.limits import MAX_DEPTH, DocumentLimitError, check_document


@pytest.mark.parametrize("levels", [5, 9])
def test_billion_laughs_is_refused_while_composing(levels: int) -> None:
    text = billion_laughs(levels)
    assert len(text) < 600
    with pytest.raises(yamlutil.YAMLLimitError, match="excessive aliasing"):
        yamlutil.load(text)


def test_merge_key_bomb_is_refused() -> None:
    lines = ["a0: &a0 {k: v}"] + [
        f"a{i}: &a{i} {{<<: [" + ",".join([f"*a{i - 1}"] * 9) + f"], k{i}: v}}" for i in range(1, 9)
    ]
    with pytest.raises(yamlutil.YAMLLimitError):
        yamlutil.load("\n".join(lines))


def test_expansion_size_is_bounded_even_when_aliases_are_a_minority() -> None:
    big = "x" * 100_000
    plain = "\n".join(f"p{i}: {i}" for i in range(2000))  # enough plain nodes to pass the alias ratio
    text = f"s: &s {big}\nrefs: [" + ",".join(["*s"] * 40) + "]\n" + plain
    with pytest.raises(yamlutil.YAMLLimitError, match="expands to more than"):
        yamlutil.load(text)


def test_a_few_aliases_are_fine() -> None:
    doc = yamlutil.load("base: &b {image: busybox}\nc1: *b\nc2: {<<: *b, name: two}\n")
    assert doc == {"base": {"image": "busybox"}, "c1": {"image": "busybox"}, "c2": {"image": "busybox", "name": "two"}}


def test_an_alias_to_its_own_container_is_refused() -> None:
    for text in ("a: &a [*a]", "a: &a {b: {c: *a}}"):
        with pytest.raises(yamlutil.YAMLLimitError, match="contains itself"):
            yamlutil.load(text)


def test_deep_nesting_is_refused_without_recursing() -> None:
    assert yamlutil.load(nested_yaml(MAX_DEPTH)) is not None
    for depth in (MAX_DEPTH + 1, 5000):
        with pytest.raises(yamlutil.YAMLLimitError, match="nests deeper"):
            yamlutil.load(nested_yaml(depth))


def test_depth_counts_expanded_aliases() -> None:
    half = MAX_DEPTH // 2 + 1
    text = f"a: &a {nested_yaml(half)}\nb: [{'[' * half}*a{']' * half}]\n"
    with pytest.raises(yamlutil.YAMLLimitError, match="aliases expanded"):
        yamlutil.load(text)


def test_every_document_of_a_stream_is_bounded() -> None:
    with pytest.raises(yaml.YAMLError):
        yamlutil.load_all("a: 1\n---\n" + billion_laughs(9))


def test_non_string_keys_become_strings_as_sigs_yaml_converts_them() -> None:
    assert yamlutil.load("{1: a, true: b, null: c, 1.5: d}") == {"1": "a", "true": "b", "null": "c", "1.5": "d"}


def test_check_document_accepts_json_values() -> None:
    check_document({"a": [1, -2, 2**64 - 1, 1.5, True, None, "s", {"b": []}]})


@pytest.mark.parametrize(
    "value, why",
    [
        ({"a": 2**64}, "64-bit"),
        ({"a": -(2**63) - 1}, "64-bit"),
        ({"a": float("inf")}, "not finite"),
        ({"a": float("nan")}, "not finite"),
        ({1: "a"}, "keys must be strings"),
        ({"a": b"bytes"}, "unsupported value"),
        ({"a": {1, 2}}, "unsupported value"),
    ],
)
def test_check_document_refuses_what_json_cannot_carry(value: object, why: str) -> None:
    with pytest.raises(DocumentLimitError, match=why):
        check_document(value)


def test_check_document_depth_is_iterative() -> None:
    value: list = []
    for _ in range(50_000):  # far beyond Python's recursion limit
        value = [value]
    with pytest.raises(DocumentLimitError, match="nests deeper"):
        check_document(value)
    ok: list = []
    for _ in range(MAX_DEPTH - 1):
        ok = [ok]
    check_document(ok)


@pytest.mark.parametrize("value", ["text", 5, None, True, 1.5, [], {}])
def test_check_document_accepts_any_json_root(value: object) -> None:
    check_document(value)
