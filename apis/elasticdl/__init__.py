"""ElasticDL's ``elasticdl.org`` API group: the ElasticAIJob kind (typed views in ``v1alpha1``)."""
