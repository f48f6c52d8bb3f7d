"""The JointInferenceService controller: a cloud and an edge Deployment per service, the cloud Service, optional
HPAs, status from the workers' health, downstream to the edge node and ``ownerInfo`` reports into
``status.metrics``."""

from .controller import NAME, JointInferenceController, new_controller

__all__ = ["JointInferenceController", "NAME", "new_controller"]
