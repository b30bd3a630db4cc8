"""The SOM: in-page compiler (compiler.js), its Python driver, and pure helpers over SOM dicts."""

from plasmate_nb.som.compiler import COMPILER_SOURCE, CompiledSom, SomCompileError, compile_page
from plasmate_nb.som.tree import (
    ACTIONS_BY_ROLE,
    INTERACTIVE_ROLES,
    elements_table_rows,
    find_element,
    iter_elements,
    page_view,
)
from plasmate_nb.som.world import (
    NOT_CONNECTED,
    crashed_at,
    document_loaded,
    next_frame,
    prepare_actions,
    register_engine,
    watch_crashes,
)

__all__ = [
    "ACTIONS_BY_ROLE",
    "COMPILER_SOURCE",
    "INTERACTIVE_ROLES",
    "NOT_CONNECTED",
    "CompiledSom",
    "SomCompileError",
    "compile_page",
    "crashed_at",
    "document_loaded",
    "elements_table_rows",
    "find_element",
    "iter_elements",
    "next_frame",
    "page_view",
    "prepare_actions",
    "register_engine",
    "watch_crashes",
]
