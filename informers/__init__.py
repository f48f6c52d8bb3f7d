"""A port of client-go's tools/cache: keys, Store/Indexer, DeltaFIFO, ListWatch, Reflector, SharedIndexInformer,
listers, SharedInformerFactory and cache-sync helpers. Objects are plain dicts, shared and read-only."""

from apis.watch import ListOptions, WatchEvent
from workqueue.clock import Clock, FakeClock, RealClock

from .backoff import Backoff
from .controller import Config, Controller, process_deltas
from .delta_fifo import (
    ADDED,
    DELETED,
    REPLACED,
    SYNC,
    UPDATED,
    Delta,
    DeltaFIFO,
    Deltas,
    DeltaType,
    FIFOClosedError,
    RequeueError,
)
from .factory import GenericInformer, SharedInformerFactory
from .handlers import (
    FilteringResourceEventHandler,
    ResourceEventHandler,
    ResourceEventHandlerDetailedFuncs,
    ResourceEventHandlerFuncs,
)
from .index import NAMESPACE_INDEX, Indexer, Indexers, IndexFunc, IndexFuncError, meta_namespace_index_func
from .keys import (
    DeletedFinalStateUnknown,
    ObjectKeyError,
    deletion_handling_meta_namespace_key_func,
    meta_namespace_key_func,
    split_meta_namespace_key,
)
from .listers import Lister, NamespaceLister, lister_for
from .listwatch import ListerWatcher, ListWatch
from .pager import ListPager
from .processor import ProcessorListener
from .reflector import Reflector, VeryShortWatchError, default_watch_error_handler
from .shared_informer import InformerStartedError, InformerStoppedError, SharedIndexInformer, SharedInformer
from .store import Store
from .synced import wait_for_cache_sync, wait_for_named_cache_sync

__all__ = [
    "ADDED",
    "DELETED",
    "NAMESPACE_INDEX",
    "REPLACED",
    "SYNC",
    "UPDATED",
    "Backoff",
    "Clock",
    "Config",
    "Controller",
    "DeletedFinalStateUnknown",
    "Delta",
    "DeltaFIFO",
    "DeltaType",
    "Deltas",
    "FIFOClosedError",
    "FakeClock",
    "FilteringResourceEventHandler",
    "GenericInformer",
    "IndexFunc",
    "IndexFuncError",
    "Indexer",
    "Indexers",
    "InformerStartedError",
    "InformerStoppedError",
    "ListOptions",
    "ListPager",
    "ListWatch",
    "ListerWatcher",
    "Lister",
    "NamespaceLister",
    "ObjectKeyError",
    "ProcessorListener",
    "RealClock",
    "Reflector",
    "RequeueError",
    "ResourceEventHandler",
    "ResourceEventHandlerDetailedFuncs",
    "ResourceEventHandlerFuncs",
    "SharedIndexInformer",
    "SharedInformer",
    "SharedInformerFactory",
    "Store",
    "VeryShortWatchError",
    "WatchEvent",
    "default_watch_error_handler",
    "deletion_handling_meta_namespace_key_func",
    "lister_for",
    "meta_namespace_index_func",
    "meta_namespace_key_func",
    "process_deltas",
    "split_meta_namespace_key",
    "wait_for_cache_sync",
    "wait_for_named_cache_sync",
]
