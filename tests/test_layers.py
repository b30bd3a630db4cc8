"""Layering is checked by import-linter against the contracts in ``pyproject.toml``.

``[tool.importlinter]`` holds the contracts (docs/architecture.md#layers): the layer order, the
pure ``trace/`` and ``errors.py``, the notebook speaking only the tool contract, the catalogue
loading no browser, and no import cycle between sibling modules. Each contract is one test here
(``make lint-strict`` runs ``lint-imports`` on all of them at once), and one test plants
violations in a copy of the package to show the contracts bite.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import plasmate_nb

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = Path(plasmate_nb.__file__).resolve().parent
CONFIG = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
LINT_IMPORTS = str(Path(sys.executable).with_name("lint-imports"))


def _lint(
    *contracts: str, cwd: Path = ROOT, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    selected = [arg for contract in contracts for arg in ("--contract", contract)]
    return subprocess.run(
        [LINT_IMPORTS, "--no-cache", "--no-logo", *selected],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_the_expected_contracts_exist() -> None:
    assert {contract["id"] for contract in CONFIG["contracts"]} == {
        "layers",
        "trace-pure",
        "errors-pure",
        "analysis-reads-exports",
        "notebook-speaks-the-tool-contract",
        "catalogue-loads-no-browser",
        "no-cycles",
    }


@pytest.mark.parametrize("contract", [contract["id"] for contract in CONFIG["contracts"]])
def test_contract_is_kept(contract: str) -> None:
    done = _lint(contract)
    assert done.returncode == 0, done.stdout + done.stderr


def test_contracts_catch_planted_violations(tmp_path: Path) -> None:
    copy = tmp_path / "plasmate_nb"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    with (copy / "trace" / "compact.py").open("a", encoding="utf-8") as source:
        source.write(
            "\n\ndef _planted() -> None:\n    import asyncio  # noqa\n    from plasmate_nb.browser import Engine  # noqa\n"
        )
    with (copy / "notebook" / "export.py").open("a", encoding="utf-8") as source:
        source.write("\n\ndef _planted() -> None:\n    from plasmate_nb.som import compile_page  # noqa\n")
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    done = _lint("layers", "trace-pure", "notebook-speaks-the-tool-contract", cwd=tmp_path, env=env)
    assert done.returncode != 0
    assert "Contracts: 0 kept, 3 broken." in done.stdout, done.stdout + done.stderr
    assert "plasmate_nb.trace.compact -> plasmate_nb.browser" in done.stdout
    assert "plasmate_nb.trace.compact -> asyncio" in done.stdout
    assert "plasmate_nb.notebook.export -> plasmate_nb.som" in done.stdout
