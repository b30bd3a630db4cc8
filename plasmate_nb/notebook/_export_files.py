"""Reading an export file's bytes, and only a regular file's.

A folder of exports can hold a named pipe or a link to a device under a ``*.json`` name: reading
a pipe no one writes waits forever, ``/dev/zero`` never ends, and merely opening a pipe a process
writes lets that writer go on into a reader that closes at once (it dies of SIGPIPE), while
opening some devices acts on them. Every reader of export files (``load_trace``, ``load_traces``,
``pnb.audit``, ``pnb.fleet``) reads through here, so such a file is one more file that cannot be
read, said in the same words by each, and it is never opened.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from .. import errors

# Non-blocking and never a controlling terminal, should the file change into a pipe or a device
# between the look and the open; a regular file ignores both flags.
_OPEN_FLAGS = (
    os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_BINARY", 0)
)


def read_export_bytes(path: Path) -> bytes:
    """The bytes of the regular file at ``path``; ``OSError`` (its ``strerror`` says why) otherwise.

    >>> read_export_bytes(Path("trace.json"))[:30]
    """
    _refuse_unless_regular(os.stat(path).st_mode, path)  # before opening: opening can act
    descriptor = os.open(path, _OPEN_FLAGS)
    with open(descriptor, "rb") as file:
        _refuse_unless_regular(os.fstat(descriptor).st_mode, path)  # what was opened, after all
        return file.read()


def _refuse_unless_regular(mode: int, path: Path) -> None:
    if stat.S_ISDIR(mode):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
    if not stat.S_ISREG(mode):
        raise OSError(errno.EINVAL, errors.NOT_A_REGULAR_FILE, str(path))
