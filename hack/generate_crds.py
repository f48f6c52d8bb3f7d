#!/usr/bin/env python3
"""Write the CRDs of the Sedna kinds and of ElasticAIJob into charts/sedna/crds/, generated from the typed views
in apis/ (apis.sedna.crds). ElasticAIJob's CRD (elasticdl.org_elasticaijobs.yaml) sits in the same directory as the
Sedna ones so that one chart installs them all.

    python hack/generate_crds.py            # (re)write the files
    python hack/generate_crds.py --check    # exit 1 and name every drifting, missing or extra file
    python hack/generate_crds.py --out DIR  # another directory (tests use a temporary copy)
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from apis.sedna.crds import render_crd_files  # noqa: E402

DEFAULT_OUT = REPO_ROOT / "charts" / "sedna" / "crds"


def check(out: Path, expected: dict[str, str]) -> list[str]:
    """One line per problem: ``drift: f``, ``missing: f``, ``extra: f`` (extra = a YAML file nothing generates)."""
    problems = []
    for name, text in sorted(expected.items()):
        path = out / name
        if not path.exists():
            problems.append(f"missing: {path}")
        elif path.read_text(encoding="utf-8") != text:
            problems.append(f"drift: {path}")
    present = {p.name for p in out.glob("*.y*ml")} if out.is_dir() else set()
    problems.extend(f"extra: {out / name}" for name in sorted(present - expected.keys()))
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true", help="compare instead of writing; exit 1 on any difference")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"target directory (default {DEFAULT_OUT})")
    args = parser.parse_args(argv)
    expected = render_crd_files()
    if args.check:
        problems = check(args.out, expected)
        for line in problems:
            print(line)
        if problems:
            print(f"{len(problems)} CRD file(s) out of date; run: python hack/generate_crds.py", file=sys.stderr)
            return 1
        print(f"{len(expected)} CRD files up to date in {args.out}")
        return 0
    args.out.mkdir(parents=True, exist_ok=True)
    for name, text in sorted(expected.items()):
        (args.out / name).write_text(text, encoding="utf-8")
    print(f"wrote {len(expected)} CRD files to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
