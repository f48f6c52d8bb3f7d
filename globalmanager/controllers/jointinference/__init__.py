"""The JointInferenceService kind: a cloud and an edge Deployment per service, the cloud Service, optional HPAs,
status from the workers' health, downstream to the edge node and ``ownerInfo`` reports into ``status.metrics``."""

from .controller import KIND, NAME, create_workers

__all__ = ["KIND", "NAME", "create_workers"]
