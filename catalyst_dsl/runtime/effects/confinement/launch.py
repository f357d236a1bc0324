"""The launcher: the one process that starts every step program of a catalyst process.

Started by `launcher.py` (catalyst's side of it) when a run first starts a program, as
`python -I -S` importing this module from its folder and calling `main([_, CONTROL_FD,
PARENT_PID])`; never imported by catalyst. It uses the standard library only, because `-S`
leaves the virtualenv (and catalyst itself) off the path. It is single-threaded, which is
why it may fork and run Python in the child: catalyst, whose threads run `parallel`
branches, never does.

CONTROL_FD is a Unix socket whose other end is catalyst's. A request is a length, a
dictionary in `marshal`'s format (`argv`, `env`, `cwd`, `mounts`, whether a ruleset
comes; only catalyst holds the other end, and anyone who could write there could ask for
an unconfined program anyway) and, passed with it, the step's stdin, stdout, stderr, its
go pipe and its Landlock ruleset. For each, the launcher
forks a *keeper*, answers with the keeper's pid (and its start time, which the keeper
reads itself) once it leads its own group, and, when
the keeper has ended, with its wait status. The keeper does for one program what this
launcher did per program when it was started once per step:

1. It leads a new session and process group, and asks for a signal when the launcher
   dies (a parent-death signal); the handler kills its whole group and every process
   below it.
2. It keeps the step's standard streams, the go pipe and the ruleset, and closes every
   other descriptor: nothing of the launcher, its socket least of all, reaches a program.
3. It waits for one byte on the go pipe: catalyst writes it once the group is recorded
   beside the run's snapshot, so no program runs that a resume could not find. End of
   file (catalyst died first) means nothing runs.
4. `mounts` (or null for none) asks for a mount namespace of the step's own: the paths
   in `readOnly` (`.git/`, the state directory, the settings and key files) bound
   read-only over themselves, so no mode, owner or time there can change (Landlock does
   not cover chmod, chown and utime); the `writable` ones beneath them (the scratch space)
   bound writable again; and a fresh tmpfs on /dev/shm, granted to the ruleset, which
   dies with the step. As root only the mount namespace is new; any other user gets a
   user namespace that maps its own uid and gid to themselves. Mounts never propagate
   back (`/` is made private first). Catalyst asks for it only where it probed that the
   namespaces work (a `probe` request); a failure then stops the program unrun.
5. It applies the step's Landlock ruleset (when one came) with no-new-privileges, which
   the program and all its children inherit and cannot lift; a Landlock-confined
   process may not mount or unmount, so the read-only mounts stay. The launcher itself
   is never confined and never enters a namespace: each keeper starts from it unconfined
   and takes its own step's rules only, never rules left from another step.
6. It starts the program (posix_spawn: no copy of a Python process's pages), waits for
   it, and exits as the program did (127 when the program could not be started at all).
   SIGTERM and SIGINT sent to the group reach the program; the keeper ignores them and
   ends when the program does. A keeper that dies first leaves its program to the
   launcher, a subreaper, which kills it and what it started.
7. It is a child subreaper: whatever the program leaves behind (a background job, a
   double fork, `setsid`, `nohup`) becomes the keeper's child when orphaned, and is
   killed before the keeper exits, so nothing a step starts outlives it.

The launcher ends with catalyst: when catalyst's end of the socket closes (its process
exited, whatever killed it) or its process is gone (a pidfd; else checked every second),
it kills every keeper's group and every process below it, then exits. It is a subreaper
too, so the leftovers of a keeper killed by a signal come to it and are killed. It makes
itself non-dumpable: no other process of its user may read its memory or take its socket
(ptrace, `pidfd_getfd`); a confined program could not anyway, Landlock keeping it from
every process outside its domain.
"""

import _ctypes  # the C module: see `_Libc`
import _signal as signal  # the C modules: their Python wrappers import enum, a third of the start
import _socket as socket
import _struct as struct
import fcntl
import gc
import marshal
import posix as os  # os.py's own code (and collections.abc, which it imports) would be a third of the imports
import select
import sys

_PR_SET_PDEATHSIG = 1
_PR_SET_DUMPABLE = 4
_PR_SET_NO_NEW_PRIVS = 38
_PR_SET_CHILD_SUBREAPER = 36
_RESTRICT_SELF = 446
#: A keeper's parent-death signal: caught, so the group can be killed first.
_PARENT_GONE = signal.SIGUSR2
#: Exit code when the program could not be started at all (as a shell reports it).
_CANNOT_RUN = 127
#: A request's and an answer's length, before its dictionary.
_LENGTH = struct.Struct("!I")
#: A file descriptor in SCM_RIGHTS data.
_FD = struct.Struct("i")
#: The descriptors a request carries: stdin, stdout, stderr, the go pipe, the ruleset.
_STDIN, _STDOUT, _STDERR, _GO, _RULESET = range(5)

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
_CLOSE_RANGE = 436


# ctypes' Python layer (`import ctypes`) cost the launcher's start about 4 ms of CPU (15M
# instructions, half again Python's own start), a fifth of a 20-step run's launcher; these
# few types and one library are all it is used for here, made from its C module directly.
class _c_int(_ctypes._SimpleCData):
    _type_ = "i"


class _c_uint32(_ctypes._SimpleCData):
    _type_ = "I"


class _c_uint64(_ctypes._SimpleCData):
    _type_ = "Q"


class _c_ulong(_ctypes._SimpleCData):
    _type_ = "L"


class _Function(_ctypes.CFuncPtr):
    """A C function returning int, with errno kept for `_ctypes.get_errno` (as ctypes.CDLL's
    functions with use_errno=True)."""

    _flags_ = _ctypes.FUNCFLAG_CDECL | _ctypes.FUNCFLAG_USE_ERRNO
    _restype_ = _c_int


class _Libc:
    """The C library's functions by name, as `ctypes.CDLL(None, use_errno=True)` gives them."""

    def __init__(self):
        self._handle = _ctypes.dlopen(None)  # the functions this process has (libc's)
        # Looked up here, once: a keeper that looked one up would make it anew at every step
        # (what a fork makes dies with it), and copy the pages it touched doing so.
        for name in ("prctl", "syscall", "unshare", "mount"):
            getattr(self, name)

    def __getattr__(self, name):
        function = _Function((name, self))
        setattr(self, name, function)
        return function


class _PathBeneath(_ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", _c_uint64), ("parent_fd", _c_int)]


def main(argv):
    # No cycles to collect in a loop that only answers requests, and a collection in a
    # keeper would touch every object the fork shares with the launcher, copying its pages.
    gc.disable()
    _Launcher(int(argv[1]), int(argv[2])).serve()


class _Launcher:
    def __init__(self, control_fd, parent):
        self.libc = _Libc()
        self.libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)
        self.libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
        self.control = socket.socket(fileno=control_fd)
        #: Keepers alive: pid -> the id of the request that started it.
        self.keepers = {}
        # A child's end wakes the loop through this pipe (Python writes the signal's number).
        self.woken, wake = os.pipe()
        os.set_blocking(self.woken, False)
        os.set_blocking(wake, False)
        signal.set_wakeup_fd(wake)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        self.poll = select.poll()
        self.poll.register(self.control, select.POLLIN)
        self.poll.register(self.woken, select.POLLIN)
        self.parent = parent
        try:
            self.parent_gone = os.pidfd_open(parent)  # readable once catalyst's process has exited
            self.poll.register(self.parent_gone, select.POLLIN)
        except (AttributeError, OSError):  # Linux before 5.3: asked every second instead
            self.parent_gone = None
        if os.getppid() != parent:
            self._end()  # catalyst is gone already (the pidfd may name another process)

    def serve(self):
        while True:
            ready = {fd for fd, _ in self.poll.poll(None if self.parent_gone is not None else 1000)}
            if self.parent_gone in ready or os.getppid() != self.parent:
                self._end()
            if self.woken in ready:
                try:
                    os.read(self.woken, 4096)
                except BlockingIOError:
                    pass
                self._reap()
            if self.control.fileno() in ready:
                self._answer()

    def _answer(self):
        """Read one request and answer it; end when catalyst has closed its end."""
        try:
            head, ancillary, flags, _ = self.control.recvmsg(_LENGTH.size, socket.CMSG_SPACE(5 * _FD.size))
        except OSError:
            self._end()
        fds = [
            fd
            for level, kind, data in ancillary
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS
            for (fd,) in _FD.iter_unpack(data[: len(data) - len(data) % _FD.size])
        ]
        try:
            if not head:
                self._end()
            head += self._exactly(_LENGTH.size - len(head))
            try:
                request = marshal.loads(self._exactly(_LENGTH.unpack(head)[0]))
            except (ValueError, EOFError, TypeError):
                self._end()  # not a request catalyst wrote: nothing on this channel can be trusted
            if request.get("probe"):
                answer = {"problem": self._probe()}
            elif flags & socket.MSG_CTRUNC or len(fds) != 4 + bool(request["ruleset"]):
                answer = {"error": "the request's descriptors did not all arrive", "errno": 0}
            else:
                answer = self._start(request, fds)
        finally:
            for fd in fds:
                os.close(fd)  # the keeper has its copies
        self._send({"id": request["id"], **answer})

    def _exactly(self, size):
        data = b""
        while len(data) < size:
            try:
                more = self.control.recv(size - len(data))
            except OSError:
                more = b""
            if not more:
                self._end()
            data += more
        return data

    def _send(self, answer):
        data = marshal.dumps(answer)
        try:
            self.control.sendall(_LENGTH.pack(len(data)) + data)
        except OSError:
            self._end()  # catalyst is gone

    def _start(self, request, fds):
        """Fork the keeper of one program; its pid once it leads its own group."""
        launcher = os.getpid()
        ready, told = os.pipe()
        try:
            pid = os.fork()
        except OSError as error:
            os.close(ready)
            os.close(told)
            return {"error": error.strerror, "errno": error.errno}
        if pid == 0:
            os.close(ready)
            _keep(self.libc, self.control, request, fds, told, launcher)
        os.close(told)
        said = _read_all(ready)
        os.close(ready)
        if said[:1] != b"1":
            return {"error": "the program's keeper ended before it started", "errno": 0}
        self.keepers[pid] = request["id"]
        return {"pid": pid, "start": int(said[1:]) if said[1:].isdigit() else None}

    def _probe(self):
        """Why a keeper cannot enter the namespaces `_private_mounts` needs here, or None:
        tried in a child (seccomp, AppArmor or a container may forbid what the kernel offers)."""
        said, told = os.pipe()
        pid = os.fork()
        if pid == 0:
            try:
                signal.set_wakeup_fd(-1)
                os.close(said)
                _enter_namespaces(self.libc)
                _mount(self.libc, None, "/", None, _MS_REC | _MS_PRIVATE)
            except OSError as error:
                os.write(told, str(error).encode("utf-8", "replace"))
                os._exit(1)
            except BaseException:
                os._exit(1)
            os._exit(0)
        os.close(told)
        reason = _read_all(said).decode("utf-8", "replace").strip()
        os.close(said)
        _, status = os.waitpid(pid, 0)
        return None if status == 0 else (reason or "the launcher's probe failed")

    def _reap(self):
        """Answer for every keeper that ended; kill what ended keepers left behind."""
        left = False
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            request = self.keepers.pop(pid, None)
            if request is not None:
                self._send({"id": request, "status": status})
            # A keeper that exits has killed everything below it, unless a signal ended it
            # (it re-raises the one that ended its program, too: look then as well).
            left = left or request is None or os.WIFSIGNALED(status)
        if not left:
            return
        # Every child that is not a keeper is a leftover: a keeper killed by a signal could
        # not kill its descendants, and orphaned they came to the launcher (a subreaper).
        # Each one killed wakes the loop again, so their own children follow.
        for pid in _children():
            if pid not in self.keepers:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass

    def _end(self):
        """Catalyst is gone: every program with it. Each keeper's group at once, then
        everything below the launcher until nothing is left."""
        for pid in self.keepers:
            try:
                os.killpg(pid, signal.SIGKILL)
            except OSError:
                pass
        _end_descendants()
        os._exit(0)


def _read_all(fd):
    data = b""
    while True:
        more = os.read(fd, 4096)
        if not more:
            return data
        data += more


def _keep(libc, control, request, fds, told, launcher):
    """In the forked child: become the keeper of one program. Never returns: a keeper that
    fell back into the launcher's loop would be a second launcher."""
    try:
        signal.set_wakeup_fd(-1)  # the launcher's: Python would write into a step's stream
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        control.detach()  # closed below with the rest; the object must never close a reused number
        os.setsid()
        # Only now, leading a group of its own: the handler kills the caller's group.
        signal.signal(_PARENT_GONE, _kill_group)
        if libc.prctl(_PR_SET_PDEATHSIG, int(_PARENT_GONE), 0, 0, 0) != 0 or os.getppid() != launcher:
            _kill_group()  # no signal would come, or the launcher is already gone
        os.write(told, b"1" + _own_start_time())
        _keep_only(libc, [*fds, -1][:5])
        # Back to dumpable (non-dumpable came from the launcher): a user namespace's maps are
        # written through /proc/self, which is root's for a process that is not dumpable.
        libc.prctl(_PR_SET_DUMPABLE, 1, 0, 0, 0)
        _run(libc, request)
    except BaseException as error:
        _fail(f"cannot run {request['argv'][0]}: {error}")
    finally:
        os._exit(_CANNOT_RUN)


def _own_start_time():
    """This process's start time (field 22 of /proc/self/stat, clock ticks after boot) as
    digits, or b"": catalyst records it with the group (`process_groups.py`), and read here
    it costs catalyst no look into another process's /proc entry while that one runs."""
    try:
        fd = os.open("/proc/self/stat", os.O_RDONLY | os.O_CLOEXEC)
        try:
            stat = os.read(fd, 4096)
        finally:
            os.close(fd)
        started = stat[stat.rfind(b")") + 2 :].split()[19]
    except (OSError, IndexError):
        return b""
    return started if started.isdigit() else b""


def _keep_only(libc, fds):
    """Put `fds` at 0, 1, 2… (-1: that number stays closed), and close every other
    descriptor, whatever it is: the program inherits its three streams and nothing else."""
    # Moved above every number they go to first, so that none is overwritten before it moved.
    high = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, len(fds)) if fd >= 0 else -1 for fd in fds]
    for target, fd in enumerate(high):
        if fd >= 0:
            os.dup2(fd, target, inheritable=target <= _STDERR)
        elif target < len(fds):
            _close(target)
    # One close_range(2) (Linux 5.9); else each descriptor /proc lists. A keeper is a fork
    # of the launcher: every Python object it touches copies a page, a listing's many.
    if libc.syscall(_CLOSE_RANGE, len(fds), _c_uint32(0xFFFFFFFF), 0) == 0:
        return
    for name in os.listdir("/proc/self/fd"):
        if int(name) >= len(fds):
            _close(int(name))


def _exists(path, directory=False):
    """os.path.lexists (or, with `directory`, os.path.isdir) with the os module's calls
    alone: a keeper runs as little of the launcher's Python as it can (`_keep_only`)."""
    try:
        mode = os.stat(path).st_mode if directory else os.lstat(path).st_mode
    except (OSError, ValueError):
        return False
    return not directory or mode & 0o170000 == 0o040000


def _close(fd):
    try:
        os.close(fd)
    except OSError:
        pass  # not open (the listing's own descriptor, closed already)


def _run(libc, request):
    """The keeper's work, from the go byte to the program's end (docstring, 3 to 7)."""
    program = request["argv"]
    if os.read(_GO, 1) != b"1":
        os._exit(_CANNOT_RUN)
    os.close(_GO)
    try:
        os.chdir(request["cwd"])
    except OSError as error:
        _fail(f"cannot run {program[0]}: its working directory {request['cwd']}: {error.strerror}")
    ruleset_fd = _RULESET if request["ruleset"] else -1
    if request["mounts"] is not None:
        _private_mounts(libc, request["mounts"], ruleset_fd)
        _drop_capabilities(libc)
    if ruleset_fd >= 0:
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 or libc.syscall(_RESTRICT_SELF, ruleset_fd, 0) != 0:
            _fail(f"cannot confine the program: {os.strerror(_ctypes.get_errno())}")
        os.close(ruleset_fd)
    libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        child = _spawn(program, request["env"])
    except OSError as error:
        _fail(f"cannot run {program[0]}: {error.strerror}")
    _, status = os.waitpid(child, 0)
    _end_descendants()
    if os.WIFSIGNALED(status):
        killed_by = os.WTERMSIG(status)
        signal.signal(killed_by, signal.SIG_DFL)
        os.kill(os.getpid(), killed_by)
        os._exit(128 + killed_by)
    os._exit(os.waitstatus_to_exitcode(status))


def _spawn(program, env):
    """Start `program` as execvpe(3) would find it, with the keeper's ignored signals back
    to their defaults: posix_spawn(3), whose child shares the keeper's memory until it execs
    instead of copying a Python process's pages as a fork does."""
    # Python ignores SIGPIPE and SIGXFSZ, the keeper SIGTERM and SIGINT, and an ignored
    # signal stays ignored across exec: the program gets the defaults a shell would give it
    # (`yes | head` ends, a timeout's SIGTERM stops it). Caught ones are reset by exec.
    defaults = (signal.SIGPIPE, signal.SIGXFSZ, signal.SIGTERM, signal.SIGINT)
    if "/" in program[0]:  # as a directory in it (os.path.dirname, without posixpath's code)
        candidates = [program[0]]
    else:
        candidates = [_joined(directory, program[0]) for directory in env.get("PATH", "/bin:/usr/bin").split(":")]
    first_other = last = None
    for path in candidates:
        try:
            return os.posix_spawn(path, program, env, setsigdef=defaults)
        except (FileNotFoundError, NotADirectoryError) as error:
            last = error
        except OSError as error:
            last = error
            first_other = first_other or error  # as execvpe: EACCES found on the way is what it says
    raise first_other or last


def _joined(directory, name):
    """os.path.join(directory, name) for a `name` without a slash, as execvpe(3) joins a
    directory of PATH and a program (an empty directory is the working one)."""
    if not directory:
        return name
    return directory + name if directory.endswith("/") else f"{directory}/{name}"


#: How os.fsencode turns a path into bytes (`posix` has no os.fsencode).
_FS_ENCODING = (sys.getfilesystemencoding(), sys.getfilesystemencodeerrors())


def _private_mounts(libc, mounts, ruleset_fd):
    try:
        _enter_namespaces(libc)
        _mount(libc, None, "/", None, _MS_REC | _MS_PRIVATE)
        for path in mounts["readOnly"]:
            if _exists(path):
                _mount(libc, path, path, None, _MS_BIND)
                _mount(libc, None, path, None, _MS_BIND | _MS_REMOUNT | _MS_RDONLY | _kept_flags(path))
        for path in mounts["writable"]:
            _mount(libc, path, path, None, _MS_BIND)
            _mount(libc, None, path, None, _MS_BIND | _MS_REMOUNT | _kept_flags(path))
        # The working directory was looked up before the mounts: looked up again, a program
        # started inside a read-only path (`cwd: temp://`) cannot reach it by `..` unmounted.
        os.chdir(os.getcwd())
        if mounts.get("shm") and _exists("/dev/shm", directory=True):
            _mount(libc, "tmpfs", "/dev/shm", "tmpfs", _MS_NOSUID | _MS_NODEV, "mode=1777")
            if ruleset_fd >= 0:
                _allow(libc, ruleset_fd, "/dev/shm", mounts["shmRights"])
    except OSError as error:
        _fail(f"cannot give the program its private mounts: {error}")


class _CapHeader(_ctypes.Structure):
    _fields_ = [("version", _c_uint32), ("pid", _c_int)]


class _CapData(_ctypes.Structure):
    _fields_ = [("effective", _c_uint32), ("permitted", _c_uint32), ("inheritable", _c_uint32)]


#: The two words of capability sets capget(2) fills, as a type made once in the launcher.
_CapDataPair = _CapData * 2


def _drop_capabilities(libc):
    """Take `_DROPPED_CAPABILITIES` from the bounding set (nothing the program runs gets
    them back) and from the launcher's own sets. Mounts are made by then."""
    for capability in _DROPPED_CAPABILITIES:
        libc.prctl(_PR_CAPBSET_DROP, capability, 0, 0, 0)  # EINVAL for one this kernel lacks
    header, data = _CapHeader(_CAPABILITY_VERSION_3, 0), _CapDataPair()
    if libc.syscall(_CAPGET, _ctypes.byref(header), data) != 0:
        _fail(f"cannot read the program's capabilities: {os.strerror(_ctypes.get_errno())}")
    for capability in _DROPPED_CAPABILITIES:
        word, bit = divmod(capability, 32)
        for field in ("effective", "permitted", "inheritable"):
            setattr(data[word], field, getattr(data[word], field) & ~(1 << bit))
    if libc.syscall(_CAPSET, _ctypes.byref(header), data) != 0:
        _fail(f"cannot drop the program's capabilities: {os.strerror(_ctypes.get_errno())}")


def _enter_namespaces(libc):
    """A new mount namespace; for a user other than root, inside a user namespace that
    maps its uid and gid to themselves (files keep their owners, the program its ids)."""
    uid, gid = os.geteuid(), os.getegid()
    if libc.unshare(_CLONE_NEWNS | _CLONE_NEWIPC | _CLONE_NEWUTS) == 0:
        return
    if libc.unshare(_CLONE_NEWUSER | _CLONE_NEWNS | _CLONE_NEWIPC | _CLONE_NEWUTS) != 0:
        raise OSError(_ctypes.get_errno(), f"unshare: {os.strerror(_ctypes.get_errno())}")
    for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"), ("gid_map", f"{gid} {gid} 1")):
        with open(f"/proc/self/{name}", "w") as file:
            file.write(text)


def _mount(libc, source, target, kind, flags, data=None):
    encode = lambda text: None if text is None else text.encode(*_FS_ENCODING)  # noqa: E731  (any byte a path holds)
    if libc.mount(encode(source), encode(target), encode(kind), _c_ulong(flags), encode(data)) != 0:
        code = _ctypes.get_errno()
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
                _c_int(ruleset_fd),
                _c_int(_RULE_PATH_BENEATH),
                _ctypes.byref(rule),
                _c_uint32(0),
            )
            != 0
        ):
            code = _ctypes.get_errno()
            raise OSError(code, f"landlock_add_rule for {path}: {os.strerror(code)}")
    finally:
        os.close(target)


def _kill_group(*_):
    _end_descendants()
    os.killpg(os.getpgrp(), signal.SIGKILL)


def _end_descendants():
    """Kill every process below this one (a keeper, or the launcher once catalyst is
    gone), wherever its group or session. A killed process's children are handed to this
    one (a subreaper) before it can be reaped, so the loop ends only when none is left."""
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
    """This process's children (the kernel's list holds those that ended and are not
    reaped yet too: a signal to one does nothing)."""
    me = os.getpid()
    try:
        # The kernel's list (CONFIG_PROC_CHILDREN): one read, not one per process.
        listed = os.open(f"/proc/{me}/task/{me}/children", os.O_RDONLY | os.O_CLOEXEC)
        try:
            return [int(pid) for pid in _read_all(listed).split()]
        finally:
            os.close(listed)
    except OSError:
        pass
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if fields[1].decode() == str(me) and fields[0] != b"Z":
            found.append(int(name))
    return found


def _fail(message):
    os.write(2, f"catalyst: {message}\n".encode("utf-8", "replace"))
    os._exit(_CANNOT_RUN)


if __name__ == "__main__":
    main(sys.argv)
