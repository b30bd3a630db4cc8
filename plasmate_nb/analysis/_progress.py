"""When the analyst workbench's long reads (``audit``, ``fleet``) show a progress bar, and how.

One rule for both: ``progress=True`` shows it at once, ``False`` never, ``None`` (the default)
once the read has run for ``PROGRESS_AFTER_S`` seconds, so a small read shows none. In a
notebook the bar is a widget (``tqdm.auto``), elsewhere text on stderr.
"""

from __future__ import annotations

from typing import Any

#: ``progress=None`` shows the bar once the read has run this long.
PROGRESS_AFTER_S = 2.0


def progress_bar(total: int, what: str, unit: str, progress: bool | None) -> Any:
    """A tqdm bar over ``total`` units of ``unit`` labelled ``what``, shown as ``progress`` says."""
    from tqdm.auto import tqdm

    return tqdm(
        total=total,
        desc=what,
        unit=unit,
        disable=progress is False or not total,
        delay=PROGRESS_AFTER_S if progress is None else 0,
    )
