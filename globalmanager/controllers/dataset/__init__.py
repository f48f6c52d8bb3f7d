"""Dataset: sent to the LC of ``spec.nodeName``, which reports ``numberOfSamples`` back."""

from .controller import NAME, DatasetController, new_controller

__all__ = ["NAME", "DatasetController", "new_controller"]
