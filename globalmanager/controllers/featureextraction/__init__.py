"""The FeatureExtractionService kind: one Deployment built from the service's DeploymentSpec, its edge-mesh Service
``<service>-fe`` (port 6000), status from the Deployment's health and ``ownerInfo`` reports into ``status.metrics``."""

from .controller import KIND, NAME, create_workers

__all__ = ["KIND", "NAME", "create_workers"]
