"""All of one vfwarpctl run's libvirt commands through ONE `virsh` process:
virsh's interactive shell (`virsh -q -c URI`, commands on standard input)
kept open as a co-process, one command at a time, each with its own
output, error text and success.

Why: a virsh process costs 0.2-0.8 s on a TCG lab host (start-up and a
new connection to libvirtd); an apply of 32 tenant networks ran ~100 of
them (docs/policy.md "Speed"). One process and one connection make each
further command a round trip of milliseconds.

How a command's result is told apart (virsh 11.3, tools/vsh.c):
  - after each command two markers follow, `echo --err M` (printed on
    standard error as "error: M") and `echo M`; the command's output is
    what stdout carries before M, its errors what stderr carries before
    the error marker. Marker text is unique per session (a random token
    and the command's number) and quoted in the input (`"N"`), so that
    readline's echo of the input line never contains it;
  - success: virsh's interactive shell has no exit status per command;
    a failing command prints "error: ..." on stderr (vshError /
    vshReportError, for every failure path of the commands the manager
    uses), so a command that printed anything on stderr failed. Exactly
    one command's result is known at a time, so a failure is charged to
    its step as with one process per command;
  - readline, reading a pipe, still prints the prompt and echoes each
    line on stdout: those are cut off (the exact lines are known);
  - virsh goes on after a failed command, but the next command is only
    sent after the result of this one is read: nothing runs after a
    failure that the caller did not ask for.

Arguments reach virsh's own parser (vshCommandStringGetArg), never a
shell: each is quoted in single quotes (inside them nothing is special;
a ' is written '\\'' as in sh). A control character (newline, tab, ...)
cannot be written on virsh's input line (writable()): Runner.virsh runs
such a command as a virsh process of its own, with an argv. An argument
that would read as an option is the caller's to put after `--`
(network_layer does).

A command given text for "/dev/stdin" (net-define of XML) gets it in a
file of the session's private directory instead: the co-process's
standard input is the command stream.

Every wait is bounded (`timeout` per command); a command that does not
finish in it kills the co-process (TimeoutExpired; the next command
starts a new one). close() ends it (`quit`, then a kill if needed); at
interpreter exit any session still open is closed. If vfwarpctl dies
without closing, virsh reads end-of-file on its input and exits.
"""
import atexit
import os
import secrets
import selectors
import shutil
import subprocess
import tempfile
import time

from . import timings
from .result import Result

PROMPTS = ("virsh # ", "virsh > ")      # read-write, read-only connection
_OPEN = set()                            # sessions to close at exit


class SessionError(RuntimeError):
    pass


def writable(args):
    """Whether these arguments can go through virsh's shell unchanged: its
    input line is read by GNU readline, which acts on control characters
    even from a pipe (a tab completes, ^A, ^H, DEL, ESC edit the line: seen
    with virsh 11.3), so only printable characters can (str.isprintable:
    not tab, newline, C0/C1 controls, DEL; UTF-8 letters pass unchanged)."""
    return all(str(a).isprintable() for a in args)


def quote(arg):
    """One argument for virsh's command parser: literal in single quotes."""
    arg = str(arg)
    if not writable([arg]):
        raise SessionError(f"virsh argument {arg!r}: a control character cannot be passed "
                           "through virsh's shell")
    return "'" + arg.replace("'", "'\\''") + "'"


def command_line(args):
    return " ".join(quote(a) for a in args)


class VirshSession:
    """A virsh co-process on one connection. argv: the command that starts
    virsh's shell (["virsh", "-q", "-c", URI]); run() one command at a time."""

    def __init__(self, argv, timeout=60, tool="virsh"):
        self.argv = list(argv)
        self.timeout = timeout
        self.tool = tool
        self.proc = None
        self.dir = None
        self.n = 0
        self.token = secrets.token_hex(6)
        self.out = self.err = b""

    # ---- life ----

    def start(self):
        self.dir = tempfile.mkdtemp(prefix="vfwarpctl-virsh-")
        # virsh's shell saves its readline history under $XDG_CACHE_HOME
        # (else ~/.cache) at exit: into the private directory, not root's.
        env = dict(os.environ, XDG_CACHE_HOME=self.dir)
        t = time.monotonic()
        self.proc = subprocess.Popen(self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, bufsize=0, env=env)
        for f in (self.proc.stdout, self.proc.stderr):
            os.set_blocking(f.fileno(), False)
        self.out = self.err = b""
        _OPEN.add(self)
        # virsh connects before its first prompt: a bare marker round trip
        # makes the connection's cost a figure of its own (--timings).
        with timings.span("virsh session start (connect)"):
            r = self._exchange(None, None)
        timings.tool(self.tool, time.monotonic() - t, processes=1)
        if r.returncode != 0:
            self.close()
            return r
        return None

    @property
    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def close(self):
        p, self.proc = self.proc, None
        _OPEN.discard(self)
        if p is not None:
            try:
                if p.poll() is None:
                    try:
                        p.stdin.write(b"quit\n")
                    except OSError:
                        pass
                try:
                    p.stdin.close()
                except OSError:
                    pass
                try:
                    p.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait(timeout=5)
            finally:
                for f in (p.stdout, p.stderr):
                    f.close()
        if self.dir:
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None

    def kill(self):
        if self.proc is not None:
            self.proc.kill()
        self.close()

    # ---- commands ----

    def run(self, args, stdin=None):
        """Result of one command (args: virsh's command and its arguments).
        stdin: text the command reads from "/dev/stdin" (one of args)."""
        args = [str(a) for a in args]
        argv = tuple(self.argv + args)
        line = command_line(args)            # SessionError before anything runs
        if not self.alive:
            failed = self.start()
            if failed is not None:
                return Result(argv, failed.returncode, failed.stdout, failed.stderr)
        path = None
        if stdin is not None:
            if "/dev/stdin" not in args:
                raise SessionError("text for standard input, but no argument is /dev/stdin")
            path = os.path.join(self.dir, f"in-{self.n + 1}")
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w") as f:
                f.write(stdin)
            args = [path if a == "/dev/stdin" else a for a in args]
            line = command_line(args)
        t = time.monotonic()
        try:
            r = self._exchange(line, argv)
        finally:
            if path:
                try:
                    os.unlink(path)
                except OSError:
                    pass
            timings.tool(self.tool, time.monotonic() - t, processes=0)
        return r

    def _exchange(self, line, argv):
        self.n += 1
        mark = f"@@vfw-{self.token}:{self.n}@@"
        sent_mark = f'@@vfw-{self.token}:"{self.n}"@@'     # what the input (and its echo) says
        err_line, out_line = f"echo --err {sent_mark}", f"echo {sent_mark}"
        text = "".join(x + "\n" for x in ([line] if line is not None else []) + [err_line, out_line])
        argv = argv or tuple(self.argv)
        try:
            self.proc.stdin.write(text.encode())
        except OSError:
            pass                          # it died: the read below sees end-of-file
        deadline = time.monotonic() + self.timeout
        eof = set()
        with selectors.DefaultSelector() as sel:
            sel.register(self.proc.stdout, selectors.EVENT_READ, "out")
            sel.register(self.proc.stderr, selectors.EVENT_READ, "err")
            while True:
                out_at = self.out.find(mark.encode())
                err_at = _marker_line(self.err, mark.encode())
                if out_at >= 0 and err_at is not None:
                    break
                if len(eof) == 2:
                    return self._died(argv)
                left = deadline - time.monotonic()
                if left <= 0:
                    self.kill()
                    raise subprocess.TimeoutExpired(list(argv), self.timeout)
                for key, _ in sel.select(left):
                    chunk = os.read(key.fileobj.fileno(), 65536)
                    if not chunk:
                        eof.add(key.data)
                        sel.unregister(key.fileobj)
                    elif key.data == "out":
                        self.out += chunk
                    else:
                        self.err += chunk
        out, self.out = self.out[:out_at], self.out[out_at + len(mark):]
        start, end = err_at
        err, self.err = self.err[:start], self.err[end:]
        out = _strip_echo(out.decode(errors="replace"),
                          [line] if line is not None else [], [err_line, out_line])
        err = err.decode(errors="replace")
        return Result(argv, 1 if err.strip() else 0, out, err)

    def _died(self, argv):
        """virsh exited before the command's markers (it could not connect,
        or it crashed): the command counts as failed; the next one starts a
        new virsh."""
        p = self.proc
        try:
            rc = p.wait(timeout=5)
        except subprocess.TimeoutExpired:
            p.kill()
            rc = p.wait(timeout=5)
        out, err = self.out.decode(errors="replace"), self.err.decode(errors="replace")
        self.close()
        return Result(argv, rc or 1, out, err + f"virsh exited (status {rc}) before the command "
                      "finished\n")


def _marker_line(buf, mark):
    """(start, end) of the stderr line that carries mark, or None."""
    i = buf.find(mark)
    if i < 0:
        return None
    j = buf.find(b"\n", i)
    if j < 0:
        return None
    return buf.rfind(b"\n", 0, i) + 1, j + 1


def _strip_echo(out, head_lines, tail_lines):
    """A command's stdout without the prompt and readline's echo of the
    lines sent (before it: its own line; after it: the two marker lines)."""
    for p in PROMPTS:
        if out.startswith(p):
            out = out[len(p):]
            for ln in head_lines:
                if out.startswith(ln + "\n"):
                    out = out[len(ln) + 1:]
            break
    for ln in reversed(tail_lines):
        for p in PROMPTS:
            if out.endswith(p + ln + "\n"):
                out = out[:-len(p + ln + "\n")]
                break
            if out.endswith(p):
                out = out[:-len(p)]
                break
    return out


@atexit.register
def _close_all():
    for s in list(_OPEN):
        s.kill()
