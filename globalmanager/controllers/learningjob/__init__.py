"""What IncrementalLearningJob and LifelongLearningJob share: the stage state machine (``fsm``), their conditions
and reports (``conditions``, ``upstream``), the job's placement on LocalControllers (``placement``) and the
controller skeleton (``controller.LearningJobController``)."""
