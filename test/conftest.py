"""Root of the test tree: makes ``testkit`` (the helpers every suite shares) importable as a top-level package."""

from __future__ import annotations

import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)
