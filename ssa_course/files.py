"""Reading a program file safely: size-capped, UTF-8 checked, every failure one message.

A learner may point the tools at anything: a directory, a binary, ``/dev/zero`` (which
never ends), a file saved in Latin-1. Each becomes a :class:`UsageError` naming the file
and, for bad bytes, where they are; nothing is read past :data:`MAX_SOURCE_BYTES`.
"""

from __future__ import annotations

import errno

from ssa_course.errors import ArgumentTypeError, UsageError

MAX_SOURCE_BYTES = 10 * 1024 * 1024  # far beyond any program a person writes


def read_source(path: str, limit: int = MAX_SOURCE_BYTES) -> str:
    """The text of the program file ``path`` (UTF-8, an optional byte-order mark dropped)."""
    if not isinstance(path, str) or not path:
        raise ArgumentTypeError(f"load_file(): 'path' must be a file name (str or Path), "
                                f"not {path!r}"[:200])
    if "\0" in path:
        raise UsageError(f"a file name cannot contain a NUL character: {path!r}")
    try:
        with open(path, "rb") as f:
            data = f.read(limit + 1)  # one byte more tells "too big" from "exactly full"
    except FileNotFoundError:
        raise UsageError(f"no such file: {path}") from None
    except IsADirectoryError:
        raise UsageError(f"{path} is a directory, not a program file") from None
    except PermissionError:
        raise UsageError(f"cannot read {path}: permission denied") from None
    except OSError as e:
        if e.errno == errno.ENAMETOOLONG:
            raise UsageError(f"file name too long: {path[:60]}...") from None
        raise UsageError(f"cannot read {path}: {e.strerror or e}") from None
    if len(data) > limit:
        raise UsageError(f"{path} is larger than {limit // (1024 * 1024)} MB: "
                         "not a program file (or far too big for this course)")
    return decode_source(data, path)


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
