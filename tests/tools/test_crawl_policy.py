"""crawl_policy against scripted loopback robots.txt files (docs/contract.md#crawl_policy)."""

from __future__ import annotations

import json

import pytest

from plasmate_nb.tools import Dispatcher
from plasmate_nb.tools.crawl_policy import LIMITATIONS, scan, specificity_octets
from tests.tools.local_http import Answer, scripted

REPORT_FIELDS = [
    "schema_version",
    "spec_snapshot",
    "target_url",
    "product_token",
    "source",
    "decision",
    "parsing",
    "advisories",
    "trust",
    "limitations",
]


async def evaluate(
    dispatcher: Dispatcher, robots: str | Answer, path: str = "/private", **arguments: object
) -> dict:
    answer = robots if isinstance(robots, Answer) else Answer(200, robots, "text/plain")
    with scripted({"/robots.txt": answer}) as server:
        result = await dispatcher.call("crawl_policy", {"url": server.url(path), **arguments})
        assert not result.is_error, result.text
        report = json.loads(result.text)
        report["_seen"] = server.seen
        report["_origin"] = server.url("")
    return report


async def test_reference_example(dispatcher: Dispatcher) -> None:
    report = await evaluate(dispatcher, "User-agent: *\nDisallow: /private\n")
    seen, origin = report.pop("_seen"), report.pop("_origin")
    assert list(report) == REPORT_FIELDS
    assert report["schema_version"] == "plasmate.crawl-policy.v1"
    assert report["spec_snapshot"] == {
        "standard": "RFC 9309",
        "checked_at": "2026-07-19",
        "source": "https://www.rfc-editor.org/rfc/rfc9309.html",
    }
    assert report["target_url"] == origin + "/private" and report["product_token"] == "Plasmate"
    assert report["source"] == {
        "requested_url": origin + "/robots.txt",
        "final_url": origin + "/robots.txt",
        "http_status": 200,
        "classification": "available",
        "content_type": "text/plain",
        "content_bytes": 33,
        "checks_total": 1,
        "checks_completed": 1,
        "checks_failed": 0,
    }
    assert report["decision"] == {
        "allowed": False,
        "reason": "disallow_rule",
        "groups_total": 1,
        "groups_selected": 1,
        "selected_specificity_bytes": 0,
        "selected_user_agents": ["*"],
        "rules_considered": 1,
        "rules_matched": 1,
        "matched_rule": {
            "group_index": 0,
            "directive": "disallow",
            "pattern": "/private",
            "normalized_pattern": "/private",
            "pattern_bytes": 8,
            "pattern_truncated": False,
            "specificity_octets": 8,
        },
    }
    parsing = report["parsing"]
    assert (parsing["lines_seen"], parsing["lines_parsed"], parsing["lines_ignored"]) == (3, 2, 1)
    assert (parsing["groups_seen"], parsing["rules_seen"], parsing["rules_retained"]) == (1, 1, 1)
    assert report["trust"] == {
        "classification": "untrusted_advisory_metadata",
        "verification": "not_authorization",
        "data_handling": "Treat robots.txt as advisory data only; it does not grant access or override authorization.",
    }
    assert report["limitations"] == LIMITATIONS and len(LIMITATIONS) == 4
    assert [(s.method, s.path, s.headers["user-agent"]) for s in seen] == [("GET", "/robots.txt", "Plasmate")]


async def test_exact_group_merge_and_allow_wins_the_tie(dispatcher: Dispatcher) -> None:
    robots = (
        "User-agent: Plasmate\nAllow: /private$\n\nUser-agent: other\nDisallow: /\n\n"
        "User-agent: plasmate\nDisallow: /private\n\nUser-agent: *\nDisallow: /\n"
    )
    allowed = await evaluate(dispatcher, robots, "/private")
    assert allowed["decision"]["allowed"] is True and allowed["decision"]["reason"] == "allow_rule"
    assert allowed["decision"]["groups_selected"] == 2
    assert allowed["decision"]["selected_user_agents"] == ["Plasmate", "plasmate"]
    assert allowed["decision"]["selected_specificity_bytes"] == len("Plasmate")
    assert allowed["decision"]["matched_rule"]["group_index"] == 0
    assert allowed["decision"]["rules_matched"] == 2
    denied = await evaluate(dispatcher, robots, "/private/child")
    assert denied["decision"]["allowed"] is False
    assert denied["decision"]["matched_rule"]["group_index"] == 2


async def test_agent_matching_is_exact_then_star(dispatcher: Dispatcher) -> None:
    robots = "User-agent: Mate\nDisallow: /\n\nUser-agent: *\nDisallow: /star-only\n"
    report = await evaluate(dispatcher, robots, "/anything")
    assert report["decision"]["selected_user_agents"] == ["*"]  # "Mate" is not "Plasmate"
    assert report["decision"]["allowed"] is True and report["decision"]["reason"] == "no_matching_rule"
    only_mate = await evaluate(dispatcher, "User-agent: Mate\nDisallow: /\n", "/anything")
    assert (
        only_mate["decision"]["groups_selected"] == 0
        and "selected_specificity_bytes" not in only_mate["decision"]
    )
    assert only_mate["decision"]["allowed"] is True


async def test_malformed_agents_bom_comments_empty_disallow_and_advisories(dispatcher: Dispatcher) -> None:
    robots = (
        "\ufeffUser-agent: bad agent!\nUser-agent: *  # everyone\nDisallow:\nCrawl-delay: 5\n"
        "Sitemap: https://example.com/s.xml\nno colon here\nDisallow: /x\n"
    )
    report = await evaluate(dispatcher, robots, "/x/y")
    assert report["parsing"] == {
        "lines_seen": 8,
        "lines_parsed": 5,
        "lines_ignored": 3,
        "lines_over_limit": 0,
        "invalid_utf8_replacements": 0,
        "groups_seen": 1,
        "rules_seen": 2,
        "rules_retained": 1,
        "rules_omitted_at_limit": 0,
        "empty_disallow_rules_ignored": 1,
    }
    assert report["advisories"] == [
        {"group_index": 0, "name": "crawl-delay", "value": "5", "normative_for_permission": False},
        {
            "group_index": 0,
            "name": "sitemap",
            "value": "https://example.com/s.xml",
            "normative_for_permission": False,
        },
    ]
    assert report["decision"]["allowed"] is False


async def test_long_rule_matches_with_a_truncated_copy(dispatcher: Dispatcher) -> None:
    pattern = "/" + "*" * (9 * 1024) + "x"  # a URL this long would be refused as a target
    report = await evaluate(dispatcher, f"User-agent: *\nDisallow: {pattern}\n", "/some/x")
    rule = report["decision"]["matched_rule"]
    assert report["decision"]["allowed"] is False
    assert rule["pattern_truncated"] is True and len(rule["pattern"]) == 8 * 1024
    assert rule["pattern_bytes"] == len(pattern) and rule["specificity_octets"] == 2


async def test_percent_encoding_and_wildcards(dispatcher: Dispatcher) -> None:
    robots = "User-agent: *\nDisallow: /caf%C3%A9/*?key=value$\nDisallow: /literal-%2A\n"
    report = await evaluate(dispatcher, robots, "/café/menu?key=value")
    assert report["decision"]["allowed"] is False
    assert report["decision"]["matched_rule"]["pattern"] == "/caf%C3%A9/*?key=value$"
    assert report["decision"]["matched_rule"]["specificity_octets"] == len("/caf") + 2 + len("/?key=value")
    assert (await evaluate(dispatcher, robots, "/literal-*"))["decision"]["allowed"] is False


@pytest.mark.parametrize(("answer", "classification", "allowed", "reason", "status"), [
    (Answer(404, "missing"), "unavailable", True, "robots_unavailable", 404),
    (Answer(503, "down"), "unreachable", False, "robots_unreachable", 503),
    (Answer(200, "x" * (500 * 1024 + 1), "text/plain"), "invalid_too_large", False, "robots_invalid", None),
])  # fmt: skip
async def test_fetch_outcomes(
    dispatcher: Dispatcher,
    answer: Answer,
    classification: str,
    allowed: bool,
    reason: str,
    status: int | None,
) -> None:
    report = await evaluate(dispatcher, answer)
    source, decision = report["source"], report["decision"]
    assert (source["classification"], decision["allowed"], decision["reason"]) == (
        classification,
        allowed,
        reason,
    )
    assert source.get("http_status") == status and "content_type" not in source
    assert (source["checks_completed"], source["checks_failed"]) == ((1, 0) if status else (0, 1))


async def test_cross_origin_redirect_is_refused_before_it_is_requested(dispatcher: Dispatcher) -> None:
    with scripted({"/robots.txt": Answer(200, "User-agent: *\nDisallow: /\n", "text/plain")}) as other:
        redirect = Answer(302, "", headers={"Location": other.url("/robots.txt", host="localhost")})
        report = await evaluate(dispatcher, redirect)
        assert other.seen == []
    assert report["source"]["classification"] == "blocked_redirect_or_destination"
    assert report["decision"] == {**report["decision"], "allowed": False, "reason": "robots_unreachable"}


async def test_same_origin_redirect_and_timeout(dispatcher: Dispatcher) -> None:
    with scripted(
        {
            "/robots.txt": Answer(301, "", headers={"Location": "/real-robots.txt"}),
            "/real-robots.txt": Answer(200, "User-agent: *\nAllow: /\n", "text/plain"),
        }
    ) as server:
        result = await dispatcher.call("crawl_policy", {"url": server.url("/x")})
        report = json.loads(result.text)
        assert report["source"]["final_url"] == server.url("/real-robots.txt")
        assert report["decision"]["reason"] == "allow_rule"
    slow = await evaluate(dispatcher, Answer(200, "User-agent: *\n", "text/plain", delay=1.0), timeout_ms=100)
    assert slow["source"]["classification"] == "unreachable" and slow["decision"]["allowed"] is False


async def test_robots_txt_itself_is_implicitly_allowed(dispatcher: Dispatcher) -> None:
    report = await evaluate(dispatcher, "User-agent: *\nDisallow: /\n", "/robots.txt")
    assert (
        report["decision"]["reason"] == "robots_txt_implicitly_allowed"
        and report["decision"]["allowed"] is True
    )


@pytest.mark.parametrize(("arguments", "message"), [
    ({"url": "http://example.com/", "product_token": " "}, "product token must contain 1 to 64 bytes"),
    ({"url": "http://example.com/", "product_token": "a" * 65}, "product token must contain 1 to 64 bytes"),
    ({"url": "http://example.com/", "product_token": "Bot/1.0"},
     "product token may contain only ASCII letters, hyphen, and underscore"),
    ({"url": "http://example.com/" + "a" * 4096}, "target URL exceeds 4096 bytes"),
    ({"url": "example.com/x"}, "invalid target URL: relative URL without a base"),
    ({"url": "http://example.com:99999/"}, "invalid target URL: invalid port number"),
    ({"url": "ftp://example.com/"}, "target URL must use http or https"),
    ({"url": "http://user:pw@example.com/"}, "target URL must have a host and must not contain credentials"),
    ({"url": "http://example.com/", "timeout_ms": 0}, "timeout_ms must be between 1 and 30000"),
    ({"url": "http://example.com/", "timeout_ms": 30001}, "timeout_ms must be between 1 and 30000"),
])  # fmt: skip
async def test_validation_errors(dispatcher: Dispatcher, arguments: dict, message: str) -> None:
    result = await dispatcher.call("crawl_policy", arguments)
    assert result.is_error and result.text == "Crawl-policy evaluation failed: " + message


async def test_product_token_is_trimmed(dispatcher: Dispatcher) -> None:
    report = await evaluate(dispatcher, "User-agent: Bot\nDisallow: /\n", product_token="  Bot ")
    assert report["product_token"] == "Bot" and report["decision"]["selected_user_agents"] == ["Bot"]
    assert report["_seen"][0].headers["user-agent"] == "Bot"


def test_scan_and_specificity_units() -> None:
    result = scan("User-agent: a\nUser-agent: b\nDisallow: /x\nUser-agent: c\nAllow: /y\n")
    assert [(g.agents, g.rules) for g in result.groups] == [
        (["a", "b"], [("disallow", "/x")]),
        (["c"], [("allow", "/y")]),
    ]
    assert specificity_octets("/a*b$") == 3 and specificity_octets("/caf%C3%A9") == 6
