"""Model: sent to the nodes that jobs route it to (``model_router(ctx).set_routes(owner, routes)``)."""

from .controller import NAME, ModelController, ModelRoute, model_router, new_controller

__all__ = ["NAME", "ModelController", "ModelRoute", "model_router", "new_controller"]
