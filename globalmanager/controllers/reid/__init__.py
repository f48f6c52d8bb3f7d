"""The ReidJob controller: one worker pod from the job's JobSpec template, job phases and conditions from it, the
JobSpec's ``backoffLimit`` and ``activeDeadlineSeconds`` honoured, edge reports shown as conditions.
VideoAnalytics reuses it."""

from .controller import NAME, ReidController, new_controller

__all__ = ["NAME", "ReidController", "new_controller"]
