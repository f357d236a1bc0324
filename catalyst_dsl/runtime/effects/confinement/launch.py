"""The launcher every step program starts through: it confines, then runs the program.

Run as `python -I -S launch.py GO_FD RULESET_FD PARENT_PID MOUNTS -- PROGRAM ARGS...` by
`runtime/effects/process.py`, never imported by catalyst. It uses the standard library only,
because `-S` leaves the virtualenv (and catalyst itself) off the path; catalyst's own
threads never run Python between fork and exec, this single-threaded process does.

1. It asks for a signal when the catalyst thread that started it dies (a parent-death
   signal); the handler kills its whole process group, so a `kill -9` of catalyst takes
   the step's programs and everything they started with it.
2. It waits for one byte on GO_FD: catalyst writes it once the process group is recorded
   beside the run's snapshot, so no program runs that a resume could not find. End of
   file (catalyst died first) means nothing runs.
3. MOUNTS (JSON, or `-` for none) asks for a mount namespace of the step's own: the
   paths in `readOnly` (`.git/`, the state directory, the settings and key files) bound
   read-only over themselves, so no mode, owner or time there can change (Landlock does
   not cover chmod, chown and utime); the `writable` ones beneath them (the scratch space)
   bound writable again; and a fresh tmpfs on /dev/shm, granted to the ruleset, which
   dies with the step. As root only the mount namespace is new; any other user gets a
   user namespace that maps its own uid and gid to themselves. Mounts never propagate
   back (`/` is made private first). Catalyst asks for it only where it probed that the
   namespaces work (`launch.py --probe`); a failure then stops the program unrun.
4. It applies the Landlock ruleset RULESET_FD (-1: none) with no-new-privileges, which
   the program and all its children inherit and cannot lift; a Landlock-confined
   process may not mount or unmount, so the read-only mounts stay.
5. It forks the program (with its own parent-death SIGKILL), waits for it, and exits as
   the program did. SIGTERM and SIGINT sent to the group reach the program; the launcher
   ignores them and ends when the program does.
6. It is a child subreaper: whatever the program leaves behind (a background job, a
   double fork, `setsid`, `nohup`) becomes the launcher's child when orphaned, and is
   killed before the launcher exits, so nothing a step starts outlives it.
"""

import ctypes
import json
import os
import signal
import sys

_PR_SET_PDEATHSIG = 1
_PR_SET_NO_NEW_PRIVS = 38
_PR_SET_CHILD_SUBREAPER = 36
_RESTRICT_SELF = 446
#: The launcher's parent-death signal: caught, so the group can be killed first.
_PARENT_GONE = signal.SIGUSR2
#: Exit code when the program could not be started at all (as a shell reports it).
_CANNOT_RUN = 127

_CLONE_NEWNS, _CLONE_NEWUSER = 0x00020000, 0x10000000
#: System V IPC and the host name are the namespace's own too: shared memory a program
#: makes dies with it, and `hostname` changes nothing outside.
_CLONE_NEWIPC, _CLONE_NEWUTS = 0x08000000, 0x04000000
_PR_CAPBSET_DROP = 24
_CAPGET, _CAPSET = 125, 126
_CAPABILITY_VERSION_3 = 0x20080522
#: Capabilities a program never gets, root or not: they reach around the read-only mounts
#: and Landlock (CAP_SYS_ADMIN: `open_tree` clones a mount without them, mounts, host name;
#: CAP_DAC_READ_SEARCH: `open_by_handle_at`; CAP_LINUX_IMMUTABLE: `chattr +i` keeps a
#: temp folder alive), or change the machine (modules, raw devices, clock, ptrace of
#: others, BPF).
_DROPPED_CAPABILITIES = (2, 9, 12, 16, 17, 18, 19, 21, 22, 25, 27, 31, 32, 33, 34, 38, 39)
_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_NOEXEC = 1, 2, 4, 8
_MS_REMOUNT, _MS_NOATIME, _MS_NODIRATIME, _MS_BIND = 32, 1024, 2048, 4096
_MS_REC, _MS_PRIVATE, _MS_RELATIME = 1 << 14, 1 << 18, 1 << 21
#: Flags of a mount a remount must repeat: a user namespace may not clear them (statvfs
#: bit -> mount bit; they differ for relatime).
_KEPT = (
    (os.ST_NOSUID, _MS_NOSUID),
    (os.ST_NODEV, _MS_NODEV),
    (os.ST_NOEXEC, _MS_NOEXEC),
    (os.ST_NOATIME, _MS_NOATIME),
    (os.ST_NODIRATIME, _MS_NODIRATIME),
    (os.ST_RELATIME, _MS_RELATIME),
)
_ADD_RULE, _RULE_PATH_BENEATH = 445, 1


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def main(argv):
    if argv[1:] == ["--probe"]:
        _probe()
    go_fd, ruleset_fd, parent = int(argv[1]), int(argv[2]), int(argv[3])
    mounts = None if argv[4] == "-" else json.loads(argv[4])
    program = argv[6:]
    libc = ctypes.CDLL(None, use_errno=True)
    signal.signal(_PARENT_GONE, _kill_group)
    if libc.prctl(_PR_SET_PDEATHSIG, int(_PARENT_GONE), 0, 0, 0) != 0 or os.getppid() != parent:
        _kill_group()  # no signal would come, or catalyst is already gone
    with os.fdopen(go_fd, "rb", buffering=0) as go:
        if go.read(1) != b"1":
            os._exit(_CANNOT_RUN)
    if mounts is not None:
        _private_mounts(libc, mounts, ruleset_fd)
        _drop_capabilities(libc)
    if ruleset_fd >= 0:
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 or libc.syscall(_RESTRICT_SELF, ruleset_fd, 0) != 0:
            _fail(f"cannot confine the program: {os.strerror(ctypes.get_errno())}")
        os.close(ruleset_fd)
    libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    launcher = os.getpid()
    child = os.fork()
    if child == 0:
        libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        if os.getppid() != launcher:
            os._exit(_CANNOT_RUN)  # the launcher died before the signal was set
        # Python ignores SIGPIPE and SIGXFSZ, and an ignored signal stays ignored across
        # exec: the program gets the defaults a shell would give it (`yes | head` ends).
        for restored in (_PARENT_GONE, signal.SIGPIPE, signal.SIGXFSZ):
            signal.signal(restored, signal.SIG_DFL)
        try:
            os.execvp(program[0], program)
        except OSError as error:
            _fail(f"cannot run {program[0]}: {error.strerror}")
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _, status = os.waitpid(child, 0)
    _end_descendants()
    if os.WIFSIGNALED(status):
        killed_by = os.WTERMSIG(status)
        signal.signal(killed_by, signal.SIG_DFL)
        os.kill(os.getpid(), killed_by)
        os._exit(128 + killed_by)
    os._exit(os.waitstatus_to_exitcode(status))


def _probe():
    """Exit 0 when this process can enter the namespaces `_private_mounts` needs, else 1
    with the reason on stdout (catalyst asks once per run)."""
    libc = ctypes.CDLL(None, use_errno=True)
    try:
        _enter_namespaces(libc)
        _mount(libc, None, "/", None, _MS_REC | _MS_PRIVATE)
    except OSError as error:
        os.write(1, str(error).encode("utf-8", "replace"))
        os._exit(1)
    os._exit(0)


def _private_mounts(libc, mounts, ruleset_fd):
    try:
        _enter_namespaces(libc)
        _mount(libc, None, "/", None, _MS_REC | _MS_PRIVATE)
        for path in mounts["readOnly"]:
            if os.path.lexists(path):
                _mount(libc, path, path, None, _MS_BIND)
                _mount(libc, None, path, None, _MS_BIND | _MS_REMOUNT | _MS_RDONLY | _kept_flags(path))
        for path in mounts["writable"]:
            _mount(libc, path, path, None, _MS_BIND)
            _mount(libc, None, path, None, _MS_BIND | _MS_REMOUNT | _kept_flags(path))
        # The working directory was looked up before the mounts: looked up again, a program
        # started inside a read-only path (`cwd: temp://`) cannot reach it by `..` unmounted.
        os.chdir(os.getcwd())
        if mounts.get("shm") and os.path.isdir("/dev/shm"):
            _mount(libc, "tmpfs", "/dev/shm", "tmpfs", _MS_NOSUID | _MS_NODEV, "mode=1777")
            if ruleset_fd >= 0:
                _allow(libc, ruleset_fd, "/dev/shm", mounts["shmRights"])
    except OSError as error:
        _fail(f"cannot give the program its private mounts: {error}")


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def _drop_capabilities(libc):
    """Take `_DROPPED_CAPABILITIES` from the bounding set (nothing the program runs gets
    them back) and from the launcher's own sets. Mounts are made by then."""
    for capability in _DROPPED_CAPABILITIES:
        libc.prctl(_PR_CAPBSET_DROP, capability, 0, 0, 0)  # EINVAL for one this kernel lacks
    header, data = _CapHeader(_CAPABILITY_VERSION_3, 0), (_CapData * 2)()
    if libc.syscall(_CAPGET, ctypes.byref(header), data) != 0:
        _fail(f"cannot read the program's capabilities: {os.strerror(ctypes.get_errno())}")
    for capability in _DROPPED_CAPABILITIES:
        word, bit = divmod(capability, 32)
        for field in ("effective", "permitted", "inheritable"):
            setattr(data[word], field, getattr(data[word], field) & ~(1 << bit))
    if libc.syscall(_CAPSET, ctypes.byref(header), data) != 0:
        _fail(f"cannot drop the program's capabilities: {os.strerror(ctypes.get_errno())}")


def _enter_namespaces(libc):
    """A new mount namespace; for a user other than root, inside a user namespace that
    maps its uid and gid to themselves (files keep their owners, the program its ids)."""
    uid, gid = os.geteuid(), os.getegid()
    if libc.unshare(_CLONE_NEWNS | _CLONE_NEWIPC | _CLONE_NEWUTS) == 0:
        return
    if libc.unshare(_CLONE_NEWUSER | _CLONE_NEWNS | _CLONE_NEWIPC | _CLONE_NEWUTS) != 0:
        raise OSError(ctypes.get_errno(), f"unshare: {os.strerror(ctypes.get_errno())}")
    for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"), ("gid_map", f"{gid} {gid} 1")):
        with open(f"/proc/self/{name}", "w") as file:
            file.write(text)


def _mount(libc, source, target, kind, flags, data=None):
    encode = lambda text: None if text is None else os.fsencode(text)  # noqa: E731  (any byte a path holds)
    if libc.mount(encode(source), encode(target), encode(kind), ctypes.c_ulong(flags), encode(data)) != 0:
        code = ctypes.get_errno()
        raise OSError(code, f"mount {target}: {os.strerror(code)}")


def _kept_flags(path):
    found = os.statvfs(path).f_flag
    return sum(flag for bit, flag in _KEPT if found & bit)


def _allow(libc, ruleset_fd, path, rights):
    """Grant `path` (mounted here, so unknown to the ruleset catalyst built) in the ruleset."""
    target = os.open(path, os.O_PATH | os.O_CLOEXEC)
    try:
        rule = _PathBeneath(rights, target)
        if (
            libc.syscall(
                _ADD_RULE,
                ctypes.c_int(ruleset_fd),
                ctypes.c_int(_RULE_PATH_BENEATH),
                ctypes.byref(rule),
                ctypes.c_uint32(0),
            )
            != 0
        ):
            code = ctypes.get_errno()
            raise OSError(code, f"landlock_add_rule for {path}: {os.strerror(code)}")
    finally:
        os.close(target)


def _kill_group(*_):
    _end_descendants()
    os.killpg(os.getpgrp(), signal.SIGKILL)


def _end_descendants():
    """Kill every process below the launcher, wherever its group or session. A killed
    process's children are handed to the launcher (the subreaper) before it can be
    reaped, so the loop ends only when none is left."""
    while True:
        children = _children()
        if not children:
            return
        for pid in children:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        for pid in children:
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass


def _children():
    me = str(os.getpid())
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if fields[1].decode() == me and fields[0] != b"Z":
            found.append(int(name))
    return found


def _fail(message):
    os.write(2, f"catalyst: {message}\n".encode("utf-8", "replace"))
    os._exit(_CANNOT_RUN)


if __name__ == "__main__":
    main(sys.argv)
