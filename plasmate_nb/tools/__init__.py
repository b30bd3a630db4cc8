"""The tool catalogue and the traced dispatcher shared by every caller."""

from plasmate_nb.tools.catalogue import TOOLS, TOOLS_BY_NAME, ToolSpec
from plasmate_nb.tools.dispatcher import Dispatcher, ToolResult

__all__ = ["TOOLS", "TOOLS_BY_NAME", "Dispatcher", "ToolResult", "ToolSpec"]
