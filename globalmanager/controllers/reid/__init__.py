"""The ReidJob kind: one worker pod from the job's JobSpec template, job phases and conditions from it, the
JobSpec's ``backoffLimit`` and ``activeDeadlineSeconds`` honoured, edge reports shown as conditions.
VideoAnalytics reuses its rules (``OnePodJob``)."""

from .controller import KIND, NAME, OnePodJob

__all__ = ["KIND", "NAME", "OnePodJob"]
