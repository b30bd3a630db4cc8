"""The audit's secret detectors: what they find, and that hostile text cannot make them slow."""

from __future__ import annotations

import json
import uuid

from hypothesis import given
from hypothesis import strategies as st

from plasmate_nb.analysis import audit
from plasmate_nb.analysis.secret_patterns import JWT, _jwts, find_secret_like
from plasmate_nb.trace import TraceLog

# Pieces a JWT is made of, and what breaks one: dots, dashes, short parts, word boundaries.
_PIECES = st.sampled_from(["eyJ", "abcd", "a", ".", "-", "_", "Z9", " ", "é", "x.y", "eyJ-"])


@given(st.lists(_PIECES, max_size=30).map("".join))
def test_the_linear_jwt_search_finds_exactly_what_the_pattern_matches(text: str) -> None:
    assert list(_jwts(text)) == [(m.start(), m.end()) for m in JWT.finditer(text)]


def test_a_long_run_of_jwt_heads_without_dots_is_scanned_once() -> None:
    """``"eyJ-" * n``: the pattern, searched as such, rescans the run from each head (quadratic: a
    schema-valid 1 MB export held the audit for minutes). Here the run is read once."""
    hostile = "eyJ-" * 250_000 + ".abcd.efgh"
    assert [m.kind for m in find_secret_like(hostile)][:1] == ["jwt"]
    assert find_secret_like("eyJ-" * 250_000) == []


def test_an_export_whose_free_text_is_a_jwt_head_run_is_audited(tmp_path) -> None:
    document = TraceLog(True).export(str(uuid.uuid4()))
    document["redaction_policy"] = "eyJ-" * 100_000  # any string, by the schema
    path = tmp_path / "hostile.json"
    path.write_text(json.dumps(document))
    report = audit(path)
    assert list(report.findings["path"]) == ["$.redaction_policy"]  # not the contract's text; no jwt
