"""Reading an export file's bytes, and only a regular file's.

A folder of exports can hold a named pipe or a link to a device under a ``*.json`` name: reading
a pipe no one writes waits forever, and ``/dev/zero`` never ends. Every reader of export files
(``load_trace``, ``load_traces``, ``pnb.audit``, ``pnb.fleet``) reads through here, so such a file
is one more file that cannot be read, said in the same words by each.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from .. import errors

# Opening a pipe for reading waits for a writer unless non-blocking; a regular file ignores the flag.
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)


def read_export_bytes(path: Path) -> bytes:
    """The bytes of the regular file at ``path``; ``OSError`` (its ``strerror`` says why) otherwise.

    >>> read_export_bytes(Path("trace.json"))[:30]
    """
    descriptor = os.open(path, _OPEN_FLAGS)
    with open(descriptor, "rb") as file:
        mode = os.fstat(descriptor).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
        if not stat.S_ISREG(mode):
            raise OSError(errno.EINVAL, errors.NOT_A_REGULAR_FILE, str(path))
        return file.read()
