"""Reports from the edge about an IncrementalLearningJob (Sedna's ``upstream.go``): each report appends a condition
(``learningjob.upstream``: accepted content, idempotence, refusals)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from globalmanager.controllers.learningjob.upstream import apply_report
from globalmanager.runtime.edge import UpstreamMessage

if TYPE_CHECKING:
    from .controller import IncrementalLearningController

__all__ = ["update_from_edge"]


def update_from_edge(controller: IncrementalLearningController, msg: UpstreamMessage) -> None:
    apply_report(controller, msg)
