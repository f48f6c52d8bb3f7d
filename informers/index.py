"""``Indexer``: a ``Store`` with secondary indices (client-go tools/cache ``Indexer``, ``NewIndexer``)."""

from __future__ import annotations

from .keys import KeyFunc, Obj, deletion_handling_meta_namespace_key_func, meta_namespace_index_func
from .store import Store
from .thread_safe_store import Indexers, IndexFunc, IndexFuncError

__all__ = ["Indexer", "IndexFunc", "IndexFuncError", "Indexers", "NAMESPACE_INDEX", "meta_namespace_index_func"]

NAMESPACE_INDEX = "namespace"


class Indexer(Store):
    """A store that also maintains named indices: index name → indexed value → keys.

    Index functions run on every add/update/delete; a failing one raises ``IndexFuncError`` naming the key and
    the index, and the store is left unchanged.
    """

    def __init__(self, key_func: KeyFunc = deletion_handling_meta_namespace_key_func, indexers: Indexers | None = None) -> None:
        super().__init__(key_func, indexers)

    def index(self, index_name: str, obj: Obj) -> list[Obj]:
        """Objects whose values on ``index_name`` intersect those of ``obj``."""
        return self._store.index(index_name, obj)

    def index_keys(self, index_name: str, indexed_value: str) -> list[str]:
        """Sorted keys of the objects indexed under ``indexed_value``."""
        return self._store.index_keys(index_name, indexed_value)

    def by_index(self, index_name: str, indexed_value: str) -> list[Obj]:
        return self._store.by_index(index_name, indexed_value)

    def list_index_func_values(self, index_name: str) -> list[str]:
        """Every value currently indexed under ``index_name`` (empty for an unknown index)."""
        return self._store.list_index_func_values(index_name)

    def get_indexers(self) -> dict[str, IndexFunc]:
        return self._store.get_indexers()

    def add_indexers(self, indexers: Indexers) -> None:
        """Add index functions; objects already stored are indexed at once. Name conflicts raise ``ValueError``."""
        self._store.add_indexers(indexers)
