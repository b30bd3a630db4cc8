"""The distributions ``[project].dependencies`` declares are exactly those ``plasmate_nb/`` imports.

Every ``import`` and ``from`` statement in the package is read with ``ast`` (module level, inside
functions and under ``TYPE_CHECKING`` alike), standard-library and first-party names are set aside,
and each remaining top-level module is mapped to the distribution that provides it. Nothing
imported may be missing from the declaration, and nothing declared may go unimported; the extras
(``dev``, ``lab``) hold what only the tests, notebooks and tooling need.
"""

from __future__ import annotations

import ast
import importlib.metadata
import sys
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

import plasmate_nb

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = Path(plasmate_nb.__file__).resolve().parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def _imported_top_level_modules() -> dict[str, set[str]]:
    """Top-level module name -> the package files importing it (absolute imports only)."""
    found: dict[str, set[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                found.setdefault(name.partition(".")[0], set()).add(str(path.relative_to(PACKAGE.parent)))
    return found


def _third_party_distributions() -> dict[str, set[str]]:
    """Canonical distribution name -> the package files importing it."""
    providers = importlib.metadata.packages_distributions()
    first_party = PACKAGE.name
    distributions: dict[str, set[str]] = {}
    unknown: dict[str, set[str]] = {}
    for module, files in _imported_top_level_modules().items():
        if module == first_party or module in sys.stdlib_module_names or module == "__future__":
            continue
        names = providers.get(module)
        if not names:
            unknown[module] = files
            continue
        for name in names:
            distributions.setdefault(canonicalize_name(name), set()).update(files)
    assert unknown == {}, f"imported modules no installed distribution provides: {unknown}"
    return distributions


def _declared(requirements: list[str]) -> set[str]:
    return {canonicalize_name(Requirement(spec).name) for spec in requirements}


#: Optional features: distribution -> (the extra that declares it, the only package files importing it).
OPTIONAL_FEATURES = {
    "matplotlib": ("lab", {"plasmate_nb/notebook/plots.py", "plasmate_nb/analysis/_fleet_plots.py"})
}


def _optional(name: str, files: set[str]) -> bool:
    extra, allowed = OPTIONAL_FEATURES.get(name, ("", set()))
    return (
        bool(extra)
        and files <= allowed
        and name in _declared(PYPROJECT["project"]["optional-dependencies"][extra])
    )


def test_declared_dependencies_are_exactly_the_imported_distributions() -> None:
    imported = _third_party_distributions()
    declared = _declared(PYPROJECT["project"]["dependencies"])
    undeclared = {
        name: sorted(files)
        for name, files in imported.items()
        if name not in declared and not _optional(name, files)
    }
    assert undeclared == {}, "imported by plasmate_nb/ but not in [project].dependencies"
    unused = declared - set(imported)
    assert unused == set(), "declared in [project].dependencies but never imported by plasmate_nb/"


def test_the_scan_sees_direct_third_party_imports() -> None:
    imported = _third_party_distributions()
    assert {"playwright", "mcp", "pandas"} <= set(imported)


def test_extras_do_not_repeat_a_runtime_dependency() -> None:
    declared = _declared(PYPROJECT["project"]["dependencies"])
    for extra, requirements in PYPROJECT["project"]["optional-dependencies"].items():
        assert _declared(requirements) & declared == set(), extra


def test_license_is_an_spdx_expression_with_its_file() -> None:
    project = PYPROJECT["project"]
    assert project["license"] == "Apache-2.0"
    assert project["license-files"] == ["LICENSE"]
    assert (ROOT / "LICENSE").read_text(encoding="utf-8").lstrip().startswith("Apache License")
    requires = [Requirement(spec) for spec in PYPROJECT["build-system"]["requires"]]
    (setuptools,) = [r for r in requires if canonicalize_name(r.name) == "setuptools"]
    assert not setuptools.specifier.contains("76.9"), "SPDX license expressions need setuptools>=77"
