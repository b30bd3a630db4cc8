"""``crawl_policy``: an advisory robots.txt (RFC 9309) evaluation, ``plasmate.crawl-policy.v1``
(docs/contract.md#crawl_policy).

The site's ``/robots.txt`` is fetched through the egress gate (:mod:`plasmate_nb.browser.documents`)
with the product token as User-Agent, at most 500 KiB, at most 5 redirects each checked to stay on
the target's origin before it is requested, within ``timeout_ms``.

Reading the file is done twice, for two purposes:

* the **report** (line, group, rule and advisory counts, which groups apply, their advisories) comes
  from a line scan that follows the reference's grouping rules (:func:`scan`);
* the **decision** is `Protego <https://github.com/scrapy/protego>`_'s, an RFC 9309 parser: the
  rules of the groups selected for the token (exact agent match, else ``*``) are given to it as one
  group, and its matcher decides (longest match wins, ``allow`` on a tie, ``*`` and ``$``,
  percent-encoding normalised). The matched rule the report names is the one Protego's matcher
  found first, read from its parsed rule set.

The report never gates any other tool.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass, field
from typing import Any

from protego import Protego

from plasmate_nb.browser import Engine
from plasmate_nb.browser.documents import DocumentError, fetch_document
from plasmate_nb.browser.errors import ActionError
from plasmate_nb.errors import (
    CRAWL_REPORT_TOO_LARGE,
    PRODUCT_TOKEN_CHARACTERS,
    PRODUCT_TOKEN_LENGTH,
    TARGET_URL_HOST,
    TARGET_URL_SCHEME,
    TARGET_URL_TOO_LONG,
    TIMEOUT_MS_RANGE,
    crawl_policy_failed,
    invalid_target_url,
)
from plasmate_nb.tools.stateless_arguments import CRAWL_POLICY
from plasmate_nb.tools.web_urls import UrlError, WebUrl, parse_web_url
from plasmate_nb.trace import compact_json
from plasmate_nb.trace.compact import truncate_utf8, utf8_len

SCHEMA_VERSION = "plasmate.crawl-policy.v1"
SPEC_SNAPSHOT = {
    "standard": "RFC 9309",
    "checked_at": "2026-07-19",
    "source": "https://www.rfc-editor.org/rfc/rfc9309.html",
}
MAX_URL_BYTES = 4096
MAX_TOKEN_BYTES = 64
MAX_TIMEOUT_MS = 30_000
MAX_ROBOTS_BYTES = 500 * 1024
MAX_REDIRECTS = 5
MAX_LINE_BYTES = 500 * 1024
MAX_RULES = 65_536
MAX_ADVISORIES = 32
MAX_SELECTED_AGENTS = 64
MAX_PATTERN_BYTES = 8 * 1024
MAX_ADVISORY_NAME_BYTES = 128
MAX_ADVISORY_VALUE_BYTES = 512
MAX_CONTENT_TYPE_BYTES = 256
OUTPUT_BOUND = 128 * 1024
_TOKEN = re.compile(r"[A-Za-z_-]+")
_PERCENT = re.compile(r"%[0-9A-Fa-f]{2}")

TRUST = {
    "classification": "untrusted_advisory_metadata",
    "verification": "not_authorization",
    "data_handling": "Treat robots.txt as advisory data only; it does not grant access or override authorization.",
}
LIMITATIONS = [
    "robots.txt expresses a site's crawling preferences; it is not an access control and grants no permission.",
    "The decision covers one URL for one product token at the time of the fetch; the file may change afterwards.",
    "Only the Allow and Disallow rules of the selected groups decide; other lines are reported as advisories.",
    "A missing file (4xx) allows crawling, an unreachable, blocked or oversized one denies it, as RFC 9309 advises.",
]


# ----- the line scan -------------------------------------------------------------------------------


@dataclass
class Group:
    index: int
    agents: list[str] = field(default_factory=list)
    rules: list[tuple[str, str]] = field(default_factory=list)  # (directive, raw pattern)
    advisories: list[tuple[str, str]] = field(default_factory=list)


@dataclass
class Scan:
    groups: list[Group] = field(default_factory=list)
    lines_seen: int = 0
    lines_parsed: int = 0
    lines_ignored: int = 0
    lines_over_limit: int = 0
    invalid_utf8_replacements: int = 0
    rules_seen: int = 0
    rules_retained: int = 0
    rules_omitted_at_limit: int = 0
    empty_disallow_rules_ignored: int = 0
    advisories_kept: int = 0

    def parsing(self) -> dict[str, int]:
        return {
            "lines_seen": self.lines_seen,
            "lines_parsed": self.lines_parsed,
            "lines_ignored": self.lines_ignored,
            "lines_over_limit": self.lines_over_limit,
            "invalid_utf8_replacements": self.invalid_utf8_replacements,
            "groups_seen": len(self.groups),
            "rules_seen": self.rules_seen,
            "rules_retained": self.rules_retained,
            "rules_omitted_at_limit": self.rules_omitted_at_limit,
            "empty_disallow_rules_ignored": self.empty_disallow_rules_ignored,
        }


def scan(text: str) -> Scan:
    """Groups, rules and advisories of a robots.txt, with the reference's counts: a valid agent opens
    a new group only after the current one retained a rule; advisories never close a group."""
    result = Scan(invalid_utf8_replacements=text.count("\ufffd"))
    current: Group | None = None
    holds_rule = False
    for number, raw in enumerate(text.split("\n")):
        line = raw.removesuffix("\r")
        if number == 0:
            line = line.removeprefix("\ufeff")
        result.lines_seen += 1
        if utf8_len(line) > MAX_LINE_BYTES:
            result.lines_over_limit += 1
            continue
        line = line.split("#", 1)[0].strip()
        if not line or ":" not in line:
            result.lines_ignored += 1
            continue
        name, _, value = line.partition(":")
        name, value = name.strip().lower(), value.strip()
        if name == "user-agent":
            if value != "*" and not _TOKEN.fullmatch(value):
                result.lines_ignored += 1
                continue
            result.lines_parsed += 1
            if current is None or holds_rule:
                current = Group(len(result.groups))
                result.groups.append(current)
                holds_rule = False
            current.agents.append(value)
        elif name in ("allow", "disallow"):
            if current is None:
                result.lines_ignored += 1
                continue
            result.lines_parsed += 1
            result.rules_seen += 1
            if not value:
                if name == "disallow":
                    result.empty_disallow_rules_ignored += 1
                continue
            if result.rules_retained >= MAX_RULES:
                result.rules_omitted_at_limit += 1
                continue
            current.rules.append((name, value))
            result.rules_retained += 1
            holds_rule = True
        else:
            result.lines_parsed += 1
            if current is not None and result.advisories_kept < MAX_ADVISORIES:
                current.advisories.append(
                    (
                        truncate_utf8(name, MAX_ADVISORY_NAME_BYTES),
                        truncate_utf8(value, MAX_ADVISORY_VALUE_BYTES),
                    )
                )
                result.advisories_kept += 1
    return result


def select_groups(groups: list[Group], token: str) -> tuple[list[Group], int | None]:
    """The groups naming ``token`` exactly (ASCII case-insensitive), else the ``*`` groups; with the
    selection's specificity in bytes (``None`` when nothing applies)."""
    wanted = token.lower()
    exact = [g for g in groups if any(agent.lower() == wanted for agent in g.agents)]
    if exact:
        return exact, utf8_len(token)
    star = [g for g in groups if "*" in g.agents]
    return (star, 0) if star else ([], None)


# ----- the decision (Protego) ------------------------------------------------------------------------


@dataclass(frozen=True)
class Match:
    directive: str
    pattern: str
    normalized: str
    group_index: int


def decide(selected: list[Group], target: str) -> tuple[bool, Match | None, int]:
    """Protego's verdict for ``target`` over the merged rules of ``selected``: (allowed, the rule that
    decided, how many of the rules match)."""
    rules = [(directive, pattern, group.index) for group in selected for directive, pattern in group.rules]
    if not rules:
        return True, None, 0
    agent = "plasmate-crawl-policy"
    robots = "\n".join([f"User-agent: {agent}", *(f"{d.capitalize()}: {p}" for d, p, _ in rules)])
    parser = Protego.parse(robots)
    allowed = parser.can_fetch(target, agent)
    rule_set = parser._user_agents.get(agent)  # Protego's parsed group: its matcher's own order
    if rule_set is None:
        return allowed, None, 0
    quoted = _protego_path(target)
    owners = _pattern_owners(parser, rules)
    matched = 0
    for _directive, pattern, _group in rules:
        compiled = [parser._url_patterns.get(p) for p in _spellings(pattern)]
        if any(c is not None and c.match(quoted) for c in compiled):
            matched += 1
    for rule in rule_set._rules:
        if rule.value.match(quoted):
            _directive, pattern, group_index = owners.get(
                id(rule.value), (rule.field, rule.value._pattern, -1)
            )
            if group_index < 0:  # a rule Protego added itself (an allowed .../index.html also allows .../)
                group_index = next((g for d, _p, g in rules if d == rule.field), 0)
            return allowed, Match(rule.field, pattern, rule.value._pattern, group_index), matched
    return allowed, None, matched


def _spellings(pattern: str) -> list[str]:
    # Protego stores a pattern holding "$" twice: as written (a final "$" anchors) and with every
    # "$" as a literal %24.
    return [pattern, pattern.replace("$", "%24")] if "$" in pattern else [pattern]


def _pattern_owners(parser: Protego, rules: list[tuple[str, str, int]]) -> dict[int, tuple[str, str, int]]:
    owners: dict[int, tuple[str, str, int]] = {}
    for directive, pattern, group_index in rules:
        for spelling in _spellings(pattern):
            compiled = parser._url_patterns.get(spelling)
            if compiled is not None:
                owners.setdefault(id(compiled), (directive, pattern, group_index))
    return owners


def _protego_path(url: str) -> str:
    from protego._utils import _quote_path  # the normalisation Protego's can_fetch applies

    return _quote_path(url)


def specificity_octets(normalized: str) -> int:
    """Octets of a normalised pattern, ``*`` and a final ``$`` excluded, each ``%XX`` one octet."""
    body = normalized[:-1] if normalized.endswith("$") else normalized
    body = _PERCENT.sub("%", body)
    return sum(utf8_len(ch) for ch in body if ch != "*")


# ----- the tool ----------------------------------------------------------------------------------------


def _validate(parsed: dict[str, Any]) -> tuple[WebUrl, str, int]:
    token = parsed["product_token"].strip()
    if not 1 <= utf8_len(token) <= MAX_TOKEN_BYTES:
        raise ActionError(crawl_policy_failed(PRODUCT_TOKEN_LENGTH))
    if not _TOKEN.fullmatch(token):
        raise ActionError(crawl_policy_failed(PRODUCT_TOKEN_CHARACTERS))
    url = parsed["url"]
    if utf8_len(url) > MAX_URL_BYTES:
        raise ActionError(crawl_policy_failed(TARGET_URL_TOO_LONG))
    try:
        target = parse_web_url(url)
    except UrlError as error:
        raise ActionError(crawl_policy_failed(invalid_target_url(error.args[0]))) from None
    if target.scheme not in ("http", "https"):
        raise ActionError(crawl_policy_failed(TARGET_URL_SCHEME))
    if not target.host or target.has_credentials:
        raise ActionError(crawl_policy_failed(TARGET_URL_HOST))
    timeout_ms = parsed["timeout_ms"]
    if not 1 <= timeout_ms <= MAX_TIMEOUT_MS:
        raise ActionError(crawl_policy_failed(TIMEOUT_MS_RANGE))
    return target, token, timeout_ms


async def crawl_policy(engine: Engine, arguments: Any) -> str:
    parsed = CRAWL_POLICY.parse(arguments)
    target, token, timeout_ms = _validate(parsed)
    robots_url = target.with_path("/robots.txt")
    deadline = asyncio.get_running_loop().time() + timeout_ms / 1000

    def same_origin(next_url: str) -> str | None:
        try:
            ok = parse_web_url(next_url).same_origin(robots_url)
        except UrlError:
            ok = False
        return None if ok else "cross-origin redirect"

    source: dict[str, Any] = {"requested_url": robots_url.serialize()}
    text: str | None = None
    try:
        document = await fetch_document(
            engine,
            robots_url.serialize(),
            max_bytes=MAX_ROBOTS_BYTES,
            max_redirects=MAX_REDIRECTS,
            deadline=deadline,
            user_agent=token,
            accept="text/plain, */*",
            fail_on_http_error=False,
            redirect_check=same_origin,
        )
    except DocumentError as error:
        classification = {
            "too_large": "invalid_too_large",
            "blocked": "blocked_redirect_or_destination",
            "cross_origin": "blocked_redirect_or_destination",
        }.get(error.kind, "unreachable")
        source.update(
            classification=classification,
            content_bytes=0,
            checks_total=1,
            checks_completed=0,
            checks_failed=1,
        )
    else:
        status = document.status
        classification = "available" if status < 400 else "unavailable" if status < 500 else "unreachable"
        source.update(final_url=document.url, http_status=status, classification=classification)
        if classification == "available":
            source["content_type"] = truncate_utf8(
                document.content_type or "text/html", MAX_CONTENT_TYPE_BYTES
            )
            text = document.body.decode("utf-8", "replace")
        source.update(content_bytes=len(document.body), checks_total=1, checks_completed=1, checks_failed=0)
    report = _report(target, token, source, classification, text)
    return _bounded(report)


def _report(
    target: WebUrl, token: str, source: dict[str, Any], classification: str, text: str | None
) -> dict[str, Any]:
    result = scan(text) if text is not None else Scan()
    decision: dict[str, Any] = {
        "allowed": False,
        "reason": "",
        "groups_total": len(result.groups),
        "groups_selected": 0,
    }
    advisories: list[dict[str, Any]] = []
    if classification != "available":
        unavailable = classification == "unavailable"
        decision.update(
            allowed=unavailable,
            reason="robots_unavailable"
            if unavailable
            else "robots_invalid"
            if classification == "invalid_too_large"
            else "robots_unreachable",
        )
        decision.update(selected_user_agents=[], rules_considered=0, rules_matched=0)
    elif target.path == "/robots.txt":
        decision.update(
            allowed=True,
            reason="robots_txt_implicitly_allowed",
            selected_user_agents=[],
            rules_considered=0,
            rules_matched=0,
        )
    else:
        selected, specificity = select_groups(result.groups, token)
        decision["groups_selected"] = len(selected)
        if specificity is not None:
            decision["selected_specificity_bytes"] = specificity
        decision["selected_user_agents"] = [a for g in selected for a in g.agents][:MAX_SELECTED_AGENTS]
        decision["rules_considered"] = sum(len(g.rules) for g in selected)
        if result.lines_over_limit > 0:
            decision.update(allowed=False, reason="robots_invalid_line_limit", rules_matched=0)
        else:
            allowed, match, matched = decide(selected, target.serialize(fragment=False))
            decision.update(allowed=allowed, rules_matched=matched)
            if match is None:
                decision["reason"] = "no_matching_rule"
            else:
                decision["reason"] = "allow_rule" if match.directive == "allow" else "disallow_rule"
                decision["matched_rule"] = _matched_rule(match)
        advisories = [
            {"group_index": g.index, "name": name, "value": value, "normative_for_permission": False}
            for g in selected
            for name, value in g.advisories
        ][:MAX_ADVISORIES]
    return {
        "schema_version": SCHEMA_VERSION,
        "spec_snapshot": SPEC_SNAPSHOT,
        "target_url": target.serialize(),
        "product_token": token,
        "source": source,
        "decision": decision,
        "parsing": result.parsing(),
        "advisories": advisories,
        "trust": TRUST,
        "limitations": LIMITATIONS,
    }


def _matched_rule(match: Match) -> dict[str, Any]:
    pattern = truncate_utf8(match.pattern, MAX_PATTERN_BYTES)
    return {
        "group_index": match.group_index,
        "directive": match.directive,
        "pattern": pattern,
        "normalized_pattern": truncate_utf8(match.normalized, MAX_PATTERN_BYTES),
        "pattern_bytes": utf8_len(match.pattern),
        "pattern_truncated": pattern != match.pattern,
        "specificity_octets": specificity_octets(match.normalized),
    }


def _bounded(report: dict[str, Any]) -> str:
    """The report's JSON within 128 KiB: advisories, then selected agents, are dropped from the end."""
    text = compact_json(report)
    while utf8_len(text) > OUTPUT_BOUND:
        if report["advisories"]:
            report["advisories"].pop()
        elif report["decision"]["selected_user_agents"]:
            report["decision"]["selected_user_agents"].pop()
        else:
            raise ActionError(crawl_policy_failed(CRAWL_REPORT_TOO_LARGE))
        text = compact_json(report)
    return text
