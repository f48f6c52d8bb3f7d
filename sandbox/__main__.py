"""``python -m sandbox``: run the sandbox API server (flags in docs/sandbox.md)."""

import sys

from sandbox.cli import main

sys.exit(main())
