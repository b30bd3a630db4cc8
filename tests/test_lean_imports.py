"""Lean imports and clean layering of the notebook layer.

``import plasmate_nb`` plus the pure readers (``load_trace`` / ``load_traces``) start no browser
code, no MCP SDK, no web server and no widgets; the notebook layer has no import cycle, reaches
the engine and the server only through ``client/``, and widgets use only the session's public API.
"""

from __future__ import annotations

import ast
import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

import plasmate_nb
from plasmate_nb.trace import TraceLog

PACKAGE = Path(plasmate_nb.__file__).parent
HEAVY = ("playwright", "mcp", "uvicorn", "ipywidgets", "starlette", "httpx", "httpx2", "matplotlib")


def _export(session_id: str, scrolls: int) -> dict:
    log = TraceLog(True)
    closed = log.closed_state()
    for pixels in range(scrolls):
        log.record(
            "scroll",
            {"direction": "down", "pixels": pixels, "targeted": False},
            None,
            closed,
            closed,
            None,
            1,
        )
    return log.export(session_id)


def _run(code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_load_trace_and_load_traces_import_nothing_heavy(tmp_path: Path) -> None:
    folder = tmp_path / "traces"
    folder.mkdir()
    (folder / "a.json").write_text(json.dumps(_export("s_a", 3)), encoding="utf-8")
    (folder / "b.json").write_text(json.dumps(_export("s_b", 2)), encoding="utf-8")
    code = (
        "import sys\n"
        "import plasmate_nb as pnb\n"
        f"export = pnb.load_trace({str(folder / 'a.json')!r})\n"
        f"table = pnb.load_traces({str(folder)!r})\n"
        "assert export.retained_events == 3 and len(table) == 5, (export, len(table))\n"
        f"print(sorted(m for m in sys.modules if m.split('.')[0] in {set(HEAVY)!r}))\n"
    )
    assert _run(code) == "[]"


def test_load_trace_of_a_valid_export_imports_neither_jsonschema_nor_pandas(tmp_path: Path) -> None:
    # jsonschema (its format checkers build parsers at import) loads only to explain a rejection;
    # pandas only when a table is built.
    path = tmp_path / "a.json"
    path.write_text(json.dumps(_export("s_a", 3)), encoding="utf-8")
    code = (
        "import sys\n"
        "import plasmate_nb as pnb\n"
        f"export = pnb.load_trace({str(path)!r})\n"
        "repr(export)\n"
        "assert export.retained_events == 3, export\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in {'jsonschema', 'pandas'}))\n"
    )
    assert _run(code) == "[]"


def test_a_clean_audit_imports_no_jsonschema(tmp_path: Path) -> None:
    # A document of JSON values that the compiled validator accepts has no schema finding to
    # explain, whether read from a file or given in memory.
    session_id = "0b7e1c7a-3f0e-4d8e-9c55-8d9f0f6b5a21"  # the audit wants a UUID v4
    (tmp_path / "a.json").write_text(json.dumps(_export(session_id, 3)), encoding="utf-8")
    code = (
        "import sys\n"
        "import plasmate_nb as pnb\n"
        f"report = pnb.audit({str(tmp_path)!r}, progress=False)\n"
        "assert report.ok and report.documents == 1, report\n"
        f"in_memory = pnb.audit(pnb.load_trace({str(tmp_path / 'a.json')!r}))\n"  # a notebook's s.trace.export()
        "assert in_memory.ok and in_memory.documents == 1, in_memory\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'jsonschema'))\n"
    )
    assert _run(code) == "[]"


def test_load_trace_of_an_invalid_export_gives_jsonschemas_message(tmp_path: Path) -> None:
    from plasmate_nb.notebook.export import TraceFormatError, _raise_first_error, schema_validator

    broken = _export("s_a", 2)
    broken["events"][1]["before"]["fingerprint"] = "plasmate-state:v1:xyz"
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(broken), encoding="utf-8")
    with pytest.raises(TraceFormatError) as expected:
        _raise_first_error(schema_validator(), broken, str(path))
    code = (
        "import plasmate_nb as pnb\n"
        "try:\n"
        f"    pnb.load_trace({str(path)!r})\n"
        "except pnb.TraceFormatError as error:\n"
        "    print(error.path, str(error), sep='\\n')\n"
    )
    assert _run(code).splitlines() == [expected.value.path, str(expected.value)]


@pytest.mark.parametrize(
    "statement",
    [
        "import plasmate_nb",
        "import plasmate_nb.notebook",
        "import plasmate_nb.client",
        "import plasmate_nb.server",
        "from plasmate_nb.client import ToolError, Transport",
        "from plasmate_nb.notebook import TraceExport, ReplayPlan, Page",
    ],
)
def test_package_imports_are_lazy(statement: str) -> None:
    code = (
        f"import sys\n{statement}\nprint(sorted(m for m in sys.modules if m.split('.')[0] in {set(HEAVY)!r}))"
    )
    assert _run(code) == "[]"


def test_session_module_does_not_import_widgets() -> None:
    code = (
        "import sys\nimport plasmate_nb.notebook._session, plasmate_nb.notebook.session\n"
        "print(sorted(m for m in sys.modules if m.endswith('widgets')))"
    )
    assert _run(code) == "[]"


# -- the static import graph ----------------------------------------------------------------------------


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _runtime_imports(path: Path) -> set[str]:
    """Modules ``path`` imports when it runs (module level, outside ``if TYPE_CHECKING``)."""
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            continue
        for sub in ast.walk(node):
            if isinstance(sub, ast.Import):
                found.update(alias.name for alias in sub.names)
            elif isinstance(sub, ast.ImportFrom):
                if sub.level:
                    parts = package.split(".")
                    base = ".".join(parts[: len(parts) - sub.level + 1])
                    module = f"{base}.{sub.module}" if sub.module else base
                else:
                    module = sub.module or ""
                found.add(module)
                found.update(f"{module}.{alias.name}" for alias in sub.names)
    return found


def _graph() -> dict[str, set[str]]:
    files = {_module_name(path): path for path in PACKAGE.rglob("*.py")}
    return {
        name: {m for m in _runtime_imports(path) if m in files and m != name} for name, path in files.items()
    }


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_import_cycle_through_the_notebook_or_client_layers() -> None:
    mine = ("plasmate_nb.notebook", "plasmate_nb.client", "plasmate_nb._lazy")
    assert _cycles({"a": {"b"}, "b": {"a"}, "c": {"a"}}) == [["a", "b"]]  # the detector itself
    involved = [c for c in _cycles(_graph()) if any(m == "plasmate_nb" or m.startswith(mine) for m in c)]
    assert involved == []


def test_notebook_reaches_engine_and_server_only_through_client() -> None:
    forbidden = (
        "plasmate_nb.server",
        "plasmate_nb.browser",
        "plasmate_nb.tools.dispatcher",
        "plasmate_nb.som",
    )
    for path in sorted((PACKAGE / "notebook").glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imported = {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.level == 0}
        imported |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        text = path.read_text(encoding="utf-8")
        relative = {f"plasmate_nb.{m}" for m in ("server", "browser", "som") if f"from ..{m}" in text}
        assert not {m for m in imported | relative if m.startswith(forbidden)}, path.name


@pytest.mark.parametrize("module", ["widgets.py", "dashboard.py", "replay_panel.py"])
def test_widgets_use_only_the_public_session_api(module: str) -> None:
    tree = ast.parse((PACKAGE / "notebook" / module).read_text(encoding="utf-8"))
    reach_ins = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
            owner = node.value
            is_session = (isinstance(owner, ast.Name) and owner.id == "session") or (
                isinstance(owner, ast.Attribute) and owner.attr == "_session"
            )
            if is_session:
                reach_ins.append(ast.unparse(node))
    assert reach_ins == []


@pytest.mark.parametrize(
    "package", ["plasmate_nb", "plasmate_nb.notebook", "plasmate_nb.client", "plasmate_nb.server"]
)
def test_lazy_tables_and_static_imports_name_the_same_things(package: str) -> None:
    module = importlib.import_module(package)
    tree = ast.parse(Path(module.__file__).read_text(encoding="utf-8"))
    static: set[tuple[str, str]] = set()
    for node in tree.body:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            static |= {
                (n.module or "", a.name) for n in node.body if isinstance(n, ast.ImportFrom) for a in n.names
            }
    runtime = {(m, name) for m, names in module._EXPORTS.items() for name in names}
    assert {name for _, name in static} == {name for _, name in runtime}
    for source, name in static:  # each static import names the object the lazy table gives
        assert getattr(importlib.import_module(source), name) is getattr(module, name)
