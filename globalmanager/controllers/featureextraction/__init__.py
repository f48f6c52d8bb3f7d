"""The FeatureExtractionService controller: one Deployment built from the service's DeploymentSpec, its edge-mesh
Service ``<service>-fe`` (port 6000), status from the Deployment's health and ``ownerInfo`` reports into
``status.metrics``."""

from .controller import NAME, FeatureExtractionController, new_controller

__all__ = ["FeatureExtractionController", "NAME", "new_controller"]
