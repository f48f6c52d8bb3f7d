"""Console script ``sedna-lc``: the LocalController is not implemented yet."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    print("sedna-lc: not implemented yet (the LocalController lands in a later issue)", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
