"""What a newcomer reads stays usable (issue 41): no kubectl command in the docs, the chart or local_up's output
watches two resource types at once (kubectl refuses it: "you may only specify a single resource type"), every
relative link of the Markdown pages points at a file of the repository (and at a heading of it), README.md names no
file outside the repository, and docs/README.md indexes every page."""

from __future__ import annotations

import re
from pathlib import Path

from testkit import REPO

PAGES = sorted([REPO / "README.md", *(REPO / "docs").glob("*.md"), *(REPO / "charts").glob("*/README.md")])
# a `kubectl ... get A,B ... -w` (or --watch) within one line of code
MULTI_WATCH = re.compile(r"kubectl[^\n`]*?\bget\s+[\w.-]+,[\w.,-]+[^\n`]*?\s(?:-w|--watch)\b")
LINK = re.compile(r"\]\(([^)\s]+)\)")
CODE = re.compile(r"^```.*?^```|`[^`\n]*`", re.S | re.M)


def links(page: Path) -> list[str]:
    """The targets of the page's Markdown links, outside code."""
    return LINK.findall(CODE.sub("", page.read_text()))


def anchors(page: Path) -> set[str]:
    """The anchors of the page's headings, as GitHub makes them."""
    text = re.sub(r"^```.*?^```", "", page.read_text(), flags=re.S | re.M)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower().replace("`", "")).replace(" ", "-")
            for h in re.findall(r"^#+ (.*)$", text, re.M)}


def test_no_kubectl_command_watches_two_resource_types() -> None:
    sources = [*PAGES, *(REPO / "hack").glob("*.py"), REPO / "charts" / "sedna" / "templates" / "NOTES.txt"]
    found = [f"{path.relative_to(REPO)}: {m.group(0)}" for path in sources for m in MULTI_WATCH.finditer(path.read_text())]
    assert found == []


def test_every_relative_link_points_at_a_file_of_the_repository() -> None:
    broken = []
    for page in PAGES:
        for target in links(page):
            path = target.split("#", 1)[0]
            if re.match(r"^[a-z]+:", target):
                continue
            resolved = (page.parent / path).resolve() if path else page.resolve()
            if not resolved.exists() or REPO.resolve() not in (resolved, *resolved.parents):
                broken.append(f"{page.relative_to(REPO)}: {target}")
            elif "#" in target and resolved.suffix == ".md" and target.split("#", 1)[1] not in anchors(resolved):
                broken.append(f"{page.relative_to(REPO)}: {target} (no such heading)")
    assert broken == []


def test_the_readme_names_no_file_outside_the_repository() -> None:
    """A fresh clone has nothing beside it (the workplace's ``../shared/`` is not a newcomer's)."""
    assert re.findall(r"\.\./[\w./-]+", (REPO / "README.md").read_text()) == []


def test_the_docs_index_lists_every_page_once() -> None:
    listed = [Path(t).name for t in links(REPO / "docs" / "README.md") if not t.startswith(("http", "#", "../"))]
    pages = sorted(p.name for p in (REPO / "docs").glob("*.md") if p.name != "README.md")
    assert sorted(listed) == pages
