"""``pnb.compare``: two recorded runs of the demo flow (the real dispatcher over the scripted engine),
one with an injected failure, diverge at the right step for the right reason."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

import pandas as pd
import pytest

import plasmate_nb as pnb
from plasmate_nb.notebook._html import cell
from plasmate_nb.tools import Dispatcher
from plasmate_nb.trace.constants import FINAL_TRACE_OMITTED_REASON, SCHEMA
from tests.analysis.demo_flow import sign_in_flow
from tests.scripted_engine import DEFAULT_ORIGIN, ScriptedEngine

if TYPE_CHECKING:
    from tests.conftest import ExportAudit

#: A second deployment of the demo site, at an origin longer than pandas shows (50 characters).
STAGING = "http://checkout-staging.eu-west-1.internal-tools.example.test"


async def _demo_flow(origin: str = DEFAULT_ORIGIN, **injected: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """The demo's sign-in flow over the scripted engine; returns (trace_export, close_page answer)."""
    dispatcher = Dispatcher(ScriptedEngine(origin))
    try:
        return await sign_in_flow(dispatcher, origin, **injected)
    finally:
        await dispatcher.engine.aclose()


async def test_an_injected_failure_is_the_first_divergence_with_its_reason() -> None:
    good, _ = await _demo_flow()
    failed, _ = await _demo_flow(plan="Platinum")  # no such option: select_option fails
    cmp = pnb.compare(good, failed, labels=("good", "failed"))

    select_step = [e["action"] for e in good["events"]].index("select_option")
    first = cmp.first_divergence
    assert first is not None and first.step == select_step and first.status == "changed"
    assert first.sequence_a == first.sequence_b == good["events"][select_step]["sequence"]
    assert {"outcome", "error_class"} <= set(first.fields)
    assert "outcome: success → error" in first.reason and "error_class: None → not_found" in first.reason
    assert list(cmp.differences["step"]) == [select_step]  # every other step agrees
    assert not cmp.identical and len(cmp.steps) == len(good["events"])
    durations = list(cmp.steps["duration_ms_a"]), list(cmp.steps["duration_ms_b"])
    assert durations == (
        [e["duration_ms"] for e in good["events"]],
        [e["duration_ms"] for e in failed["events"]],
    )


async def test_a_skipped_step_is_reported_and_the_runs_realign_after_it() -> None:
    good, _ = await _demo_flow()
    skipped, _ = await _demo_flow(password=False)  # without a password the form does not submit
    cmp = pnb.compare(good, skipped)

    first = cmp.first_divergence
    assert first is not None and first.status == "only in a" and first.sequence_b is None
    assert first.sequence_a == 3 and "a took a step b did not: type_text on a text_input" in first.reason
    by_status = cmp.steps.set_index("step")["status"]
    click = cmp.steps.index[cmp.steps["action_a"] == "click"][0]
    assert by_status[click] == "changed" and "url_changed" in cmp.steps.loc[click, "differences"]
    assert by_status.iloc[-1] == "same"  # the navigation after the sign-in aligns again
    assert (cmp.steps["action_b"].dropna() == [e["action"] for e in skipped["events"]]).all()


async def test_a_run_agrees_with_itself_and_a_final_trace_compares_with_its_export() -> None:
    export, closed = await _demo_flow()
    assert pnb.compare(export, export).identical and pnb.compare(export, export).first_divergence is None
    cmp = pnb.compare(export, closed)  # the close_page answer: the same steps plus the close
    assert cmp.first_divergence is not None and cmp.first_divergence.reason.startswith(
        "b took a step a did not: close_page"
    )
    omitted = {"schema": SCHEMA, "omitted": True, "reason": FINAL_TRACE_OMITTED_REASON}
    with pytest.raises(ValueError, match="before closing"):
        pnb.compare(export, omitted)


async def test_the_views_show_two_columns_highlight_differences_and_no_fingerprint() -> None:
    good, _ = await _demo_flow()
    failed, _ = await _demo_flow(plan="Platinum")
    cmp = pnb.compare(good, failed, labels=("good", "failed"))
    html = cmp._repr_html_()
    assert ">good<" in html and ">failed<" in html
    assert html.count("background:#fff8c5") == 2 * 2  # outcome and error_class, in both columns
    assert "plasmate-" not in html and "plasmate-" not in cmp.steps.to_string()
    assert not [c for c in cmp.steps.columns if "fingerprint" in c or "target_id" in c]
    assert "first at step" in repr(cmp)


async def test_steps_and_differences_show_every_column_and_whole_origins_in_a_notebook() -> None:
    """Shown on their own, ``steps`` and ``differences`` (38 columns) lost their middle columns to
    pandas' ``display.max_columns`` and a long origin or list of differing fields to its 50-character
    ``display.max_colwidth``. Global pandas options stay as they are."""
    options = {name: pd.get_option(name) for name in ("display.max_colwidth", "display.max_columns")}
    good, _ = await _demo_flow()
    staging, _ = await _demo_flow(STAGING, plan="Platinum")
    cmp = pnb.compare(good, staging)
    origin = cmp.steps["before_origin_b"].dropna().iloc[0]
    widest = max(cmp.steps["differences"], key=len)
    assert STAGING in origin and len(origin) > 50 and len(widest) > 50
    assert len(cmp.steps.columns) > 20  # more than pandas' notebook default of 20 shows
    for table in (cmp.steps, cmp.differences):
        html, text = table._repr_html_(), repr(table)
        assert re.findall(r"<th style=[^>]*>(.*?)</th>", html.replace("<wbr>", "")) == list(cmp.steps.columns)
        assert all(name in text for name in cmp.steps.columns)  # the text repr hides none either
        assert cell(origin) in html and cell(widest) in html and origin in text and widest in text
        assert type(table[table["status"] == "changed"]) is pd.DataFrame  # computing gives plain pandas
    assert (
        options == {name: pd.get_option(name) for name in options} and options["display.max_colwidth"] == 50
    )
    agreeing = pnb.compare(good, good).differences
    assert agreeing.empty and "0 rows" in agreeing._repr_html_()


async def test_the_suite_collects_every_export_the_dispatcher_answers_for_its_final_audit(
    dispatcher_exports: ExportAudit,
) -> None:
    """tests/conftest.py audits these (in batches, and the rest when the run ends): this checks
    that they really are collected."""
    export, closed = await _demo_flow()
    texts = [json.loads(text) for text in dispatcher_exports.recent]
    assert export in texts and closed in texts
