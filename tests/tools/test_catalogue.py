"""The catalogue is the one source of the tool contract: every other list agrees with it.

Pure: builds a Dispatcher over an engine that is never started, so no browser runs.
"""

from __future__ import annotations

import ast
import inspect
import re
import subprocess
import sys
import typing
from pathlib import Path

import plasmate_nb
from plasmate_nb.tools import catalogue
from plasmate_nb.tools.catalogue import (
    COARSE_TOOLS,
    DEFAULT_TOOLS,
    OPT_IN_TOOLS,
    OUTPUT_SCHEMA,
    SESSION_TOOLS,
    TOOLS,
    TOOLS_BY_NAME,
    TRACE_CHANGING_TOOLS,
    TRACED_TOOLS,
)
from plasmate_nb.trace import constants as trace_contract
from tests.support import REFERENCE_TOOLS

TOOL_NAMES = frozenset(TOOLS_BY_NAME)
PACKAGE = Path(plasmate_nb.__file__).parent
# The only modules allowed to spell out sets of tool names: the catalogue itself, and the trace
# contract's own constants (the pure trace core must not import tools/; tests below compare).
LIST_OWNERS = {PACKAGE / "tools" / "catalogue.py", PACKAGE / "trace" / "constants.py"}
# Scenarios, not facts about the catalogue: a scripted agent's steps and the synthetic fleet's
# action mix name the tools they call, as any client's script would.
SCENARIOS = {PACKAGE / "examples.py", PACKAGE / "analysis" / "synthetic.py"}


def test_names_are_unique_and_indexed() -> None:
    assert len(TOOL_NAMES) == len(TOOLS)
    assert all(TOOLS_BY_NAME[tool.name] is tool for tool in TOOLS)


def test_tools_are_listed_in_the_reference_order_with_ours_after_their_kin() -> None:
    names = [tool.name for tool in TOOLS]
    assert [name for name in names if name in REFERENCE_TOOLS] == list(REFERENCE_TOOLS)
    assert names.index("replay_execute") == names.index("replay_validate") + 1  # ours: after its kin
    assert names[-1] == "page_som"


def test_the_contracts_tool_table_is_the_catalogue_in_its_order() -> None:
    text = (PACKAGE.parent / "docs" / "contract.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| (\d+) \| `(\w+)` \| ([^|]+) \| ([TF/]+) \| ([\w-]+) \|", text, re.MULTILINE)
    flags = {True: "T", False: "F"}
    listed = [tool for tool in TOOLS if not tool.opt_in]  # replay_execute has its own section
    assert [(int(n), name, title.strip(), marks, trust) for n, name, title, marks, trust in rows] == [
        (
            n,
            t.name,
            t.title,
            "/".join(flags[f] for f in (t.read_only, t.destructive, t.idempotent, t.open_world)),
            t.trust,
        )
        for n, t in enumerate(listed, 1)
    ]


def test_the_dispatcher_handler_map_is_the_catalogue() -> None:
    from plasmate_nb.browser import Engine
    from plasmate_nb.tools import Dispatcher

    dispatcher = Dispatcher(Engine())  # never started: no browser
    assert list(dispatcher._handlers) == [tool.name for tool in TOOLS]
    for tool in TOOLS:
        method = getattr(Dispatcher, tool.handler, None)
        assert inspect.iscoroutinefunction(method), tool.handler
        assert dispatcher._handlers[tool.name] == getattr(dispatcher, tool.handler)
    assert dispatcher.tools() == DEFAULT_TOOLS == tuple(tool for tool in TOOLS if not tool.opt_in)
    assert Dispatcher(Engine(), replay_execution=True).tools() == TOOLS


def test_the_only_opt_in_tool_is_replay_execute() -> None:
    assert {"replay_execute"} == OPT_IN_TOOLS


def test_traced_tools_are_the_trace_contracts_traceable_actions() -> None:
    assert len(set(trace_contract.TRACEABLE_ACTIONS)) == len(trace_contract.TRACEABLE_ACTIONS)
    assert frozenset(trace_contract.TRACEABLE_ACTIONS) == TRACED_TOOLS


def test_coarse_tools_are_the_trace_contracts_coarse_actions() -> None:
    assert COARSE_TOOLS == trace_contract.COARSE_ACTIONS
    assert COARSE_TOOLS <= TRACED_TOOLS


def test_tracing_values_are_the_three_kinds() -> None:
    kinds = set(typing.get_args(catalogue.Tracing))
    assert kinds == {"full", "coarse", "never"}
    assert {tool.traced for tool in TOOLS} == kinds


def test_trace_contract_action_tables_name_traced_tools_only() -> None:
    assert trace_contract.UNSUPPORTED_REPLAY_ACTIONS <= TRACED_TOOLS
    assert set(trace_contract.REDACTED_FIELDS_BY_ACTION) <= TRACED_TOOLS
    replayable = TRACED_TOOLS - trace_contract.UNSUPPORTED_REPLAY_ACTIONS
    assert set(trace_contract.REQUIRED_ELEMENT_ACTION) | trace_contract.ALWAYS_SUPPORTED_ACTIONS == replayable


def test_session_tools_are_exactly_those_taking_a_required_session_id() -> None:
    takes_session = {tool.name for tool in TOOLS if "session_id" in tool.input_schema.get("required", ())}
    assert takes_session == SESSION_TOOLS == {tool.name for tool in TOOLS if tool.session}
    assert all("session_id" not in tool.input_schema["properties"] for tool in TOOLS if not tool.session)


def test_trace_changing_tools_are_the_traced_ones_and_the_trace_writers() -> None:
    # An untraced tool changes a trace only by writing to it: a session tool that is not read-only.
    writers = {tool.name for tool in TOOLS if tool.traced == "never" and tool.session and not tool.read_only}
    assert writers == {"trace_clear", "replay_execute"}
    assert TRACED_TOOLS | writers == TRACE_CHANGING_TOOLS


def test_every_tool_has_the_one_shared_output_schema() -> None:
    assert len(TOOLS) == 28
    assert all(tool.output_schema is OUTPUT_SCHEMA for tool in TOOLS)
    assert OUTPUT_SCHEMA["required"] == ["result", "contentType", "trust"]
    assert OUTPUT_SCHEMA["additionalProperties"] is False


def test_importing_the_catalogue_loads_no_browser() -> None:
    code = (
        "import sys, plasmate_nb.tools.catalogue; "
        "loaded = [m for m in ('playwright', 'plasmate_nb.browser', 'plasmate_nb.tools.dispatcher') "
        "if m in sys.modules]; "
        "print(','.join(loaded))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == ""


def _tool_name_collections(path: Path) -> list[tuple[int, list[str]]]:
    """Tuples, lists, sets and dict key sets of three or more string constants, all tool names."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Tuple | ast.List | ast.Set):
            items = node.elts
        elif isinstance(node, ast.Dict):
            items = [key for key in node.keys if key is not None]
        else:
            continue
        values = [
            item.value for item in items if isinstance(item, ast.Constant) and isinstance(item.value, str)
        ]
        if len(values) >= 3 and len(values) == len(items) and set(values) <= TOOL_NAMES:
            found.append((node.lineno, values))
    return found


def test_no_other_module_spells_out_a_list_of_tools() -> None:
    offenders = {
        f"{path.relative_to(PACKAGE.parent)}:{line}": names
        for path in sorted(PACKAGE.rglob("*.py"))
        if path not in LIST_OWNERS | SCENARIOS
        for line, names in _tool_name_collections(path)
    }
    assert offenders == {}


def test_the_scan_sees_the_lists_it_must_allow() -> None:
    assert _tool_name_collections(PACKAGE / "trace" / "constants.py")  # TRACEABLE_ACTIONS and friends
