"""``ReplayPlan`` and ``explain``: a replay_validate answer read as a plain-words checklist.

The checks, their order and their codes are the contract's (``plasmate_nb.trace.constants``,
docs/contract.md#replay-validation). What this module adds is words: what each check asks,
what its failure means and what to do about it, in one table (``_WORDS``) that the
checklist, the plan's summary, ``DRIFT_EXPLANATIONS`` and ``explain`` all read.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

from .. import errors
from .._tracebacks import HintedError
from ..client.base import ToolError
from ..errors import REPLAY_NOT_EXECUTED_PREFIX
from ..trace.constants import (
    DRIFT_CODES,
    DRIFT_EVENT_NOT_RETAINED,
    DRIFT_MESSAGES,
    EXECUTION_REFUSAL_MESSAGES,
    MESSAGE_CONFIRMATION_REQUIRED,
    STATUS_CONFIRMATION_REQUIRED,
    STATUS_REFUSED,
    STATUS_VALIDATED,
)
from ._html import box, cell, table
from ._tables import frame_html

if TYPE_CHECKING:
    import pandas as pd

    from .page import Page


class _Words(NamedTuple):
    check: str  # what the check asks, as a statement that holds when it passes
    failed: str  # the same statement when it fails
    meaning: str  # what the failure means
    what_to_do: str


CONFIRMATION = "confirmation"
_WORDS: dict[str, _Words] = {
    "cross_session": _Words(
        "the trace belongs to this browser session",
        "the trace belongs to another browser session",
        "The trace_id comes from another session (or was mistyped): a trace only validates in the "
        "session that recorded it.",
        "Validate in the session that recorded the trace (its Session, or pnb.attach(session_id)); "
        "compare s.trace_id with the export's trace_id.",
    ),
    "event_not_retained": _Words(
        "the recorded event is still retained",
        "no retained event has this sequence",
        "The event never existed, was evicted by the 128-event / 48 KiB bounds, was oversized, "
        "or was cleared.",
        "Pick a sequence from s.trace.events(). To keep events, export the trace "
        "(s.trace.export().to_json(...)) before the bounds evict them or a clear removes them.",
    ),
    "unsupported_action": _Words(
        "the action is one that can be replayed",
        "this kind of action is never replayed",
        "Session lifecycle and coarse actions (open_page, close_page, evaluate, set_cookies, "
        "clear_cookies) are never replay candidates.",
        "Nothing to fix: validate a page action instead (click, type_text, select_option, toggle, "
        "clear, scroll or navigate_to).",
    ),
    "origin_drift": _Words(
        "the page is on the same site (scheme, host, port) as before the action",
        "the page is on another site than before the action",
        "The page is now on a different scheme, host or port than before the recorded action.",
        "Navigate back to the page the action started from (s.navigate(url)), then validate again.",
    ),
    "page_drift": _Words(
        "the page is at the same address (path, query, fragment) as before the action",
        "the page is at another address than before the action",
        "Same origin, but the URL (path, query or fragment) differs from the one before the recorded "
        "action. Only keyed fingerprints are stored, so the differing part cannot be shown.",
        "Navigate back to the page the action started from, then validate again. An action that "
        "navigated itself (a link click) is always refused afterwards: its page is gone.",
    ),
    "target_missing": _Words(
        "the element the action used is on the page",
        "the element the action used is not on the page",
        "The element the action targeted is no longer on the page (matched by its keyed stable key "
        "and role).",
        "Bring back the page state that shows the element (navigate to it again, undo what removed "
        "it), then validate again.",
    ),
    "target_ambiguous": _Words(
        "exactly one element on the page matches it",
        "several elements on the page match the one the action used",
        "More than one element on the current page matches the recorded target, so it cannot be "
        "bound to one element.",
        "It cannot be replayed exactly on this page; restore the page the action ran on (one such "
        "element) and validate again.",
    ),
    "action_unavailable": _Words(
        "that element still offers the action",
        "that element no longer offers the action",
        "The element is there but no longer offers the recorded action (e.g. it became disabled "
        "or changed kind).",
        "Restore the state in which the element offered the action (e.g. whatever disabled it), "
        "then validate again.",
    ),
    "state_drift": _Words(
        "the page's state is the same as before the action",
        "the page's state changed since before the action",
        "The page's semantic state (its whole SOM) differs from the state before the recorded "
        "action. Only keyed hashes of the state exist, so what changed cannot be shown — compare "
        "the pages yourself.",
        "Undo what changed since the action (typing or toggling changes the page itself, so such an "
        "action is refused right after it ran), then validate again.",
    ),
    "value_length_mismatch": _Words(
        "the value you supplied has the recorded byte length",
        "the value you supplied does not have the recorded byte length",
        "The trace kept only the byte length of the typed text or selected value; the value given "
        "to replay (or its absence) does not match it, so the replay would not be the same action.",
        "Pass value= with exactly the recorded number of UTF-8 bytes (the event's parameters show "
        "byte_length); actions other than type_text, select_option and navigate_to take no value.",
    ),
    "url_mismatch": _Words(
        "the URL you supplied is the one the navigation used",
        "the URL you supplied is not the one the navigation used",
        "The trace kept only a keyed fingerprint of the navigation's URL; the URL given to replay "
        "(or its absence) has another fingerprint.",
        "Pass value= with the exact URL the recorded navigate_to used.",
    ),
    CONFIRMATION: _Words(
        "you confirmed the replay (confirmed=True)",
        "not confirmed yet",
        "Every check passed: the action could be replayed exactly now; the contract still asks for "
        "explicit confirmation.",
        "After reviewing the plan, call s.replay_validate(sequence, confirmed=True). Nothing is "
        "executed either way.",
    ),
}

#: Every check in the contract's order (first failure wins): its code and what it asks, in words.
CHECKS: tuple[tuple[str, str], ...] = tuple(
    (code, _WORDS[code].check) for code in (*DRIFT_CODES, CONFIRMATION)
)
TARGET_CHECKS = frozenset({"target_missing", "target_ambiguous", "action_unavailable"})


#: Drift code -> what the refusal means, in words (``explain(code)`` adds what to do).
DRIFT_EXPLANATIONS: dict[str, str] = {code: _WORDS[code].meaning for code in DRIFT_CODES}
#: replay_execute's own check after validation (docs/contract.md#supervised-replay-execution).
VALUE_CHECK = ("value", "the value you supplied matches what the trace kept of it")


def _contract_numbers() -> dict[str, str]:
    """Each check's number in docs/contract.md#replay-validation: the target checks are 6a-6c."""
    numbers: dict[str, str] = {}
    number, letters = 0, iter("abc")
    for code, _ in CHECKS:
        if code in TARGET_CHECKS:
            letter = next(letters)
            number += letter == "a"
            numbers[code] = f"{number}{letter}"
        else:
            number += 1
            numbers[code] = str(number)
    return numbers


#: Check code -> its number as the contract writes it ("6a"); replay_execute's value check is "+".
CHECK_NUMBERS: dict[str, str] = {**_contract_numbers(), VALUE_CHECK[0]: "+"}

PASSED, FAILED, NOT_REACHED, SKIPPED = "passed", "failed here", "not reached", "skipped (no recorded target)"
_RESULT_WORDS = {
    PASSED: "✔ yes",
    FAILED: "✘ no",
    NOT_REACHED: "· not checked (an earlier check failed)",
    SKIPPED: "– not needed (the action has no target element)",
}


@dataclass(frozen=True, repr=False)
class Explanation:
    """What a replay code means and what to do, from ``explain(code)``; prints as plain text.

    >>> pnb.explain("state_drift").what_to_do
    """

    code: str
    status: str
    check: str  # what the check asks
    result: str  # what was found instead
    meaning: str
    what_to_do: str
    message: str  # the server's message for this code (the contract's wording)

    def __str__(self) -> str:
        return (
            f"{self.code} ({self.status}): {self.result}.\n{self.meaning}\nWhat to do: {self.what_to_do}\n"
            f"(checked: {self.check}; server message: {self.message})"
        )

    __repr__ = __str__

    def _repr_html_(self) -> str:
        body = (
            f"<p><b>{cell(self.result[:1].upper() + self.result[1:])}.</b> {cell(self.meaning)}</p>"
            f"<p><b>What to do:</b> {cell(self.what_to_do)}</p>"
            f"<div style='opacity:.7'>status {cell(self.status)} · checked: {cell(self.check)} · "
            f"server message: {cell(self.message)}</div>"
        )
        return box(f"Replay code {self.code}", body)


class UnknownReplayCode(HintedError, ValueError):
    """``explain`` was given a code it does not know; the message lists those it does.

    >>> pnb.explain(plan.drift)   # a code a plan gives
    """


def explain(code: str) -> Explanation:
    """What a replay drift code (or ``confirmation_required``) means, in plain words, and what to do.

    Codes are those of ``ReplayPlan.drift`` and the ``drift`` column of ``replay_validate_all()``.

    >>> pnb.explain("page_drift")          # shows meaning and what to do
    >>> print(pnb.explain(plan.drift))
    """
    if code in DRIFT_MESSAGES:
        words, status, message = _WORDS[code], STATUS_REFUSED, DRIFT_MESSAGES[code]
    elif code in EXECUTION_REFUSAL_MESSAGES:
        words, status, message = _WORDS[code], STATUS_REFUSED, EXECUTION_REFUSAL_MESSAGES[code]
    elif code in (STATUS_CONFIRMATION_REQUIRED, CONFIRMATION):
        words, status, message = (
            _WORDS[CONFIRMATION],
            STATUS_CONFIRMATION_REQUIRED,
            MESSAGE_CONFIRMATION_REQUIRED,
        )
        code = STATUS_CONFIRMATION_REQUIRED
    else:
        known = (*DRIFT_CODES, *EXECUTION_REFUSAL_MESSAGES, STATUS_CONFIRMATION_REQUIRED)
        raise UnknownReplayCode(errors.unknown_replay_code(code, known)).with_hint(errors.EXPLAIN_HINT)
    return Explanation(code, status, words.check, words.failed, words.meaning, words.what_to_do, message)


class Check(NamedTuple):
    """One replay check as a ``ReplayPlan`` shows it: its code ``name``, ``state`` and ``meaning`` in words.

    >>> [(check.name, check.state) for check in plan.checks]
    """

    name: str
    state: str
    meaning: str


def checklist(payload: dict[str, Any]) -> list[Check]:
    """Every check in order, marked passed / failed here / not reached / skipped."""
    status, drift = payload.get("status"), payload.get("drift")
    no_target = status != STATUS_REFUSED and payload.get("target") is None
    failing = (
        drift
        if status == STATUS_REFUSED
        else (CONFIRMATION if status == STATUS_CONFIRMATION_REQUIRED else None)
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
    if drift in EXECUTION_REFUSAL_MESSAGES:  # replay_execute's value check, after every other one
        result.append(Check(VALUE_CHECK[0], FAILED, VALUE_CHECK[1]))
    return result


class ReplayPlan:
    """What ``replay_validate`` answered, as a checklist in the contract's order. Nothing was executed.

    ``status`` is ``refused``, ``confirmation_required`` or ``validated``; ``drift`` is the code
    of the first failing check; ``summary`` says the outcome in a sentence, ``explanation``
    what it means and ``what_to_do`` the next step; ``checks`` lists every check with its
    result; ``action`` names the recorded action (a refusal's payload omits it, the session
    looks it up in the trace); ``execution_available`` is false unless the server's operator
    enabled ``replay_execute`` (then ``Session.replay`` runs a confirmed, validated plan). An
    ``event_not_retained`` refusal has no event to check: it shows no checklist, and its summary
    names the sequences the trace retains (``retained``, looked up in the trace), e.g.
    ``retained: 1–7``.

    >>> plan = s.replay_validate(2)
    >>> plan.summary, plan.what_to_do
    """

    def __init__(
        self, payload: dict[str, Any], action: str | None = None, retained: Iterable[int] | None = None
    ) -> None:
        self.payload = payload
        self.status: str = payload["status"]
        self.drift: str | None = payload.get("drift")
        self.message: str = payload["message"]
        self.sequence: int = payload["sequence"]
        self.action: str | None = payload.get("action") or action
        self.execution_available: bool = payload["execution_available"]
        self.checks = checklist(payload)
        #: For an ``event_not_retained`` refusal, the sequences the trace retained then (the
        #: session looks them up in the trace; the answer does not carry them); else None.
        self.retained: tuple[int, ...] | None = tuple(sorted(retained)) if retained is not None else None

    @property
    def _not_retained(self) -> bool:
        """An ``event_not_retained`` refusal: there is no event, so no check after it means anything."""
        return self.status == STATUS_REFUSED and self.drift == DRIFT_EVENT_NOT_RETAINED

    @property
    def _words(self) -> _Words | None:
        code = self.drift or (CONFIRMATION if self.status == STATUS_CONFIRMATION_REQUIRED else None)
        return _WORDS.get(code) if code else None

    @property
    def summary(self) -> str:
        """The outcome in one sentence (what failed, or that every check passed).

        >>> s.replay_validate(2).summary   # e.g. "Refused: the page's state changed since before the action."
        """
        if self.status == STATUS_VALIDATED:
            return "Could be replayed exactly now, and confirmed. This is a plan only: nothing was executed."
        if self.status == STATUS_CONFIRMATION_REQUIRED:
            return "Could be replayed exactly now: every check passed. Confirm with confirmed=True (nothing is executed)."
        if self._not_retained:
            return f"Refused: event {self.sequence} is not retained{_retained_words(self.retained)}."
        words = self._words
        return f"Refused: {words.failed if words else f'unknown drift code {self.drift!r}'}."

    @property
    def explanation(self) -> str:
        """What the outcome means, in words (for a drift: what changed and what cannot be shown).

        >>> print(s.replay_validate(2).explanation)
        """
        if self.status == STATUS_VALIDATED and self.execution_available:
            return (
                "Every check passed and the replay was confirmed. This server can execute replays: "
                "s.replay(sequence, confirmed=True) runs the checks again and executes in one step."
            )
        if self.status == STATUS_VALIDATED:
            return (
                "Every check passed and the replay was confirmed. Replay execution is not available "
                "(execution_available is false): the plan shows what would run, with the recorded "
                "sanitised parameters."
            )
        words = self._words
        return words.meaning if words else "Unknown drift code."

    @property
    def what_to_do(self) -> str:
        """The next step for this outcome (``pnb.explain(plan.drift)`` says the same for a code).

        >>> print(s.replay_validate(2).what_to_do)
        """
        if self.status == STATUS_VALIDATED and self.execution_available:
            return (
                f"To execute it: s.replay({self.sequence}, confirmed=True) (typed text, selected values "
                "and navigation URLs were never kept: pass value=)."
            )
        if self.status == STATUS_VALIDATED:
            return "Nothing: this is as far as validation goes; nothing will be executed."
        words = self._words
        return words.what_to_do if words else "Check the server speaks the plasmate.trace.v1 contract."

    def _title(self) -> str:
        if self._not_retained:  # the summary says it, once
            return f"Replay plan for event {self.sequence}"
        return f"Replay plan for event {self.sequence} ({self.action or 'action not known'})"

    def _repr_html_(self) -> str:
        rows = [
            (CHECK_NUMBERS.get(c.name, ""), c.meaning, _RESULT_WORDS[c.state], c.name) for c in self.checks
        ]
        body = (
            f"<div>status <b>{cell(self.status)}</b> · drift <b>{cell(self.drift or 'none')}</b></div>"
            f"<p><b>{cell(self.summary)}</b></p><p>{cell(self.explanation)}</p>"
            f"<p><b>What to do:</b> {cell(self.what_to_do)}</p>"
            + ("" if self._not_retained else table(("#", "check", "result", "code"), rows))
            + f"<div>execution_available: <b>{str(self.execution_available).lower()}</b> — validation only; "
            "nothing was executed.</div>"
        )
        return box(self._title(), body)

    def __repr__(self) -> str:
        lines = [
            f"ReplayPlan(sequence={self.sequence}, action={self.action!r}, status={self.status!r}, "
            f"drift={self.drift!r})",
            f"  {self.summary}",
        ]
        if not self._not_retained:  # no event: the checks after the first two never ran
            width = max(len(c.meaning) for c in self.checks)
            lines += [
                f"  {CHECK_NUMBERS.get(c.name, ''):>2}. {c.meaning:<{width}}  {_RESULT_WORDS[c.state]}"
                for c in self.checks
            ]
        lines += [f"  {self.explanation}", f"  What to do: {self.what_to_do}"]
        lines.append(
            f"  execution_available: {str(self.execution_available).lower()} (validation only; nothing was executed)"
        )
        return "\n".join(lines)


#: A refusal lists at most this many runs of retained sequences (the first and last ones).
MAX_SHOWN_RUNS = 6


def _runs(sequences: tuple[int, ...]) -> list[str]:
    """``1–3``, ``5``, ``7–9``: the runs of consecutive sequences (sorted, distinct)."""
    runs: list[list[int]] = []
    for sequence in sequences:
        if runs and sequence == runs[-1][1] + 1:
            runs[-1][1] = sequence
        else:
            runs.append([sequence, sequence])
    return [str(first) if first == last else f"{first}–{last}" for first, last in runs]


def _retained_words(retained: tuple[int, ...] | None) -> str:
    """`` (retained: 1–3, 5)`` for a refusal's summary; nothing when they are not known."""
    if retained is None:
        return ""
    if not retained:
        return " (no event is)"
    runs = _runs(retained)
    if len(runs) <= MAX_SHOWN_RUNS:
        return f" (retained: {', '.join(runs)})"
    shown = [*runs[: MAX_SHOWN_RUNS // 2], "…", *runs[-(MAX_SHOWN_RUNS // 2 - 1) :]]
    return f" (retained: {', '.join(shown)}; {len(retained)} events)"


class ReplayRefused(ToolError):
    """``s.replay`` executed nothing: ``plan`` (a ``ReplayPlan``) says which check refused and why.

    >>> try:
    ...     s.replay(2, confirmed=True)
    ... except pnb.ReplayRefused as refused:
    ...     refused.plan              # the checklist; refused.plan.what_to_do says the next step
    """

    def __init__(self, plan: ReplayPlan) -> None:
        super().__init__("replay_execute", REPLAY_NOT_EXECUTED_PREFIX + plan.summary)
        self.plan = plan
        self.with_hint(plan.what_to_do)


class ReplayResult:
    """What ``s.replay`` did, with the pages before and after.

    ``before`` and ``page`` are the pages before and after, ``replayed_sequence`` the event it
    replayed and ``sequence`` the new event of the execution.

    >>> done = s.replay(2, confirmed=True)
    >>> done.sequence, done.page.title
    >>> done.changes()             # what the execution changed on the page
    """

    def __init__(self, before: Page | None, page: Page, replayed_sequence: int, sequence: int) -> None:
        self.before = before
        self.page = page
        self.replayed_sequence = replayed_sequence
        self.sequence = sequence

    def changes(self) -> pd.DataFrame:
        """Elements the execution added, removed or changed (``page.changes()``).

        >>> s.replay(4, confirmed=True).changes()
        """
        return self.page.changes()

    def __repr__(self) -> str:
        return (
            f"ReplayResult(replayed_sequence={self.replayed_sequence}, sequence={self.sequence}, "
            f"title={self.page.title!r})"
        )

    def _repr_html_(self) -> str:
        changes = self.changes()
        body = (
            f"<p>Event {self.replayed_sequence} was executed again as event {self.sequence}; the page "
            f"is now <b>{cell(self.page.title or '')}</b>.</p>"
            + (frame_html(changes) if len(changes) else "<i>nothing on the page changed</i>")
        )
        return box(f"Replayed event {self.replayed_sequence}", body)
