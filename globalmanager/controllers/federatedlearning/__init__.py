"""The FederatedLearningJob kind: an aggregation pod, its Service and one training pod per training worker, job
phases and conditions from the pods, per-job self-healing and spec roll-outs, downstream to the training nodes and
round reports into a ``Training`` condition and the aggregation Model's metrics."""

from .controller import KIND, NAME, create_workers

__all__ = ["KIND", "NAME", "create_workers"]
