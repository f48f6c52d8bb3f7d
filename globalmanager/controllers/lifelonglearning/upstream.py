"""Reports from the edge about a LifelongLearningJob (Sedna's LL ``upstream.go``): each report appends a condition
(``learningjob.upstream``: accepted content, idempotence, refusals) and, when it has ``output.models``, rewrites
``status.knowledgeBase`` from them in the same write:

* ``AIClasses``: ``listOfAIClasses`` = ``models[0].classes``, ``numberOfAIClasses`` its length;
* ``AIModels``: one ``{modelID, averagePrecision, numberOfTrainSamples}`` per model and ``current_metric`` entry
  (``modelID`` the entry's name, ``averagePrecision`` its first metric — by name; Go takes a random one —,
  ``numberOfTrainSamples`` the model's ``number_of_labeled_unseen_sample``), ``numberOfAIModels`` their count;
* ``samples``: ``numberOfLabeledUnseenSample`` the sum of ``number_of_labeled_unseen_sample``,
  ``numberOfUnseenSample`` 0.
"""

from __future__ import annotations

from typing import Any

from globalmanager.controllers.learningjob.conditions import Report, output_models
from globalmanager.controllers.learningjob.upstream import apply_report
from globalmanager.runtime.context import KindContext
from globalmanager.runtime.edge import UpstreamMessage

__all__ = ["from_edge", "knowledge_base"]


def knowledge_base(report: Report) -> dict[str, Any] | None:
    """The ``status.knowledgeBase`` a report's ``output.models`` give, or ``None`` when it has none."""
    models = output_models(report.data)
    if not models:
        return None
    ai_models: list[dict[str, Any]] = []
    samples = 0
    for model in models:
        trained = int(model.get("number_of_labeled_unseen_sample") or 0)
        for model_id, metrics in (model.get("current_metric") or {}).items():
            first = next(iter(metrics.values()), 0.0) if metrics else 0.0
            ai_models.append({"modelID": model_id, "averagePrecision": first, "numberOfTrainSamples": trained})
        samples += trained
    classes = list(models[0].get("classes") or [])
    kb: dict[str, Any] = {
        "AIModels": {"numberOfAIModels": len(ai_models)},
        "AIClasses": {"numberOfAIClasses": len(classes)},
        "samples": {"numberOfLabeledUnseenSample": samples, "numberOfUnseenSample": 0},
    }
    if ai_models:
        kb["AIModels"]["listOfAIModels"] = ai_models
    if classes:
        kb["AIClasses"]["listOfAIClasses"] = classes
    return kb


def _set_knowledge_base(status: dict[str, Any], report: Report) -> bool:
    kb = knowledge_base(report)
    if kb is None or status.get("knowledgeBase") == kb:
        return False
    status["knowledgeBase"] = kb
    return True


def from_edge(ctx: KindContext[Any], msg: UpstreamMessage) -> None:
    """LL's upstream handler (``Kind.from_edge``): the report's condition and the knowledge base."""
    apply_report(ctx, msg, _set_knowledge_base)
