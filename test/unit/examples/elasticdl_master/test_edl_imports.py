"""Importing the worked example configures and logs nothing (that it imports apis, informers and workqueue only is
checked with every package's dependency direction in test/unit/test_library_rules.py)."""

from __future__ import annotations

import subprocess
import sys

from testkit import REPO


def test_importing_the_package_prints_nothing():
    out = subprocess.run([sys.executable, "-c", "import examples.elasticdl_master, structlog; "
                          "assert not structlog.is_configured()"],
                         cwd=REPO, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout == "" and out.stderr == ""
