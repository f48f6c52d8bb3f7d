"""``Kind``: a Sedna kind as sedna-gm runs it — what it watches and its rules, declared in the kind's own module.

A kind's rules are plain functions over a ``KindContext`` (``context.py``): ``sync(ctx, key, job)`` reconciles one
cached job and returns a ``reconcile.Result`` (``None``: done); the optional hooks send jobs to the edge, apply the
edge's reports and refine self-healing. ``JobController`` (``jobcontroller.py``) runs a ``Kind``: the informers, the
handlers, the queue and its workers. A kind never subclasses it and never sees its queue or informers.

A new kind is one module that ends with ``KIND = Kind(...)`` plus its line in ``controllers/registry.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Generic, TypeVar

from apis.meta import Obj
from apis.resources import GroupVersionResource
from reconcile import Result

from .edge import UpstreamMessage

if TYPE_CHECKING:
    from .context import KindContext

__all__ = ["Kind", "Refs"]

S = TypeVar("S")

Refs = Callable[[Obj], Iterable[str]]
"""The names (in the job's namespace) of the objects of one referenced resource a job names."""


def _no_state(ctx: KindContext[None]) -> None:
    return None


@dataclass(frozen=True, eq=False)
class Kind(Generic[S]):
    """What sedna-gm needs to run a kind. ``S`` is the type of the kind's own long-lived state (``ctx.state``, built
    once by ``state(ctx)``; ``None`` for most kinds).

    * ``name``: the registry and config name (``Reid``); ``resource``: the job's resource (informer, lister, status).
    * ``sync(ctx, key, job)``: reconcile the cached ``job`` (shared: never modified) of ``key``. A job that is gone
      never reaches it: its per-job state is dropped and its owned objects are garbage-collected. An exception
      retries the key with rate limiting; ``reconcile.Result`` plans the next sync.
    * ``owns``: the resources whose objects the kind creates (watched, indexed by controller UID; their events wake
      their job); ``recreates``: those of them created again when deleted from under a live job.
    * ``references``: resource → the names a job references (a Model, a Dataset); their events wake the job;
      ``ctx.lister(resource)`` reads them. ``checks_nodes``: ``ctx.nodes`` checks the nodes a job names.
    * ``to_edge(ctx, operation, job, old)``: Sedna's ``syncToEdge``, called on add (``insert``), change
      (``update``, ``old`` set) and delete (``delete``); ``from_edge(ctx, message)``: Sedna's upstream handler.
    * ``should_recreate(ctx, resource, job, obj)``: whether ``obj``, deleted from under ``job``, comes back (default
      yes); ``recreate(ctx, resource, obj)`` replaces the whole delete-handler recreation (it may call
      ``ctx.recreate_deleted``); ``job_of(ctx, obj)`` maps an owned object to its job when its controller
      reference does not (ElasticDL's worker pods are owned by their master pod); ``on_deleted(ctx, resource, obj)``
      sees an owned object's deletion before its job is woken (to remember what the cache no longer shows, e.g.
      ElasticDL's finished master).
    * ``replaces_workers_on_new_generation``: a spec change replaces the workers on purpose, so their deletions
      then are not recreations (the job's key goes into ``prevent_recreation`` until its next sync).
    * ``ignores_own_status_writes``: the update event that only echoes this controller's own status write (its
      resourceVersion is the one the write returned) does not sync the job again — for a kind whose sync never
      needs a second pass to act on what it wrote (it returns a ``Result`` when it does). The edge still gets the
      update.
    * ``owned_update_matters(resource, old, cur)``: whether an update of an owned object changes anything the sync
      reads (controller-runtime's update predicate); False leaves the job asleep. Default: every update with a new
      resourceVersion matters (Deployments: ``deployment_update_matters``, for every kind).
    """

    name: str
    resource: GroupVersionResource
    sync: Callable[[KindContext[S], str, Obj], Result | None]
    state: Callable[[KindContext[S]], S] = _no_state  # type: ignore[assignment]
    owns: tuple[GroupVersionResource, ...] = ()
    recreates: tuple[GroupVersionResource, ...] = ()
    references: Mapping[GroupVersionResource, Refs] = field(default_factory=dict)
    checks_nodes: bool = False
    to_edge: Callable[[KindContext[S], str, Obj, Obj | None], None] | None = None
    from_edge: Callable[[KindContext[S], UpstreamMessage], None] | None = None
    should_recreate: Callable[[KindContext[S], GroupVersionResource, Obj, Obj], bool] | None = None
    recreate: Callable[[KindContext[S], GroupVersionResource, Obj], bool] | None = None
    job_of: Callable[[KindContext[S], Obj], Obj | None] | None = None
    on_deleted: Callable[[KindContext[S], GroupVersionResource, Obj], None] | None = None
    replaces_workers_on_new_generation: bool = False
    ignores_own_status_writes: bool = False
    owned_update_matters: Callable[[GroupVersionResource, Obj, Obj], bool] | None = None

    def __post_init__(self) -> None:
        unknown = [str(g) for g in self.recreates if g not in self.owns]
        if unknown:
            raise ValueError(f"{self.name}: recreates {unknown} must also be owned")
