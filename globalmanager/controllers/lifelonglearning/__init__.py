"""LifelongLearningJob: the Train → Eval → Deploy loop with a knowledge base (``status.knowledgeBase`` from the
reported models); its inference pod is (re)started when a deploy is ready."""

from .controller import NAME, LifelongLearningController, new_controller

__all__ = ["LifelongLearningController", "NAME", "new_controller"]
