"""Sedna's ``sedna.io`` API group: typed views (``v1alpha1``) and CRDs generated from them (``crds``)."""
