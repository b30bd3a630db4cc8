"""The fixed values of plasmate.trace.v1, the public surface, and the package's purity."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import plasmate_nb.trace as trace

TRACE_DIR = Path(trace.__file__).parent

ARCHITECTURE_NAMES = {
    "SCHEMA",
    "MAX_EVENTS",
    "MAX_BYTES",
    "MAX_EVENT_BYTES",
    "MAX_STRING_BYTES",
    "MAX_EXPORT_BYTES",
    "MAX_HANDLE_BYTES",
    "TRACEABLE_ACTIONS",
    "OMITTED_FIELDS",
    "RETENTION",
    "REDACTION_POLICY",
    "compact_json",
    "origin",
    "sanitize_parameters",
    "redacted_fields",
    "classify_error",
    "TraceKey",
    "TraceLog",
    "PageState",
    "InvalidArguments",
    "parse_trace_handle",
    "parse_replay_request",
    "ReplayRequest",
    "parse_execute_request",
    "ExecuteRequest",
}


def test_public_surface_is_the_architecture_list() -> None:
    assert set(trace.__all__) == ARCHITECTURE_NAMES
    for name in ARCHITECTURE_NAMES:
        assert hasattr(trace, name), name


def test_bounds_match_the_reference() -> None:
    assert trace.SCHEMA == "plasmate.trace.v1"
    assert trace.MAX_EVENTS == 128
    assert trace.MAX_BYTES == 49152 == 48 * 1024
    assert trace.MAX_EVENT_BYTES == 4096
    assert trace.MAX_STRING_BYTES == 512
    assert trace.MAX_EXPORT_BYTES == 65536
    assert trace.MAX_HANDLE_BYTES == 64


def test_traceable_actions_are_exactly_the_twelve() -> None:
    assert trace.TRACEABLE_ACTIONS == (
        "open_page",
        "navigate_to",
        "click",
        "type_text",
        "select_option",
        "scroll",
        "toggle",
        "clear",
        "close_page",
        "evaluate",
        "set_cookies",
        "clear_cookies",
    )
    for untraced in (
        "get_cookies",
        "trace_status",
        "trace_export",
        "trace_clear",
        "replay_validate",
        "session_status",
        "fetch_page",
        "extract_text",
        "screenshot_page",
    ):
        assert untraced not in trace.TRACEABLE_ACTIONS


def test_omitted_fields_are_the_eight_in_order() -> None:
    assert trace.OMITTED_FIELDS == (
        "cookies",
        "authorization",
        "headers",
        "raw_html",
        "screenshots",
        "evaluate_source",
        "evaluate_result",
        "tool_output",
    )


def test_policy_and_retention_texts() -> None:
    assert trace.RETENTION == "memory-only; removed when the browser session closes"
    assert trace.REDACTION_POLICY == (
        "secret values are omitted; page bodies, cookies, headers, JavaScript, screenshots, "
        "and tool output are omitted"
    )


def test_compact_json_is_serde_compact() -> None:
    assert trace.compact_json({"a": [1, "é"], "b": None}) == '{"a":[1,"é"],"b":null}'


FORBIDDEN_IMPORTS = {
    "asyncio",
    "playwright",
    "socket",
    "subprocess",
    "io",
    "os",
    "pathlib",
    "shutil",
    "tempfile",
    "logging",
    "urllib.request",
    "http",
}


def test_trace_sources_do_no_io_and_no_asyncio() -> None:
    for source in sorted(TRACE_DIR.glob("*.py")):
        tree = ast.parse(source.read_text(), filename=str(source))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""] if node.level == 0 else []
            else:
                names = []
            for name in names:
                assert name.split(".")[0] not in FORBIDDEN_IMPORTS, (source.name, name)
                assert not name.startswith("plasmate_nb"), (source.name, name)  # only relative, inside trace/
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                assert node.func.id not in {"open", "print", "input"}, (source.name, node.func.id)


def test_trace_imports_without_playwright() -> None:
    code = (
        "import sys\n"
        "sys.modules['playwright'] = None\n"  # any import of playwright now fails
        "import plasmate_nb.trace as t\n"
        "log = t.TraceLog(True)\n"
        "assert log.record('scroll', {}, None, log.closed_state(), log.closed_state(), None, 0) == 1\n"
        "assert not any(m == 'playwright' or m.startswith('playwright.') for m in sys.modules if sys.modules[m])\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
