"""Port of client-go tools/cache store_test.go, index_test.go and thread_safe_store_test.go."""

from __future__ import annotations

import pytest
from informer_test_helpers import mk

from informers import (
    NAMESPACE_INDEX,
    DeletedFinalStateUnknown,
    Indexer,
    IndexFuncError,
    ObjectKeyError,
    Store,
    deletion_handling_meta_namespace_key_func,
    meta_namespace_index_func,
    meta_namespace_key_func,
    split_meta_namespace_key,
)


def name_key(obj):
    return obj["metadata"]["name"]


def test_keys():
    assert meta_namespace_key_func(mk("a", namespace="ns")) == "ns/a"
    assert meta_namespace_key_func(mk("node-1")) == "node-1"
    assert meta_namespace_key_func("explicit/key") == "explicit/key"
    with pytest.raises(ObjectKeyError, match="object has no meta"):
        meta_namespace_key_func({"spec": {}})
    with pytest.raises(KeyError):  # also a builtins.KeyError
        meta_namespace_key_func(None)
    assert deletion_handling_meta_namespace_key_func(DeletedFinalStateUnknown("ns/x", None)) == "ns/x"
    assert split_meta_namespace_key("ns/a") == ("ns", "a")
    assert split_meta_namespace_key("a") == ("", "a")
    with pytest.raises(ValueError, match="unexpected key format"):
        split_meta_namespace_key("a/b/c")
    tomb = DeletedFinalStateUnknown("k", {"x": 1})
    assert tomb.key == "k" and tomb.obj == {"x": 1}


def _do_test_store(store: Store):
    store.add(mk("foo", "bar"))
    assert store.get(mk("foo"))[0]["val"] == "bar"
    store.update(mk("foo", "baz"))
    assert store.get(mk("foo"))[0]["val"] == "baz"
    store.delete(mk("foo"))
    assert store.get(mk("foo")) == (None, False)
    store.delete(mk("foo"))  # deleting a missing key is fine

    store.add(mk("a", "b"))
    store.add(mk("c", "d"))
    store.add(mk("e", "e"))
    assert sorted(o["val"] for o in store.list()) == ["b", "d", "e"]
    assert sorted(store.list_keys()) == ["a", "c", "e"]

    store.replace([mk("foo", "foo"), mk("bar", "bar")], "0")
    assert sorted(o["val"] for o in store.list()) == ["bar", "foo"]
    assert store.get_by_key("bar") == (mk("bar", "bar"), True)
    store.replace([mk("x", 1), mk("x", 2)], "0")  # later duplicates win
    assert store.list() == [mk("x", 2)]
    assert store.resync() is None


def test_cache():
    _do_test_store(Store(name_key))


def test_indexer_as_store():
    _do_test_store(Indexer(name_key, {"by_val": lambda o: [str(o["val"])]}))


def test_key_error():
    store = Store(name_key)
    with pytest.raises(ObjectKeyError, match="couldn't create key"):
        store.add({"no": "meta"})


def test_upsert_reports_previous():
    store = Store(name_key)
    assert store.upsert(mk("a", 1)) == (None, False)
    assert store.upsert(mk("a", 2)) == (mk("a", 1), True)


def test_index():
    def by_val(o):
        return [o["val"]]

    index = Indexer(name_key, {"by_val": by_val})
    index.add(mk("a", "x"))
    index.add(mk("b", "x"))
    index.add(mk("c", "y"))
    assert sorted(o["metadata"]["name"] for o in index.by_index("by_val", "x")) == ["a", "b"]
    assert index.index_keys("by_val", "x") == ["a", "b"]
    assert sorted(o["metadata"]["name"] for o in index.index("by_val", mk("z", "y"))) == ["c"]
    assert sorted(index.list_index_func_values("by_val")) == ["x", "y"]
    assert index.list_index_func_values("missing") == []
    with pytest.raises(ValueError, match="does not exist"):
        index.by_index("missing", "x")
    with pytest.raises(ValueError, match="does not exist"):
        index.index_keys("missing", "x")
    assert index.by_index("by_val", "none") == []


def test_get_index_func_values():
    def test_users(o):
        return o["users"]

    index = Indexer(name_key, {"testmodes": test_users})
    index.add({"metadata": {"name": "one"}, "users": ["ernie", "bert"]})
    index.add({"metadata": {"name": "two"}, "users": ["bert", "oscar"]})
    index.add({"metadata": {"name": "tre"}, "users": ["ernie", "elmo"]})
    assert sorted(index.list_index_func_values("testmodes")) == ["bert", "elmo", "ernie", "oscar"]


def test_multi_index_keys():
    def users(o):
        return o["users"]

    index = Indexer(name_key, {"byUser": users})
    one = {"metadata": {"name": "one"}, "users": ["ernie", "bert"]}
    two = {"metadata": {"name": "two"}, "users": ["bert", "oscar"]}
    tre = {"metadata": {"name": "tre"}, "users": ["ernie", "elmo"]}
    for o in (one, two, tre):
        index.add(o)
    expected = {"ernie": ["one", "tre"], "bert": ["one", "two"], "elmo": ["tre"], "oscar": ["two"]}
    for k, v in expected.items():
        assert index.index_keys("byUser", k) == v
        assert sorted(o["metadata"]["name"] for o in index.by_index("byUser", k)) == v
    # index() with several values returns the de-duplicated union
    assert sorted(o["metadata"]["name"] for o in index.index("byUser", {"users": ["ernie", "bert"]})) == ["one", "tre", "two"]

    index.delete(one)
    assert index.index_keys("byUser", "ernie") == ["tre"]
    assert index.index_keys("byUser", "bert") == ["two"]

    index.update({"metadata": {"name": "two"}, "users": ["oscar"]})
    assert index.index_keys("byUser", "bert") == []
    assert "bert" not in index.list_index_func_values("byUser")
    index.update({"metadata": {"name": "two"}, "users": ["elmo", "bert"]})
    assert index.index_keys("byUser", "elmo") == ["tre", "two"]
    assert index.index_keys("byUser", "oscar") == []


def test_delete_removes_empty_sets_from_index():
    index = Indexer(name_key, {"by_val": lambda o: [o["val"]]})
    index.add(mk("a", "v1"))
    index.delete(mk("a", "v1"))
    assert index.list_index_func_values("by_val") == []  # no leak of empty sets (kubernetes#84959)
    assert index._store._indices["by_val"] == {}


def test_add_keeps_non_empty_set_post_delete_from_index():
    index = Indexer(name_key, {"by_val": lambda o: [o["val"]]})
    index.add(mk("a", "v"))
    index.add(mk("b", "v"))
    index.delete(mk("a", "v"))
    assert index.index_keys("by_val", "v") == ["b"]


def test_indexing_functions_with_multiple_values():
    index = Indexer(name_key, {"v": lambda o: o["val"]})
    index.add(mk("a", ["x", "y"]))
    index.update(mk("a", ["y", "z"]))
    assert index.index_keys("v", "x") == []
    assert index.index_keys("v", "y") == ["a"]
    assert index.index_keys("v", "z") == ["a"]
    assert sorted(index.list_index_func_values("v")) == ["y", "z"]


def test_add_indexers_on_populated_store_indexes_existing_items():
    index = Indexer(name_key, {"v": lambda o: [o["val"]]})
    index.add(mk("a", "1"))
    index.add(mk("b", "2"))
    index.add_indexers({"upper": lambda o: [o["val"] + "!"]})
    assert index.index_keys("upper", "1!") == ["a"]
    assert set(index.get_indexers()) == {"v", "upper"}
    index.add(mk("c", "1"))
    assert index.index_keys("upper", "1!") == ["a", "c"]
    with pytest.raises(ValueError, match="indexer conflict"):
        index.add_indexers({"v": lambda o: []})


def test_index_func_failure_names_key_and_index_and_keeps_store():
    def picky(o):
        if o["val"] == "bad":
            raise RuntimeError("nope")
        return [o["val"]]

    index = Indexer(name_key, {"picky": picky})
    index.add(mk("a", "good"))
    with pytest.raises(IndexFuncError, match=r"key 'a' on index 'picky'"):
        index.update(mk("a", "bad"))
    assert index.get_by_key("a") == (mk("a", "good"), True)
    assert index.index_keys("picky", "good") == ["a"]
    with pytest.raises(IndexFuncError):
        index.replace([mk("z", "bad")], "0")
    assert index.get_by_key("a") == (mk("a", "good"), True)


def test_namespace_index():
    index = Indexer(meta_namespace_key_func, {NAMESPACE_INDEX: meta_namespace_index_func})
    index.add(mk("a", namespace="ns1"))
    index.add(mk("b", namespace="ns2"))
    index.add(mk("node"))
    assert index.index_keys(NAMESPACE_INDEX, "ns1") == ["ns1/a"]
    assert index.index_keys(NAMESPACE_INDEX, "") == ["node"]
    with pytest.raises(IndexFuncError):
        index.add("raw-string-key-without-meta")


def _values(o):
    """Index function answering whatever the test object carries in ``val`` (None, a set, a tuple, ...)."""
    return o["val"]


@pytest.mark.parametrize("answer", [None, set(), (), []])
def test_index_func_answering_none_or_empty_means_no_values_everywhere(answer):
    index = Indexer(name_key, {"v": _values})
    index.add(mk("a", answer))
    index.update(mk("a", answer))
    index.update(mk("a", ["x"]))  # None -> values and back
    assert index.index_keys("v", "x") == ["a"]
    index.update(mk("a", answer))
    assert index.list_index_func_values("v") == []
    index.add(mk("b", ["y"]))
    index.delete(mk("b", answer))  # the stored object is what counts
    index.delete(mk("a", answer))
    assert index.list_index_func_values("v") == [] and index.list_keys() == []
    index.replace([mk("c", answer), mk("d", ["z"])], "1")
    assert index.list_index_func_values("v") == ["z"]
    index.add_indexers({"w": _values})
    assert index.list_index_func_values("w") == ["z"]
    assert index.index("v", mk("q", answer)) == []


def test_index_func_answering_a_set_or_generator_is_listed():
    index = Indexer(name_key, {"v": _values})
    index.add(mk("a", {"x", "y"}))
    index.update(mk("a", {"y"}))
    assert index.index_keys("v", "x") == [] and index.index_keys("v", "y") == ["a"]
    index.add(mk("b", (v for v in ["y", "z"])))
    assert index.index_keys("v", "y") == ["a", "b"] and index.index_keys("v", "z") == ["b"]
    index.replace([mk("c", {"w"})], "1")
    assert index.list_index_func_values("v") == ["w"]
    assert [o["metadata"]["name"] for o in index.index("v", mk("q", {"w"}))] == ["c"]


@pytest.mark.parametrize("answer", ["x", 42])
def test_index_func_answering_a_str_or_non_iterable_is_an_error_naming_key_and_index(answer):
    index = Indexer(name_key, {"v": _values})
    index.add(mk("a", ["ok"]))
    for op in (index.add, index.update):
        with pytest.raises(IndexFuncError, match=r"key 'b' on index 'v'"):
            op(mk("b", answer))
    with pytest.raises(IndexFuncError, match=r"key 'a' on index 'v'"):
        index.update(mk("a", answer))
    with pytest.raises(IndexFuncError, match=r"key 'c' on index 'v'"):
        index.replace([mk("c", answer)], "1")
    assert index.list_keys() == ["a"] and index.index_keys("v", "ok") == ["a"]  # nothing changed
    index2 = Indexer(name_key)
    index2.add(mk("d", answer))
    with pytest.raises(IndexFuncError, match=r"key 'd' on index 'w'"):
        index2.add_indexers({"w": _values})
    assert index2.get_indexers() == {}


def test_indexer_replace_removes_stale_index_entries():
    index = Indexer(meta_namespace_key_func, {NAMESPACE_INDEX: meta_namespace_index_func, "v": lambda o: [o["val"]]})
    index.add(mk("a", "old", namespace="ns1"))
    index.add(mk("b", "old", namespace="ns2"))
    index.replace([mk("b", "new", namespace="ns2"), mk("c", "new", namespace="ns3")], "5")
    assert index.index_keys("v", "old") == [] and index.index_keys("v", "new") == ["ns2/b", "ns3/c"]
    assert sorted(index.list_index_func_values("v")) == ["new"]
    assert sorted(index.list_index_func_values(NAMESPACE_INDEX)) == ["ns2", "ns3"]
    assert index.by_index(NAMESPACE_INDEX, "ns1") == []
    index.replace([], "6")
    assert index.list_index_func_values("v") == [] and index.list_index_func_values(NAMESPACE_INDEX) == []


def test_an_index_added_later_follows_replacements_and_the_namespace_index_stays_right():
    def by_app(obj):
        return [obj["metadata"].get("labels", {}).get("app", "")]

    idx = Indexer(deletion_handling_meta_namespace_key_func, {NAMESPACE_INDEX: meta_namespace_index_func})
    a1 = mk("a", namespace="ns1")
    a1["metadata"]["labels"] = {"app": "one"}
    idx.add(a1)
    idx.add_indexers({"app": by_app})
    assert idx.index_keys("app", "one") == ["ns1/a"]
    a2 = mk("a", namespace="ns1")
    a2["metadata"]["labels"] = {"app": "two"}
    idx.update(a2)  # a replacement under the same key: the namespace index is kept, the new index recomputed
    assert idx.index_keys("app", "one") == [] and idx.index_keys("app", "two") == ["ns1/a"]
    assert idx.index_keys(NAMESPACE_INDEX, "ns1") == ["ns1/a"]
    idx.delete(a2)
    assert idx.list_index_func_values("app") == [] and idx.list_index_func_values(NAMESPACE_INDEX) == []
