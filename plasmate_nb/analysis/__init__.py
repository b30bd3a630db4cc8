"""The analyst workbench: audit traces from any engine against the contract, compare two runs,
and summarise fleets of traces at scale.

It reads exports only (files, folders, payloads): no browser, MCP SDK or widgets load with it.
"""

import typing as _typing

from plasmate_nb._lazy import lazy_exports as _lazy_exports

_EXPORTS: dict[str, tuple[str, ...]] = {
    "plasmate_nb.analysis.audit_report": ("AuditReport", "audit"),
    "plasmate_nb.analysis.comparison": ("Comparison", "compare"),
    "plasmate_nb.analysis.fleet_summary": ("Fleet", "fleet"),
    "plasmate_nb.analysis.synthetic": ("write_synthetic_fleet",),
}  # fmt: skip
__all__, __getattr__, __dir__ = _lazy_exports(__name__, _EXPORTS)

if _typing.TYPE_CHECKING:  # the same names for static tools (tests/test_lean_imports.py keeps them equal)
    from plasmate_nb.analysis.audit_report import AuditReport as AuditReport
    from plasmate_nb.analysis.audit_report import audit as audit
    from plasmate_nb.analysis.comparison import Comparison as Comparison
    from plasmate_nb.analysis.comparison import compare as compare
    from plasmate_nb.analysis.fleet_summary import Fleet as Fleet
    from plasmate_nb.analysis.fleet_summary import fleet as fleet
    from plasmate_nb.analysis.synthetic import write_synthetic_fleet as write_synthetic_fleet
