"""IncrementalLearningJob: the Train → Eval → Deploy loop (train/eval pods from the LC's reports, the inference pod,
model hot update), placed stage by stage on the LocalControllers with its Models."""

from .controller import KIND, NAME, with_model_router

__all__ = ["KIND", "NAME", "with_model_router"]
