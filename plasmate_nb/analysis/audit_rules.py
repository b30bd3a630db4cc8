"""The audit's rules: one id per promise of the contract, the section that makes it, and why it matters.

The checks live in :mod:`plasmate_nb.analysis.audit_checks`; this table is what a finding points to, what
``plasmate-nb audit`` prints and what the docs list. Sections are docs/contract.md anchors.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Rule:
    """One contract promise an export must keep.

    >>> RULES_BY_ID["counter-invariant"].section
    'docs/contract.md#bounds'
    """

    id: str
    group: str
    section: str
    why: str


RULES: tuple[Rule, ...] = (
    # -- structure -------------------------------------------------------------------------------
    Rule(
        "schema",
        "structure",
        "docs/contract.md#trace-envelopes",
        "A reader relies on every field being there with its JSON type; a missing or mistyped field "
        "breaks every tool that loads the trace.",
    ),
    Rule(
        "key-order",
        "structure",
        "docs/contract.md#scope-and-conventions",
        "Exports are compared byte for byte (two exports of an unchanged log are identical); a "
        "different key order makes equal traces look different.",
    ),
    Rule(
        "fingerprint-format",
        "structure",
        "docs/contract.md#fingerprints",
        "A fingerprint must be a keyed HMAC with its prefix; anything else may be a readable value "
        "or an unkeyed digest someone can test guesses against.",
    ),
    Rule(
        "origin-format",
        "structure",
        "docs/contract.md#origins",
        "An origin is the only readable part of a URL a trace keeps; one not in canonical "
        "scheme://host:port form (port always written) may carry more, or fail to compare.",
    ),
    Rule(
        "handle-format",
        "structure",
        "docs/contract.md#trace-envelopes",
        "trace_id and session_id are random UUID v4 handles; any other text could identify a user "
        "or carry data, and replay_validate matches on trace_id.",
    ),
    Rule(
        "redaction-metadata",
        "structure",
        "docs/contract.md#sanitisation",
        "The redaction block tells a reader what was withheld; a wrong one misstates what the "
        "export may contain.",
    ),
    Rule(
        "parameters-shape",
        "structure",
        "docs/contract.md#sanitisation",
        "Each action keeps exactly the sanitised parameters the contract lists; an extra key is a "
        "place where a raw argument can leak.",
    ),
    # -- bounds and counters --------------------------------------------------------------------
    Rule(
        "retained-events",
        "bounds",
        "docs/contract.md#bounds",
        "retained_events must count the events and stay within the bound, or memory use and the "
        "counters a reader trusts are wrong.",
    ),
    Rule(
        "retained-bytes",
        "bounds",
        "docs/contract.md#bounds",
        "retained_bytes is the sum of the events' sizes and stays within the bound; a mismatch means "
        "events were altered or dropped after they were measured.",
    ),
    Rule(
        "event-size",
        "bounds",
        "docs/contract.md#bounds",
        "An event over the per-event bound should have been dropped as oversized; retaining it "
        "breaks the memory promise.",
    ),
    Rule(
        "string-size",
        "bounds",
        "docs/contract.md#bounds",
        "Retained free text is cut to a fixed number of bytes so that a caller cannot smuggle a "
        "large value into the trace.",
    ),
    Rule(
        "counter-invariant",
        "bounds",
        "docs/contract.md#bounds",
        "Every sequence is accounted for exactly once (retained, evicted, oversized or cleared); "
        "otherwise events went missing without a trace.",
    ),
    Rule(
        "sequence-order",
        "bounds",
        "docs/contract.md#bounds",
        "Sequences are execution order, strictly increasing and below next_sequence; anything else "
        "means events were reordered, duplicated or invented.",
    ),
    Rule(
        "first-sequence",
        "bounds",
        "docs/contract.md#bounds",
        "Eviction and clearing remove the oldest events, so the first retained sequence must come "
        "after every evicted and cleared one; otherwise the counters do not describe these events.",
    ),
    Rule(
        "final-trace-ceiling",
        "bounds",
        "docs/contract.md#trace-envelopes",
        "A final trace larger than the response ceiling must be replaced by the omitted marker; a "
        "larger one can be cut off by a client and read as a different trace.",
    ),
    # -- privacy ---------------------------------------------------------------------------------
    Rule(
        "readable-url",
        "privacy",
        "docs/contract.md#origins",
        "Paths, queries, fragments and user info carry ids, tokens and names; a trace keeps only "
        "origins and keyed URL fingerprints.",
    ),
    Rule(
        "redacted-value",
        "privacy",
        "docs/contract.md#sanitisation",
        "Typed text and selected values are secrets by default; only a redaction marker and the "
        "byte length may stand where they were.",
    ),
    Rule(
        "coarse-event",
        "privacy",
        "docs/contract.md#sanitisation",
        "evaluate and the cookie tools are traced coarsely: their source, result and cookies must "
        "never reach the trace, and they never name a target.",
    ),
    Rule(
        "secret-like",
        "privacy",
        "docs/contract.md#sanitisation",
        "A string shaped like an email, a token, a key or a card number in a trace is probably a "
        "leaked secret; the contract never writes one.",
    ),
    Rule(
        "digest-word",
        "privacy",
        "docs/contract.md#sanitisation",
        "The contract keeps no digest of a secret, and says the word sha256 never appears; its "
        "presence suggests an unkeyed hash someone can test guesses against.",
    ),
    # -- consistency -----------------------------------------------------------------------------
    Rule(
        "state-chain",
        "consistency",
        "docs/contract.md#how-a-call-becomes-an-event",
        "Calls on a session never interleave, so an event's before is the previous event's after; "
        "a break means something changed the page unrecorded, or the order is not execution order.",
    ),
    Rule(
        "outcome-error-class",
        "consistency",
        "docs/contract.md#the-classifier",
        "An error carries exactly one error class and a success none; otherwise failure statistics "
        "and replay decisions read the wrong outcome.",
    ),
    Rule(
        "lifecycle-states",
        "consistency",
        "docs/contract.md#page-states-and-targets",
        "open_page starts from the closed state and close_page ends in it, with one closed "
        "fingerprint per trace; anything else means states were mixed between sessions.",
    ),
    Rule(
        "unreadable",
        "input",
        "docs/contract.md#trace-envelopes",
        "An input that is not a plasmate.trace.v1 export (or a close_page answer carrying one) "
        "cannot be checked at all.",
    ),
)

RULES_BY_ID: dict[str, Rule] = {rule.id: rule for rule in RULES}
