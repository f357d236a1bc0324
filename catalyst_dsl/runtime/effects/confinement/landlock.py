"""Linux Landlock rulesets, built in catalyst's own process through the system calls.

The ruleset is built here (in the parent, where Python is safe) and handed to the
program's keeper as an open file descriptor, which only applies it (`launch.py`). No
binding from PyPI is used: three system calls and two small structs are less to trust
than a dependency, and the numbers are the same on every Linux architecture since 5.13.

Only write-like rights are "handled", so reading and executing stay free everywhere;
each right is masked to what the running kernel's ABI knows (docs/running.md lists them).
"""

from __future__ import annotations

import ctypes
import errno
import os
import stat
import sys
from pathlib import Path

_CREATE_RULESET, _ADD_RULE = 444, 445
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1

# Access rights on files and directories (linux/landlock.h) and the ABI that brought each.
WRITE_FILE = 1 << 1
REMOVE_DIR = 1 << 4
REMOVE_FILE = 1 << 5
MAKE_CHAR = 1 << 6
MAKE_DIR = 1 << 7
MAKE_REG = 1 << 8
MAKE_SOCK = 1 << 9
MAKE_FIFO = 1 << 10
MAKE_BLOCK = 1 << 11
MAKE_SYM = 1 << 12
REFER = 1 << 13  # ABI 2: rename and link between directories
TRUNCATE = 1 << 14  # ABI 3: truncate(2) and O_TRUNC

_WRITES_ABI1 = (
    WRITE_FILE
    | REMOVE_DIR
    | REMOVE_FILE
    | MAKE_CHAR
    | MAKE_DIR
    | MAKE_REG
    | MAKE_SOCK
    | MAKE_FIFO
    | MAKE_BLOCK
    | MAKE_SYM
)
#: Rights that mean something on a file, not only on a directory.
_FILE_RIGHTS = WRITE_FILE | TRUNCATE


def handled_rights(abi: int) -> int:
    """The write rights a ruleset restricts on a kernel of Landlock `abi`.

    Read, execute and (ABI 5) device ioctl rights are deliberately not handled, so a
    confined program reads and runs what its user can; network (ABI 4) and scoping
    (ABI 6) are not restricted either.
    """
    rights = _WRITES_ABI1
    if abi >= 2:
        rights |= REFER
    if abi >= 3:
        rights |= TRUNCATE
    return rights


class _RulesetAttr(ctypes.Structure):
    # Only the first field: the kernel accepts a shorter struct, and the later fields
    # (network, scoping) stay unrestricted.
    _fields_ = [("handled_access_fs", ctypes.c_uint64)]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


_libc = None


def _syscall():
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
        _libc.syscall.restype = ctypes.c_long
    return _libc.syscall


def abi_version() -> int:
    """The kernel's Landlock ABI, or 0 where there is none (old kernel, not Linux, disabled
    at boot, or forbidden by a seccomp filter). `CATALYST_LANDLOCK=off` makes it 0 too, to
    try the fallback on a machine that has Landlock."""
    if not sys.platform.startswith("linux") or os.environ.get("CATALYST_LANDLOCK", "").lower() == "off":
        return 0
    try:
        version = _syscall()(_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(_CREATE_RULESET_VERSION))
    except (OSError, AttributeError):
        return 0
    return max(int(version), 0)


class LandlockError(OSError):
    """A ruleset could not be built; the message says which path or call."""


class PathMoved(LandlockError):
    """A path to allow led somewhere else when opened than when it was resolved: a link was
    swapped in on it meanwhile (by a program running beside the step)."""


def build_ruleset(abi: int, writable: list[Path]) -> int:
    """A ruleset fd that lets a program write only beneath `writable` (directories or
    files, which must exist). The caller closes it once the launcher has it."""
    rights = handled_rights(abi)
    attr = _RulesetAttr(rights)
    fd = _syscall()(_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(ctypes.sizeof(attr)), ctypes.c_uint32(0))
    if fd < 0:
        raise _error("landlock_create_ruleset")
    try:
        for path in writable:
            _allow(fd, path, rights)
    except BaseException:
        os.close(fd)
        raise
    return fd


#: Open handles of the device files rules were added for, by path: a device node does not
#: move, so each is opened and checked once a process, not at every program (five system
#: calls each, six devices a step). Closed with the process; never inherited (O_CLOEXEC).
_DEVICES: dict[str, int] = {}


def _allow(ruleset: int, path: Path, rights: int) -> None:
    kept = _DEVICES.get(os.fspath(path))
    if kept is not None:
        _add_rule(ruleset, path, kept, rights & _FILE_RIGHTS)
        return
    try:
        target = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError as error:
        raise LandlockError(error.errno, f"cannot open {path} to allow writes beneath it: {error.strerror}") from None
    try:
        # `writable` holds real paths: opened, each must still be itself, or a rule would
        # attach to wherever a link swapped in since leads.
        try:
            opened = os.readlink(f"/proc/self/fd/{target}")
        except OSError:
            opened = os.fspath(path)  # no /proc to ask
        if opened != os.fspath(path):
            raise PathMoved(0, f"{path} led to {opened} when opened to allow writes beneath it")
        # Of what was opened, not the name again: a stat by path could see another file.
        mode = os.fstat(target).st_mode
        _add_rule(ruleset, path, target, rights if stat.S_ISDIR(mode) else rights & _FILE_RIGHTS)
        if stat.S_ISCHR(mode) and os.fspath(path).startswith("/dev/"):
            _DEVICES[os.fspath(path)], target = target, -1  # kept for the next rulesets
    finally:
        if target >= 0:
            os.close(target)


def _add_rule(ruleset: int, path: Path, target: int, allowed: int) -> None:
    rule = _PathBeneathAttr(allowed, target)
    if (
        _syscall()(
            _ADD_RULE,
            ctypes.c_int(ruleset),
            ctypes.c_int(_RULE_PATH_BENEATH),
            ctypes.byref(rule),
            ctypes.c_uint32(0),
        )
        != 0
    ):
        raise _error(f"landlock_add_rule for {path}")


def _error(call: str) -> LandlockError:
    code = ctypes.get_errno() or errno.EINVAL
    return LandlockError(code, f"{call} failed: {os.strerror(code)}")
