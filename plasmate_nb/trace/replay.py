"""``replay_validate``'s decision (docs/contract.md#replay-validation): first failing check wins.

1. ``trace_id`` is not this session's → ``cross_session``
2. no retained event with that ``sequence`` → ``event_not_retained``
3. lifecycle / coarse action → ``unsupported_action``
4. current origin ≠ recorded ``before.origin`` (null equals null) → ``origin_drift``
5. current URL fingerprint ≠ recorded one → ``page_drift``
6. the event has a target: no live element with equal stable key and role →
   ``target_missing``; several → ``target_ambiguous``; the one match lacks the action →
   ``action_unavailable``
7. current state fingerprint ≠ recorded ``before.fingerprint`` → ``state_drift``
8. not ``confirmed`` → ``confirmation_required``; otherwise ``validated``.

Nothing is ever executed: ``execution_available`` and ``side_effects`` are always false.
Payload keys are sorted (serde ``json!``), nested objects too. A refusal carries no
``session_id``, ``action`` or ``target``. The event's outcome is not checked.

``replay_execute`` (our opt-in extension, docs/contract.md#supervised-replay-execution) runs
the same decision, then two checks of its own on a validated plan (:func:`supplied_value_refusal`),
and re-executes with :func:`execution_arguments`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from .arguments import ReplayRequest
from .compact import sorted_json, utf8_len
from .constants import (
    ALWAYS_SUPPORTED_ACTIONS,
    DRIFT_ACTION_UNAVAILABLE,
    DRIFT_CROSS_SESSION,
    DRIFT_EVENT_NOT_RETAINED,
    DRIFT_MESSAGES,
    DRIFT_ORIGIN,
    DRIFT_PAGE,
    DRIFT_STATE,
    DRIFT_TARGET_AMBIGUOUS,
    DRIFT_TARGET_MISSING,
    DRIFT_UNSUPPORTED_ACTION,
    EXECUTION,
    EXECUTION_REFUSAL_MESSAGES,
    MESSAGE_CONFIRMATION_REQUIRED,
    MESSAGE_VALIDATED,
    REFUSAL_URL_MISMATCH,
    REFUSAL_VALUE_LENGTH_MISMATCH,
    REQUIRED_ELEMENT_ACTION,
    SCHEMA,
    STATUS_CONFIRMATION_REQUIRED,
    STATUS_REFUSED,
    STATUS_VALIDATED,
    SUPPLIED_VALUE_ARGUMENT,
    UNSUPPORTED_REPLAY_ACTIONS,
)

# (live element, its target object re-derived under the session key)
LiveMatch = tuple[Mapping[str, Any], dict[str, Any]]


def decide(
    request: ReplayRequest,
    *,
    trace_id: str,
    event: Mapping[str, Any] | None,
    current: Mapping[str, Any],
    live_matches: Callable[[Mapping[str, Any]], list[LiveMatch]],
) -> dict[str, Any]:
    """The replay_validate payload for ``request`` against one retained ``event``.

    ``event`` is the retained event with ``request.sequence`` (``None`` if there is none),
    ``current`` the session's page state now (``TraceLog.state``), and ``live_matches``
    returns the current SOM elements whose stable key and role equal a recorded target's.
    """
    if request.trace_id != trace_id:
        return _refusal(request, DRIFT_CROSS_SESSION)
    if event is None:
        return _refusal(request, DRIFT_EVENT_NOT_RETAINED)
    action = event.get("action")
    if action in UNSUPPORTED_REPLAY_ACTIONS:
        return _refusal(request, DRIFT_UNSUPPORTED_ACTION)
    before = event.get("before") or {}
    if current.get("origin") != before.get("origin"):
        return _refusal(request, DRIFT_ORIGIN)
    if current.get("url_fingerprint") != before.get("url_fingerprint"):
        return _refusal(request, DRIFT_PAGE)
    recorded_target = event.get("target")
    live_target: dict[str, Any] | None = None
    if recorded_target is not None:
        matches = live_matches(recorded_target)
        if not matches:
            return _refusal(request, DRIFT_TARGET_MISSING)
        if len(matches) > 1:
            return _refusal(request, DRIFT_TARGET_AMBIGUOUS)
        element, live_target = matches[0]
        if not supports(element, action):
            return _refusal(request, DRIFT_ACTION_UNAVAILABLE)
    if current.get("fingerprint") != before.get("fingerprint"):
        return _refusal(request, DRIFT_STATE)
    payload: dict[str, Any] = {
        "action": action,
        "drift": None,
        "execution": EXECUTION,
        "execution_available": False,
        "schema": SCHEMA,
        "sequence": request.sequence,
        "session_id": request.session_id,
        "side_effects": False,
        "target": live_target,
        "trace_id": request.trace_id,
    }
    if request.confirmed:
        payload["status"] = STATUS_VALIDATED
        payload["message"] = MESSAGE_VALIDATED
        payload["parameters"] = event.get("parameters", {})
    else:
        payload["status"] = STATUS_CONFIRMATION_REQUIRED
        payload["message"] = MESSAGE_CONFIRMATION_REQUIRED
    validated: dict[str, Any] = sorted_json(payload)
    return validated


def supports(element: Mapping[str, Any], action: Any) -> bool:
    """Whether a live SOM ``element`` exposes what the recorded ``action`` needs (check 6c)."""
    if action in ALWAYS_SUPPORTED_ACTIONS:
        return True
    required = REQUIRED_ELEMENT_ACTION.get(action) if isinstance(action, str) else None
    actions = element.get("actions")
    return required is not None and isinstance(actions, list) and required in actions


def supplied_value_refusal(
    action: str,
    parameters: Mapping[str, Any],
    value: str | None,
    url_fingerprint: Callable[[str], str | None],
) -> str | None:
    """replay_execute's own check of the caller's ``value`` against a validated event's
    ``parameters``: the refusal code, or ``None`` when it may run.

    Typed text and selected values must have the recorded UTF-8 byte length; a navigation's URL
    must have the recorded keyed fingerprint; every other action takes no value.
    """
    argument = SUPPLIED_VALUE_ARGUMENT.get(action)
    if action == "navigate_to":
        recorded = parameters.get("url_fingerprint")
        matches = value is not None and recorded is not None and url_fingerprint(value) == recorded
        return None if matches else REFUSAL_URL_MISMATCH
    if argument is None:
        return None if value is None else REFUSAL_VALUE_LENGTH_MISMATCH
    kept = parameters.get("value")
    length = kept.get("byte_length") if isinstance(kept, Mapping) else None
    return None if value is not None and utf8_len(value) == length else REFUSAL_VALUE_LENGTH_MISMATCH


def execution_arguments(
    action: str, parameters: Mapping[str, Any], session_id: str, element_id: str | None, value: str | None
) -> dict[str, Any]:
    """The tool arguments that re-execute a validated event: its live element, its sanitised
    parameters (scroll direction and pixels, ``append``) and the caller's checked ``value``."""
    arguments: dict[str, Any] = {"session_id": session_id}
    if element_id is not None:
        arguments["element_id"] = element_id
    if action == "scroll":
        arguments["direction"] = parameters.get("direction")
        arguments["pixels"] = parameters.get("pixels")
    if action == "type_text":
        arguments["append"] = parameters.get("append") is True
    argument = SUPPLIED_VALUE_ARGUMENT.get(action)
    if argument is not None:
        arguments[argument] = value
    return arguments


def execution_refusal(request: ReplayRequest, code: str) -> dict[str, Any]:
    """A refusal by one of replay_execute's own checks, shaped like replay_validate's (a drift
    code, such as ``state_drift`` for a live page that changed itself, keeps its message)."""
    return _refusal(request, code, EXECUTION_REFUSAL_MESSAGES.get(code))


def _refusal(request: ReplayRequest, drift: str, message: str | None = None) -> dict[str, Any]:
    return {
        "drift": drift,
        "execution": EXECUTION,
        "execution_available": False,
        "message": message or DRIFT_MESSAGES[drift],
        "schema": SCHEMA,
        "sequence": request.sequence,
        "side_effects": False,
        "status": STATUS_REFUSED,
        "trace_id": request.trace_id,
    }
