"""docs/library.md stays true: every Python block runs as shown, the blocks marked *test* pass under pytest.

The block defining ``ConfigMapMirror`` is saved as ``lib_example.py`` (the page's *test* blocks import it).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from testkit import REPO

DOC = REPO / "docs" / "library.md"
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def blocks() -> list[tuple[str, bool, int]]:
    """``(code, is_test, line)`` of every Python block; a block is a test when the paragraph before it says *test*."""
    text = DOC.read_text()
    found = []
    for match in BLOCK.finditer(text):
        before = text[: match.start()].rstrip("\n").rsplit("\n\n", 1)[-1]
        found.append((match.group(1), "*test*" in before, text.count("\n", 0, match.start()) + 1))
    return found


def run(argv: list[str], workdir: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(workdir), str(REPO)])}
    return subprocess.run([sys.executable, *argv], cwd=REPO, env=env, capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("docs")
    (example,) = [code for code, _, _ in blocks() if "class ConfigMapMirror" in code]
    (path / "lib_example.py").write_text(example)
    return path


def test_the_page_has_examples_and_tests():
    found = blocks()
    assert sum(1 for _, is_test, _ in found if is_test) >= 2 and sum(1 for _, is_test, _ in found if not is_test) >= 3


@pytest.mark.parametrize("index", range(len(blocks())))
def test_block_runs(index: int, workdir: Path) -> None:
    code, is_test, line = blocks()[index]
    if is_test:
        path = workdir / f"test_library_md_line_{line}.py"
        path.write_text(code)
        result = run(["-m", "pytest", "-q", "-p", "no:cacheprovider", str(path)], workdir)
    else:
        result = run(["-c", code], workdir)
    assert result.returncode == 0, f"docs/library.md line {line}:\n{result.stdout}\n{result.stderr}"
