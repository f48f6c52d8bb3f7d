"""The controller registry: name → factory(ctx) → controller (with ``run(stop)``), like Sedna's ``registry.go``.

``CONTROLLERS`` is the one list of the controllers sedna-gm ships (a new kind adds its line here); the
``controllers`` config entry selects a subset by name. ``register``/``unregister`` add and remove a controller at run
time (plug-ins, tests); nothing is registered as a side effect of an import.
"""

from __future__ import annotations

from typing import Any

from globalmanager.runtime.jobcontroller import DEFAULT_KB_SERVER, DEFAULT_LC_SERVER, JobController
from globalmanager.runtime.kind import Kind

from . import (
    dataset,
    featureextraction,
    federatedlearning,
    incrementallearning,
    jointinference,
    lifelonglearning,
    model,
    objectsearch,
    objecttracking,
    reid,
    videoanalytics,
)
from .context import Controller, ControllerContext, ControllerFactory
from .elasticdl import controller as elasticdl

__all__ = [
    "CONTROLLERS",
    "kind_factory",
    "Controller",
    "ControllerContext",
    "ControllerFactory",
    "factories",
    "register",
    "registered",
    "select",
    "unregister",
]

def kind_factory(kind: Kind[Any]) -> ControllerFactory:
    """The factory of the controller that runs ``kind`` (workers, recorder, metrics registry, drain timeout, edge
    link, and the LC/KB servers of the config from the context)."""

    def build(ctx: ControllerContext) -> JobController[Any]:
        cfg = ctx.config
        return JobController(
            kind, ctx.clientset, ctx.informer_factory, ctx.workers_for(kind.name),
            max_workers=ctx.max_workers_for(kind.name), recorder=ctx.recorder,
            registry=ctx.registry, drain_timeout=ctx.drain_timeout, edge=ctx.edge,
            lc_server=cfg.local_controller.server if cfg is not None else DEFAULT_LC_SERVER,
            kb_server=cfg.knowledge_base_server.server if cfg is not None else DEFAULT_KB_SERVER,
        )

    return build


CONTROLLERS: dict[str, ControllerFactory] = {
    elasticdl.NAME: kind_factory(elasticdl.KIND),
    dataset.NAME: dataset.new_controller,
    model.NAME: model.new_controller,
    jointinference.NAME: kind_factory(jointinference.KIND),
    federatedlearning.NAME: kind_factory(federatedlearning.KIND),
    incrementallearning.NAME: incrementallearning.with_model_router(kind_factory(incrementallearning.KIND)),
    lifelonglearning.NAME: kind_factory(lifelonglearning.KIND),
    featureextraction.NAME: kind_factory(featureextraction.KIND),
    objectsearch.NAME: kind_factory(objectsearch.KIND),
    objecttracking.NAME: kind_factory(objecttracking.KIND),
    reid.NAME: kind_factory(reid.KIND),
    videoanalytics.NAME: kind_factory(videoanalytics.KIND),
}


def register(name: str, factory: ControllerFactory) -> None:
    """Add (or replace) the factory of controller ``name``; for plug-ins and tests."""
    CONTROLLERS[name] = factory


def unregister(name: str) -> None:
    """Forget controller ``name`` (a no-op when it is not registered); for plug-ins and tests."""
    CONTROLLERS.pop(name, None)


def registered() -> list[str]:
    return sorted(CONTROLLERS)


def factories() -> dict[str, ControllerFactory]:
    return dict(CONTROLLERS)


def select(enabled: list[str] | None) -> dict[str, ControllerFactory]:
    """The factories named in ``enabled`` (all when ``None``); unknown names raise ``KeyError`` naming them."""
    all_factories = factories()
    if enabled is None:
        return all_factories
    unknown = [n for n in enabled if n not in all_factories]
    if unknown:
        raise KeyError(f"unknown controllers: {', '.join(unknown)}; known: {', '.join(sorted(all_factories))}")
    return {n: all_factories[n] for n in enabled}
