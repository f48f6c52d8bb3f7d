"""Typed views of the Sedna ``sedna.io/v1alpha1`` kinds, one module per concept.

Every kind is a ``apis.typed.Resource`` dataclass: ``Kind.from_dict(obj)`` gives snake_case attributes
(``job.spec.train_spec.trigger.condition.operator``), ``view.to_dict()`` gives the object back exactly, and
``apis.sedna.crds`` builds each kind's CRD from the same classes. ``KINDS`` maps kind name → view class.
"""

from __future__ import annotations

from ...typed import Resource
from . import (
    common,
    dataset,
    featureextraction,
    federatedlearning,
    incrementallearning,
    jointinference,
    lifelonglearning,
    model,
    objectsearch,
    reid,
    videoanalytics,
)
from .common import *  # noqa: F403
from .dataset import *  # noqa: F403
from .featureextraction import *  # noqa: F403
from .federatedlearning import *  # noqa: F403
from .incrementallearning import *  # noqa: F403
from .jointinference import *  # noqa: F403
from .lifelonglearning import *  # noqa: F403
from .model import *  # noqa: F403
from .objectsearch import *  # noqa: F403
from .reid import *  # noqa: F403
from .videoanalytics import *  # noqa: F403

KINDS: dict[str, type[Resource]] = {cls.info().kind: cls for cls in (
    dataset.Dataset,
    model.Model,
    jointinference.JointInferenceService,
    federatedlearning.FederatedLearningJob,
    incrementallearning.IncrementalLearningJob,
    lifelonglearning.LifelongLearningJob,
    featureextraction.FeatureExtractionService,
    objectsearch.ObjectSearchService,
    objectsearch.ObjectTrackingService,
    reid.ReidJob,
    videoanalytics.VideoAnalyticsJob,
)}
"""Kind name → view class, for all eleven Sedna kinds."""

# every submodule lists its own exports; the package re-exports them all
__all__ = ["KINDS"]
__all__ += common.__all__
__all__ += dataset.__all__
__all__ += featureextraction.__all__
__all__ += federatedlearning.__all__
__all__ += incrementallearning.__all__
__all__ += jointinference.__all__
__all__ += lifelonglearning.__all__
__all__ += model.__all__
__all__ += objectsearch.__all__
__all__ += reid.__all__
__all__ += videoanalytics.__all__
