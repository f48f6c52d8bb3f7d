"""What IncrementalLearningJob and LifelongLearningJob share: the stage state machine (``fsm``), their conditions
and reports (``conditions``, ``upstream``), the job's placement on LocalControllers (``placement``) and the
rules both kinds run (``controller.LearningRules``, the state ``controller.LearningState``)."""
