"""LifelongLearningJob: the Train → Eval → Deploy loop with a knowledge base (``status.knowledgeBase`` from the
reported models); its inference pod is (re)started when a deploy is ready."""

from .controller import KIND, NAME

__all__ = ["KIND", "NAME"]
