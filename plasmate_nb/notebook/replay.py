"""``ReplayPlan``: a replay_validate payload shown as the reference's checklist, in order."""

from __future__ import annotations

from typing import Any, NamedTuple

from ._html import box, cell, table

#: The reference's validation order (first failure wins), with what each check means.
CHECKS: tuple[tuple[str, str], ...] = (
    ("cross_session", "the trace_id belongs to this browser session"),
    ("event_not_retained", "an event with this sequence is still retained (not absent, evicted or cleared)"),
    (
        "unsupported_action",
        "the action is a replay candidate (not open_page, close_page, evaluate or a cookie tool)",
    ),
    ("origin_drift", "the page's current origin equals the recorded pre-action origin"),
    (
        "page_drift",
        "the current keyed URL fingerprint equals the recorded pre-action one (same path, query, fragment)",
    ),
    ("target_missing", "an element with the recorded target's stable key and role is on the current page"),
    ("target_ambiguous", "exactly one current element matches the recorded target"),
    ("action_unavailable", "the matched element still exposes the recorded action"),
    ("state_drift", "the current semantic state fingerprint equals the recorded pre-action state"),
    ("confirmation", "the caller confirmed the replay explicitly (confirmed=True)"),
)
TARGET_CHECKS = frozenset({"target_missing", "target_ambiguous", "action_unavailable"})

#: Drift code -> what the refusal means, in words.
DRIFT_EXPLANATIONS: dict[str, str] = {
    "cross_session": "The trace_id comes from another session (or was mistyped): a trace only validates in the "
    "session that recorded it.",
    "event_not_retained": "No retained event has this sequence: it never existed, was evicted by the 128-event / "
    "48 KiB bounds, was oversized, or was cleared.",
    "unsupported_action": "Session lifecycle and coarse actions (open_page, close_page, evaluate, set_cookies, "
    "clear_cookies) are never replay candidates.",
    "origin_drift": "The page is now on a different scheme, host or port than before the recorded action.",
    "page_drift": "Same origin, but the URL (path, query or fragment) differs from the one before the recorded "
    "action. Only keyed fingerprints are stored, so the differing part cannot be shown.",
    "target_missing": "The element the action targeted is no longer on the page (matched by its keyed stable key "
    "and role).",
    "target_ambiguous": "More than one element on the current page matches the recorded target, so it cannot be "
    "bound to one element.",
    "action_unavailable": "The element is there but no longer offers the recorded action (e.g. it became disabled "
    "or changed kind).",
    "state_drift": "The page's semantic state (its whole SOM) differs from the state before the recorded action. "
    "Only keyed hashes of the state exist, so what changed cannot be shown — compare the pages yourself.",
}

PASSED, FAILED, NOT_REACHED, SKIPPED = "passed", "failed here", "not reached", "skipped (no recorded target)"


class Check(NamedTuple):
    """One replay check as a ``ReplayPlan`` shows it: its ``name``, ``state`` and ``meaning``.

    >>> [(check.name, check.state) for check in plan.checks]
    """

    name: str
    state: str
    meaning: str


def checklist(payload: dict[str, Any]) -> list[Check]:
    """Every check in order, marked passed / failed here / not reached."""
    status, drift = payload.get("status"), payload.get("drift")
    no_target = status != "refused" and payload.get("target") is None
    failing = (
        drift if status == "refused" else ("confirmation" if status == "confirmation_required" else None)
    )
    result: list[Check] = []
    reached_failure = False
    for name, meaning in CHECKS:
        if reached_failure:
            state = NOT_REACHED
        elif name == failing:
            state, reached_failure = FAILED, True
        elif no_target and name in TARGET_CHECKS:
            state = SKIPPED
        else:
            state = PASSED
        result.append(Check(name, state, meaning))
    return result


class ReplayPlan:
    """What ``replay_validate`` answered, as the contract's ordered checklist. Nothing was executed.

    ``status`` is ``refused``, ``confirmation_required`` or ``validated``; ``drift`` names the
    first failing check; ``checks`` lists every check as passed / failed here / not reached;
    ``execution_available`` is always false.

    >>> plan = s.replay_validate(2)
    >>> plan.status, plan.drift, plan.explanation
    """

    def __init__(self, payload: dict[str, Any]) -> None:
        self.payload = payload
        self.status: str = payload["status"]
        self.drift: str | None = payload.get("drift")
        self.message: str = payload["message"]
        self.sequence: int = payload["sequence"]
        self.execution_available: bool = payload["execution_available"]
        self.checks = checklist(payload)

    @property
    def explanation(self) -> str:
        """What the outcome means, in words (for a drift: what changed and what cannot be shown).

        >>> print(s.replay_validate(2).explanation)
        """
        if self.drift:
            return DRIFT_EXPLANATIONS.get(self.drift, "Unknown drift code.")
        if self.status == "confirmation_required":
            return "Exact validation passed; call again with confirmed=True after independent approval."
        return "Validation and confirmation passed. This is a side-effect-free plan; nothing is executed."

    def _repr_html_(self) -> str:
        marks = {PASSED: "✔", FAILED: "✘", NOT_REACHED: "·", SKIPPED: "–"}
        rows = [(i, marks[c.state] + " " + c.state, c.name, c.meaning) for i, c in enumerate(self.checks, 1)]
        body = (
            f"<div>status <b>{cell(self.status)}</b> · drift <b>{cell(self.drift or '—')}</b> · "
            f"action {cell(self.payload.get('action', '—'))}</div>"
            f"<div>{cell(self.message)}</div><div><i>{cell(self.explanation)}</i></div>"
            + table(("#", "result", "check", "what it checks"), rows)
            + f"<div>execution_available: <b>{str(self.execution_available).lower()}</b> — validation only; "
            "nothing was executed.</div>"
        )
        return box(f"Replay plan for event {self.sequence}", body)

    def __repr__(self) -> str:
        lines = [
            f"ReplayPlan(sequence={self.sequence}, status={self.status!r}, drift={self.drift!r})",
            f"  {self.message}",
        ]
        lines += [f"  {i:>2}. {c.state:<28} {c.name}" for i, c in enumerate(self.checks, 1)]
        lines.append(f"  {self.explanation}")
        lines.append(
            f"  execution_available: {str(self.execution_available).lower()} (validation only; nothing was executed)"
        )
        return "\n".join(lines)
