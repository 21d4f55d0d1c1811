"""Writing an output file safely: the one way ``compile -o``, ``opt -o`` and ``show -o`` write.

Three promises (issue 19):

* **An input is never overwritten.** An output that names an input file -- the same path,
  a symlink to it, a hard link (the same inode) -- is refused with one line before anything
  is written, as compilers do (``compile -o prog.tiny prog.tiny`` used to leave an ELF file
  where the program was). The input ``-`` is whatever standard input is: when it is a
  regular file, an output that is that file (``opt - -o in.tiny < in.tiny``: the same
  device and inode, through any link) is refused too (issue 39).
* **No more than ``open(path, "w")`` may.** An existing file this user may not write (a
  read-only file, maybe another user's, in a directory we may write) is refused, not
  renamed over: the rename needs only the directory's permission (issue 39).
* **No half files.** A regular file is written to a temporary file in the target's own
  directory and renamed over the target (atomic on POSIX), so a failure (a full disk, an
  interrupt) leaves the old file or nothing, never a truncated one. A symlink keeps pointing
  at the new file (the rename happens where the link points).
* **Only what we create is chmodded.** An existing character device or FIFO (``-o
  /dev/null``, ``-o /dev/stdout`` on a terminal, a FIFO someone reads) is written in place:
  never renamed over, never chmodded (as root, ``chmod`` on a device node changes the
  device's mode for everyone). A FIFO nobody reads is refused rather than waited on;
  directories, block devices and sockets are refused. An executable gets its mode bits
  (``0777`` less the umask) on the temporary file, before the rename.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import stat
import tempfile
from collections.abc import Sequence

from ssa_course.errors import UsageError


def write_output(path: str, data: str | bytes, inputs: Sequence[str] = (), *,
                 executable: bool = False) -> None:
    """Write ``data`` (text as UTF-8) to ``path`` under the promises above; ``inputs`` are
    the files the command read (``-``, standard input, is not a file)."""
    if not path:
        raise UsageError("the output file name is empty")
    if "\0" in path:
        raise UsageError(f"a file name cannot contain a NUL character: {path!r}")
    payload = data.encode("utf-8") if isinstance(data, str) else bytes(data)
    refuse_inputs(path, inputs)
    try:
        st: os.stat_result | None = os.stat(path)
    except FileNotFoundError:
        st = None
    except OSError as e:
        raise UsageError(f"cannot write {path}: {_reason(e)}") from None
    if st is not None and stat.S_ISREG(st.st_mode) and not os.access(path, os.W_OK):
        raise UsageError(f"cannot write {path}: permission denied (the file is not "
                         "writable)")
    if st is not None and not stat.S_ISREG(st.st_mode):
        if stat.S_ISDIR(st.st_mode):
            raise UsageError(f"cannot write {path}: it is a directory")
        if stat.S_ISCHR(st.st_mode) or stat.S_ISFIFO(st.st_mode):
            _write_in_place(path, payload)
            return
        raise UsageError(f"cannot write {path}: it is not a regular file "
                         f"({_kind(st.st_mode)}); refusing to write over it")
    _write_atomically(path, payload, st, executable)


def refuse_inputs(path: str, inputs: Sequence[str]) -> None:
    """One line if ``path`` resolves to one of ``inputs`` (path, symlink or hard link)."""
    real = os.path.realpath(path)
    for source in inputs:
        if source == "-":
            _refuse_stdin(path)
            continue
        if not source:
            continue
        same = os.path.realpath(source) == real
        if not same:
            try:
                same = os.path.samefile(path, source)
            except OSError:  # the output does not exist yet (or the input vanished)
                same = False
        if same:
            raise UsageError(f"the output {path} is the input file {source}: refusing to "
                             "overwrite it (choose another -o)")


def _refuse_stdin(path: str) -> None:
    """One line if standard input (file descriptor 0) is a regular file and ``path`` (or
    what it links to) is that file: writing there would destroy the program just read."""
    try:
        ours = os.fstat(0)
        theirs = os.stat(path)
    except OSError:  # no standard input, or no output file yet
        return
    if stat.S_ISREG(ours.st_mode) and (ours.st_dev, ours.st_ino) == (theirs.st_dev,
                                                                     theirs.st_ino):
        raise UsageError(f"the output {path} is the input file (standard input): refusing "
                         "to overwrite it (choose another -o)")


def _write_atomically(path: str, payload: bytes, st: os.stat_result | None,
                      executable: bool) -> None:
    target = os.path.realpath(path)  # through symlinks: the link stays a link
    directory, name = os.path.split(target)
    try:
        fd, temp = tempfile.mkstemp(prefix=f".{name[:100]}.", suffix=".tmp",
                                    dir=directory or ".")
    except OSError as e:
        raise UsageError(f"cannot write {path}: {_reason(e)}") from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(payload)
            f.flush()
            os.fchmod(f.fileno(), _mode(st, executable))  # our own new file, nothing else
        os.replace(temp, target)
    except BaseException as e:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        if isinstance(e, OSError):
            raise UsageError(f"cannot write {path}: {_reason(e)}") from None
        raise


def _mode(st: os.stat_result | None, executable: bool) -> int:
    """An existing file keeps its permission bits; a new one gets 0666 (0777 for an
    executable) less the umask, as ``open``/``ld`` would give it."""
    umask = _umask()
    if st is not None:
        mode = stat.S_IMODE(st.st_mode) & 0o777
        return mode | (0o111 & ~umask) if executable else mode
    return (0o777 if executable else 0o666) & ~umask


def _umask() -> int:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)  # no /proc: read it the classic way (set and restore)
    os.umask(mask)
    return mask


def _write_in_place(path: str, payload: bytes) -> None:
    """A character device or a FIFO: opened without creating or truncating anything."""
    try:
        # O_NONBLOCK: a FIFO without a reader fails at once (ENXIO) instead of waiting
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as e:
        if e.errno == errno.ENXIO:
            raise UsageError(f"cannot write {path}: no process is reading it") from None
        raise UsageError(f"cannot write {path}: {_reason(e)}") from None
    try:
        flags = fcntl.fcntl(fd, fcntl.F_GETFL)
        fcntl.fcntl(fd, fcntl.F_SETFL, flags & ~os.O_NONBLOCK)
        view = memoryview(payload)
        while view:
            view = view[os.write(fd, view):]
    except OSError as e:
        raise UsageError(f"cannot write {path}: {_reason(e)}") from None
    finally:
        os.close(fd)


def _kind(mode: int) -> str:
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a special file"


def _reason(e: OSError) -> str:
    if e.errno in (errno.EACCES, errno.EPERM):
        return "permission denied"
    if e.errno == errno.ENOENT:
        return "no such directory"
    if e.errno == errno.ENAMETOOLONG:
        return "file name too long"
    return e.strerror or str(e)
