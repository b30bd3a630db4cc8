"""The repository explains itself: code and tests cite docs/contract.md, never files outside it.

Every ``docs/contract.md#<anchor>`` cited in the package or the tests, and every link into the
contract from docs/, must name a heading of docs/contract.md (GitHub-style anchor slugs).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CONTRACT = ROOT / "docs" / "contract.md"
SCANNED = ("plasmate_nb", "docs", "tests")
# Built from parts so that this file does not match its own check.
FORBIDDEN = ("shared" + "/", "SPEC" + " §", "reference" + " §")
CITATION = re.compile(r"docs/contract\.md#([\w-]+)")
DOCS_LINK = re.compile(r"\]\((?:(?:\.\./)?docs/|\./)?contract\.md#([\w-]+)\)|\]\(#([\w-]+)\)")


def _text_files(*folders: str):
    for folder in folders:
        for path in sorted((ROOT / folder).rglob("*")):
            if not path.is_file() or "__pycache__" in path.parts or path.suffix in (".pyc", ".png"):
                continue
            try:
                yield path, path.read_text(encoding="utf-8")
            except UnicodeDecodeError:
                continue  # binary


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces become hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def contract_anchors() -> set[str]:
    anchors: set[str] = set()
    counts: dict[str, int] = {}
    fenced = False
    for line in CONTRACT.read_text(encoding="utf-8").splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        match = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
        if fenced or match is None:
            continue
        base = slug(match.group(1))
        seen = counts.get(base, 0)
        counts[base] = seen + 1
        anchors.add(base if seen == 0 else f"{base}-{seen}")
    return anchors


def test_slugs_follow_github() -> None:
    assert (
        slug("Error messages and their trace error classes") == "error-messages-and-their-trace-error-classes"
    )
    assert slug("URL policy") == "url-policy"
    assert slug("Elements, roles and actions") == "elements-roles-and-actions"
    assert slug("The `trace_status` envelope") == "the-trace_status-envelope"


def test_nothing_cites_files_outside_the_repository() -> None:
    offenders = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for path, text in _text_files(*SCANNED)
        for number, line in enumerate(text.splitlines(), 1)
        if any(needle in line for needle in FORBIDDEN)
    ]
    assert not offenders, "cite docs/contract.md instead:\n" + "\n".join(offenders)


def test_the_contract_has_its_sections() -> None:
    anchors = contract_anchors()
    for section in (
        "tool-catalogue",
        "error-messages-and-their-trace-error-classes",
        "the-trace-event",
        "trace-envelopes",
        "bounds",
        "fingerprints",
        "origins",
        "sanitisation",
        "replay-validation",
        "url-policy",
        "the-egress-gate",
        "the-mcp-server",
        "deviations-from-the-reference",
    ):
        assert section in anchors


def _citations() -> list[tuple[str, str]]:
    found = []
    for path, text in _text_files("plasmate_nb", "tests"):
        if path == Path(__file__).resolve():
            continue
        found += [(f"{path.relative_to(ROOT)}", anchor) for anchor in CITATION.findall(text)]
    for path, text in _text_files("docs"):
        for outside, inside in DOCS_LINK.findall(text):
            anchor = outside or (inside if path == CONTRACT else "")
            if anchor:
                found.append((f"{path.relative_to(ROOT)}", anchor))
    return found


def test_code_cites_the_contract() -> None:
    assert any(where.startswith("plasmate_nb") for where, _ in _citations())


@pytest.mark.parametrize(("where", "anchor"), sorted(set(_citations())))
def test_every_cited_anchor_exists(where: str, anchor: str) -> None:
    assert anchor in contract_anchors(), f"{where} cites docs/contract.md#{anchor}, which has no such heading"
