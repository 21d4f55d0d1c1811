"""Reading a program file safely: size-capped, UTF-8 checked, every failure one message.

A learner may point the tools at anything: a directory, a binary, ``/dev/zero`` (which
never ends), a FIFO (which may never open), a file saved in Latin-1. Each becomes a
:class:`UsageError` naming the file and, for bad bytes, where they are; only regular files
(and ``-``, standard input) are read, nothing past :data:`MAX_SOURCE_BYTES`.
"""

from __future__ import annotations

import errno
import os
import stat
import sys

from ssa_course.errors import ArgumentTypeError, UsageError

MAX_SOURCE_BYTES = 10 * 1024 * 1024  # far beyond any program a person writes


def read_source(path: str, limit: int = MAX_SOURCE_BYTES) -> str:
    """The text of the program file ``path`` (UTF-8, an optional byte-order mark dropped);
    ``-`` reads standard input. Anything but a regular file (a FIFO, a device such as
    ``/dev/zero``, a socket) is refused before a byte is read: a FIFO with no writer would
    otherwise hang the tool."""
    if not isinstance(path, str) or not path:
        raise ArgumentTypeError(f"load_file(): 'path' must be a file name (str or Path), "
                                f"not {path!r}"[:200])
    if "\0" in path:
        raise UsageError(f"a file name cannot contain a NUL character: {path!r}")
    if path == "-":
        return decode_source(_read_stdin(limit), "<stdin>")
    try:
        # O_NONBLOCK: opening a FIFO must not wait for a writer (it is refused below)
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise UsageError(f"no such file: {path}") from None
    except IsADirectoryError:
        raise UsageError(f"{path} is a directory, not a program file") from None
    except PermissionError:
        raise UsageError(f"cannot read {path}: permission denied") from None
    except OSError as e:
        if e.errno == errno.ENAMETOOLONG:
            raise UsageError(f"file name too long: {path[:60]}...") from None
        if e.errno == errno.ENXIO:  # a Unix socket
            raise UsageError(f"{path} is not a regular file (a socket): not a program "
                             "file") from None
        raise UsageError(f"cannot read {path}: {e.strerror or e}") from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        if stat.S_ISDIR(mode):
            raise UsageError(f"{path} is a directory, not a program file")
        raise UsageError(f"{path} is not a regular file ({_file_kind(mode)}): not a "
                         "program file (use - to read standard input)")
    with os.fdopen(fd, "rb") as f:
        try:
            data = f.read(limit + 1)  # one byte more tells "too big" from "exactly full"
        except OSError as e:
            raise UsageError(f"cannot read {path}: {e.strerror or e}") from None
    if len(data) > limit:
        raise UsageError(f"{path} is larger than {limit // (1024 * 1024)} MB: "
                         "not a program file (or far too big for this course)")
    return decode_source(data, path)


def _read_stdin(limit: int) -> bytes:
    stream = getattr(sys.stdin, "buffer", None)
    if stream is None:
        raise UsageError("cannot read standard input: it is closed")
    try:
        data = stream.read(limit + 1)
    except OSError as e:
        raise UsageError(f"cannot read standard input: {e.strerror or e}") from None
    if len(data) > limit:
        raise UsageError(f"standard input is larger than {limit // (1024 * 1024)} MB: "
                         "not a program")
    return data


def _file_kind(mode: int) -> str:
    for test, name in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "not a plain file"


def decode_source(data: bytes, path: str) -> str:
    """``data`` as UTF-8 text, or a :class:`UsageError` pointing at the first bad byte."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        line_start = data.rfind(b"\n", 0, e.start) + 1
        col = len(data[line_start:e.start].decode("utf-8", "replace")) + 1
        raise UsageError(f"{path}:{line}:{col}: not UTF-8 text (byte 0x{data[e.start]:02x}); "
                         "save the file as UTF-8") from None
