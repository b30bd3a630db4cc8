"""``pnb.audit`` and ``plasmate-nb audit``: valid exports audit clean, each broken rule is reported under its id.

Valid exports come from the real trace core and from a synthetic writer (tests/analysis/export_builders.py);
each mutation there breaks one rule. A real-engine session's exports audit clean too, and the CLI's
exit codes are 0 clean, 1 findings, 2 unreadable.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import uuid
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import plasmate_nb as pnb
from plasmate_nb.analysis.audit_report import FINDING_COLUMNS
from plasmate_nb.analysis.audit_rules import RULES, RULES_BY_ID
from plasmate_nb.analysis.secret_patterns import find_secret_like
from plasmate_nb.notebook._html import cell
from plasmate_nb.trace import TraceLog, compact_json
from plasmate_nb.trace.constants import FINAL_TRACE_OMITTED_REASON, MAX_EXPORT_BYTES, SCHEMA, STATE_PREFIX
from tests.analysis.export_builders import (
    MUTATIONS,
    SESSION_ID,
    core_exports,
    mutated,
    remeasure,
    synthetic_exports,
    trace_of,
)

ROOT = Path(__file__).resolve().parents[2]
SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
exports = st.one_of(core_exports(), synthetic_exports())


def _rules(report: pnb.AuditReport) -> set[str]:
    return set(report.findings["rule"])


@SETTINGS
@given(exports)
def test_valid_exports_audit_clean(document: dict) -> None:
    report = pnb.audit(document)
    assert report.ok, report.findings[["sequence", "rule", "path", "message"]].to_string()
    assert report.documents == 1


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=10,
)


def _places(value: object, at: tuple = ()) -> list[tuple]:
    if isinstance(value, dict):
        return [at] + [p for k, v in value.items() for p in _places(v, (*at, k))]
    if isinstance(value, list):
        return [at] + [p for i, v in enumerate(value) for p in _places(v, (*at, i))]
    return [at]


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(core_exports(max_steps=3), _JSON, st.data())
def test_any_damage_is_a_report_never_a_crash(document: dict, junk: object, data: st.DataObject) -> None:
    trace = trace_of(document)
    place = data.draw(st.sampled_from(_places(trace)[1:]))
    holder = trace
    for key in place[:-1]:
        holder = holder[key]
    holder[place[-1]] = junk
    report = pnb.audit(document)  # some damage is still a valid export (another duration); none raises
    assert report.documents == 1 and report.unreadable == 0
    assert set(report.findings["rule"]) <= set(RULES_BY_ID) - {"unreadable"}


@pytest.mark.parametrize("junk", [["click"], {"a": 1}, 7, None])
def test_an_action_of_any_json_kind_is_a_report_never_a_crash(junk: object) -> None:
    document = _rich_export()
    document["events"][-1]["action"] = junk  # a list once crashed the parameter checks
    report = pnb.audit(document)
    assert report.documents == 1 and not report.ok


def _assert_reported(broken: dict, rule: str) -> None:
    report = pnb.audit(broken)
    _, companions = MUTATIONS[rule]
    found = _rules(report)
    shown = report.findings[["rule", "path", "message"]].to_string()
    assert rule in found, f"{rule} not reported:\n{shown}"
    assert found <= {rule, *companions}, f"{rule} came with other rules:\n{shown}"


@SETTINGS
@given(exports)
def test_each_broken_rule_is_reported_under_its_id(document: dict) -> None:
    for rule in MUTATIONS:
        broken = mutated(document, rule)
        if broken is not None:  # None: nothing in this export for the mutation to break (no scroll, …)
            _assert_reported(broken, rule)


def _rich_export() -> dict:
    """One export where every mutation applies: open, typing, a scroll, evaluate, a click, a chain."""
    from plasmate_nb.trace import sanitize_parameters
    from tests.analysis.export_builders import ORIGIN, PAGES

    log = TraceLog(True)
    login = PAGES[0]
    state = log.state(login)
    log.record(
        "open_page",
        sanitize_parameters("open_page", {"url": login.url}, log.key),
        None,
        log.closed_state(),
        state,
        None,
        9,
    )
    for action, arguments in (
        ("type_text", {"element_id": "e2", "text": "hunter2"}),
        ("scroll", {"direction": "down"}),
        ("evaluate", {"expression": "1"}),
        ("click", {"element_id": "e1"}),
    ):
        target = log.target(login, arguments.get("element_id"))
        log.record(action, sanitize_parameters(action, arguments, log.key), target, state, state, None, 1)
    export = log.export(SESSION_ID)
    assert ORIGIN in json.dumps(export)
    return export


def test_every_mutation_applies_to_a_rich_export_and_is_reported() -> None:
    document = _rich_export()
    assert pnb.audit(document).ok
    for rule in MUTATIONS:
        broken = mutated(document, rule)
        assert broken is not None, rule
        _assert_reported(broken, rule)


def test_every_rule_but_input_and_ceiling_has_a_mutation() -> None:
    assert set(MUTATIONS) == {r.id for r in RULES} - {"unreadable", "final-trace-ceiling"}
    for (
        rule
    ) in RULES:  # each cites a heading of the contract (tests/test_docs_citations.py checks the anchors)
        assert rule.section.startswith("docs/contract.md#") and rule.why.endswith(".")


def test_a_final_trace_above_the_ceiling_and_a_wrong_omitted_marker_are_reported() -> None:
    log = TraceLog(True)
    closed = log.closed_state()
    log.record("close_page", {}, None, closed, closed, None, 1)
    final = log.export(SESSION_ID)
    final["redaction_policy"] = "p" * MAX_EXPORT_BYTES
    report = pnb.audit({"closed": True, "session_id": SESSION_ID, "final_trace": final})
    assert _rules(report) == {"final-trace-ceiling", "redaction-metadata"}
    marker = {"schema": SCHEMA, "omitted": True, "reason": FINAL_TRACE_OMITTED_REASON}
    assert pnb.audit(marker).ok
    assert _rules(pnb.audit({**marker, "reason": "too big"})) == {"final-trace-ceiling"}


def test_a_report_names_a_secret_by_kind_place_and_length_never_by_value() -> None:
    secret = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2lnbmF0dXJlcw"
    log = TraceLog(True)
    closed = log.closed_state()
    log.record("scroll", {"direction": secret, "pixels": 1, "targeted": False}, None, closed, closed, None, 1)
    export = log.export(SESSION_ID)
    export["events"][0]["parameters"]["sneaky " + secret] = "card 4111 1111 1111 1111"
    report = pnb.audit(export)
    rendered = report.findings.to_string() + report._repr_html_() + json.dumps(report.to_dict())
    assert {"secret-like", "parameters-shape"} <= _rules(report)
    assert secret not in rendered and "4111" not in rendered and "eyJ" not in rendered
    assert "jwt of 55 characters at offset 0" in set(report.findings["message"])
    assert RULES_BY_ID["secret-like"].why in set(report.findings["why"])


def test_inputs_of_every_kind_and_unreadable_ones(tmp_path: Path) -> None:
    log = TraceLog(True)
    closed = log.closed_state()
    log.record("evaluate", {}, None, closed, closed, "Evaluate failed: Timeout after 5ms", 2)
    export = log.export(SESSION_ID)
    (tmp_path / "nested").mkdir()
    (tmp_path / "nested" / "a.json").write_text(json.dumps(export), encoding="utf-8")
    (tmp_path / "many.jsonl").write_text(
        json.dumps(export) + "\n\n" + json.dumps([export]) + "\n", encoding="utf-8"
    )
    report = pnb.audit(tmp_path, json.dumps(export), pnb.load_trace(export))
    assert report.ok and report.documents == 5  # a.json, the two lines (one an array), the text, the object
    (tmp_path / "broken.json").write_text(
        '{"schema": "plasmate.trace.v1", "secret": "hunter2"', encoding="utf-8"
    )
    (tmp_path / "other.json").write_text('{"hello": 1}', encoding="utf-8")
    report = pnb.audit(tmp_path, tmp_path / "missing.json", 42, {"closed": True, "session_id": SESSION_ID})
    unreadable = report.findings[report.findings["rule"] == "unreadable"]
    assert report.unreadable == len(unreadable) == 5 and not report.ok
    assert "hunter2" not in report.findings.to_string()


@pytest.mark.parametrize("separator", ["\u2028", "\u2029", "\x85"])
def test_a_jsonl_line_ends_at_a_newline_only(tmp_path: Path, separator: str) -> None:
    # A scroll direction is free text and an export writes it raw (not as an escape): the line
    # holding it is one export, though str.splitlines() would cut it in two.
    log = TraceLog(True)
    closed = log.closed_state()
    log.record("scroll", {"direction": f"down{separator}up", "pixels": 1}, None, closed, closed, None, 2)
    line = compact_json(log.export(SESSION_ID))
    assert separator in line
    (tmp_path / "runs.jsonl").write_text(line + "\n" + line + "\n", encoding="utf-8")
    report = pnb.audit(tmp_path)
    assert (report.documents, report.unreadable) == (2, 0)


@settings(max_examples=200, deadline=None)
@given(st.uuids(), st.binary(min_size=32, max_size=32))
def test_handles_and_fingerprints_never_look_like_secrets(handle: uuid.UUID, key: bytes) -> None:
    assert find_secret_like(f"{handle} {STATE_PREFIX}{key.hex()},{str(handle).upper()}") == []


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("write to ada.lovelace+x@example.co.uk today", "email address"),
        ("Authorization: Bearer abc.DEF-123_456~xyz", "bearer token"),
        ("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2lnbmF0dXJlcw", "jwt"),
        ("key sk_live_4eC39HqLyjWDarjtT1zdp7dc", "api key"),
        ("ghp_" + "a1B2c3D4e5" * 4, "api key"),
        ("AKIAIOSFODNN7EXAMPLE", "api key"),
        ("id 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b", "long hex run"),
        ("token Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MGFiY2RlZmdoaWprbA==", "long base64 run"),
        ("card 4111-1111-1111-1111", "card number"),
    ],
)
def test_secret_shapes_are_recognised_by_kind(text: str, kind: str) -> None:
    assert [match.kind for match in find_secret_like(text)] == [kind]


@pytest.mark.parametrize(
    "text",
    ["down", "x" * 600, "4111 1111 1111 1112", "deadbeef" * 8, "text_input", "https://example.test:443"],
)
def test_ordinary_text_is_not_a_secret(text: str) -> None:
    assert find_secret_like(text) == []


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "plasmate_nb", "audit", *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        check=False,
    )


def test_the_command_line_exit_codes(tmp_path: Path) -> None:
    log = TraceLog(True)
    closed = log.closed_state()
    log.record("scroll", {"direction": "down", "pixels": 3, "targeted": False}, None, closed, closed, None, 1)
    export = log.export(SESSION_ID)
    clean = tmp_path / "clean.json"
    clean.write_text(json.dumps(export), encoding="utf-8")
    dirty = tmp_path / "dirty.json"
    dirty.write_text(json.dumps({**export, "retained_bytes": export["retained_bytes"] + 1}), encoding="utf-8")
    unreadable = tmp_path / "unreadable.json"
    unreadable.write_text("{not json", encoding="utf-8")

    done = _cli(str(clean))
    assert done.returncode == 0, done.stdout + done.stderr
    done = _cli(str(clean), str(dirty), "--json")
    assert done.returncode == 1, done.stderr
    report = json.loads(done.stdout)
    assert report["documents"] == 2 and [f["rule"] for f in report["findings"]] == ["retained-bytes"]
    done = _cli(str(dirty), str(unreadable))
    assert done.returncode == 2 and "[unreadable]" in done.stdout and "[retained-bytes]" in done.stdout


@pytest.mark.parametrize("bad", [[], {"closed": True, "session_id": SESSION_ID}])
def test_nothing_to_audit_is_not_clean(bad: object) -> None:
    assert not pnb.audit(bad).ok


async def test_a_real_engine_session_audits_clean(demo) -> None:
    """A traced session on real Chromium: its export and its final trace keep every promise."""
    from plasmate_nb.browser import Engine, EngineConfig
    from plasmate_nb.tools import Dispatcher
    from tests.analysis.demo_flow import sign_in_flow

    engine = Engine(EngineConfig(action_timeout=5.0, settle_timeout=1.0))
    try:
        export, closed = await sign_in_flow(Dispatcher(engine), demo.base_url, detours=True)
    finally:
        await engine.aclose()
    report = pnb.audit(export, closed)
    assert report.documents == 2 and len(export["events"]) == 11
    assert report.ok, report.findings[["sequence", "rule", "path", "message"]].to_string()


def test_an_integer_longer_than_python_reads_is_an_unreadable_input(tmp_path: Path) -> None:
    path = tmp_path / "big.json"
    path.write_text('{"schema":"plasmate.trace.v1","retained_events":' + "9" * 5000 + "}")
    report = pnb.audit(path)
    assert (report.documents, report.unreadable) == (0, 1)
    (message,) = report.findings["message"]
    assert message == "not valid JSON (a number too long to read at line 1 column 4350)"


def test_by_rule_shows_each_why_whole_in_a_notebook(tmp_path: Path) -> None:
    """pandas cuts a cell at 50 characters (``display.max_colwidth``): the why of a rule, whole in
    the report's own HTML, came out as "…" in ``by_rule()``. Global pandas options stay as they are."""
    (tmp_path / "broken.json").write_text("[1,")
    report = pnb.audit(tmp_path / "broken.json", {"schema": SCHEMA})
    table = report.by_rule()
    assert len(table) >= 2 and all(len(why) > 50 for why in table["why"])
    html, text = table._repr_html_(), repr(table)
    for why in table["why"]:
        assert cell(why) in html and why in text  # cell: the HTML escape every table uses
    assert pd.get_option("display.max_colwidth") == 50
    assert list(table.columns) == ["rule", "findings", "section", "why"]
    assert type(table[table["findings"] > 0]) is pd.DataFrame  # computing gives plain pandas
    empty = pnb.AuditReport(report.findings.iloc[0:0], 1, 0).by_rule()
    assert empty.empty and list(empty.columns) == ["rule", "findings", "section", "why"]
    assert "0 rows" in empty._repr_html_()


def test_findings_show_each_message_and_why_whole_in_a_notebook(tmp_path: Path) -> None:
    """``findings`` is the table an analyst reads and filters: pandas cut its ``message`` (a list of
    missing fields, a parser's words) and ``why`` at 50 characters. Global pandas options stay."""
    (tmp_path / "broken.json").write_text("[1,")
    report = pnb.audit(tmp_path / "broken.json", {"schema": SCHEMA})
    findings = report.findings
    texts = [*findings["message"], *findings["why"]]
    assert len(findings) >= 2 and all(len(text) > 50 for text in texts)
    html, text = findings._repr_html_(), repr(findings)
    for whole in texts:
        assert cell(whole) in html and whole in text
    headers = re.findall(r"<th style=[^>]*>(.*?)</th>", html.replace("<wbr>", ""))
    assert headers == list(FINDING_COLUMNS)  # every column, in order
    assert pd.get_option("display.max_colwidth") == 50
    unreadable = findings[findings["rule"] == "unreadable"]
    assert type(unreadable) is pd.DataFrame and len(unreadable) == 1  # computing gives plain pandas
    assert type(findings.groupby("rule").size()) is pd.Series
    given = pnb.AuditReport(pd.DataFrame(findings), 1, 1).findings  # built from a plain frame too
    assert cell(max(texts, key=len)) in given._repr_html_()


def test_the_html_lets_a_long_file_name_wrap_and_counts_in_words(tmp_path: Path) -> None:
    # A path has no spaces to wrap at: unless it may break anywhere, one long name pushes every
    # other column out of a notebook's view (seen in JupyterLab at 1000 and 1440 px).
    path = tmp_path / ("L" * 200 + ".json")
    path.write_text("[1,")
    report = pnb.audit(path)
    assert report.summary() == "0 exports audited, 1 unreadable: 1 finding"
    html = report._repr_html_()
    source_cell = html[html.index("<tbody>") :].split("</td>")[0]
    # Whole, with places to break in its long run.
    assert "overflow-wrap:anywhere" in source_cell and "L" * 200 in source_cell.replace("<wbr>", "")
    assert "overflow-wrap:anywhere" not in html.split("</td>")[4]  # the message wraps at words


def _scrolled(direction: str = "down") -> dict:
    """A valid export of one scroll (its direction is the one free-text string an event keeps)."""
    log = TraceLog(True)
    closed = log.closed_state()
    log.record("scroll", {"direction": "down", "pixels": 1, "targeted": False}, None, closed, closed, None, 1)
    document = log.export(SESSION_ID)
    document["events"][0]["parameters"]["direction"] = direction
    remeasure(document)
    return document


# Characters of every UTF-8 width, and ones that JSON escapes.
_WIDE = st.sampled_from(["a", '"', "\\", "\n", "é", "€", "😀", "\ud800"])


@SETTINGS
@given(st.lists(_WIDE, min_size=1, max_size=600), st.booleans())
@example(["😀"], True)  # 129 characters of 4 bytes: the fewest characters past the bound
@example(["\ud800"], True)
@example(["\\"], True)
def test_a_string_over_its_byte_bound_is_found_whatever_its_characters(chars: list[str], over: bool) -> None:
    # Grow the text to exactly the bound, then (when `over`) one character past it.
    text = ""
    for char in chars * 600:
        if len((text + char).encode("utf-8", "surrogatepass")) > 512:
            text += char if over else ""
            break
        text += char
    found = "string-size" in _rules(pnb.audit(_scrolled(text)))
    assert found == (len(text.encode("utf-8", "surrogatepass")) > 512)


def test_a_long_key_is_found_too() -> None:
    document = _scrolled()
    document["events"][0]["parameters"]["x" * 513] = 1
    remeasure(document)
    assert "string-size" in _rules(pnb.audit(document))


def test_an_export_in_memory_is_held_to_json_types() -> None:
    # The compiled validator takes a tuple for an array; such a document is no JSON export, and
    # its events would go unchecked: it is validated as jsonschema reads it.
    document = _scrolled()
    document["events"] = tuple(document["events"])
    report = pnb.audit(document)
    assert not report.ok
    assert "$.events" in set(report.findings["path"])
