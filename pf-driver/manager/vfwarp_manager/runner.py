"""How the manager runs the standard tools: argv lists, never a shell, so no
name from a policy file is ever parsed by one. Readers and appliers take a
Runner, so the lab runs the real tools and unit tests replay output that the
real tools printed (tests/data/, each file with the command that made it).
"""
import os
import shutil
import subprocess
import time

from . import timings
from .result import Result, ToolError  # noqa: F401 (what run() gives and check() raises)


class Runner:
    """Runs argv lists. Subclasses replay or record."""

    timeout = 60
    virsh_argv = ("virsh",)       # how virsh is started (tests: another build of it)
    _virsh = None                 # URI -> virsh_session.VirshSession, once one is used

    def virsh(self, uri, args, stdin=None):
        """One virsh command on the connection to uri, through the run's one
        virsh co-process for it (virsh_session.py); stdin: the text of an
        argument "/dev/stdin". A Result as run() gives (returncode 1 when
        virsh reported an error)."""
        from . import virsh_session       # only runs that use libvirt pay for the import
        if not virsh_session.writable(args):
            # a name with a control character (a foreign network's, say) cannot
            # be written on virsh's input line: a process of its own, an argv
            return self.run(list(self.virsh_argv) + ["-q", "-c", uri] + list(args), stdin)
        if self._virsh is None:
            self._virsh = {}
        s = self._virsh.get(uri)
        if s is None:
            s = self._virsh[uri] = virsh_session.VirshSession(
                list(self.virsh_argv) + ["-q", "-c", uri], self.timeout)
        return s.run(args, stdin)

    def close(self):
        """End the co-processes (at the end of a vfwarpctl run)."""
        if self._virsh:
            with timings.span("virsh session end"):
                for s in self._virsh.values():
                    s.close()
        self._virsh = None

    def run(self, argv, stdin=None):
        """stdin: text for the tool's standard input (a batch, batch.py)."""
        if isinstance(argv, str):
            raise TypeError("argv must be a list; the manager never builds shell strings")
        argv = tuple(str(a) for a in argv)
        t = time.monotonic()
        if stdin is None:
            p = subprocess.run(argv, capture_output=True, text=True, timeout=self.timeout,
                               stdin=subprocess.DEVNULL)
        else:
            p = subprocess.run(argv, capture_output=True, text=True, timeout=self.timeout,
                               input=stdin)
        timings.tool(argv[0], time.monotonic() - t)
        return Result(argv, p.returncode, p.stdout, p.stderr)

    def check(self, argv):
        r = self.run(argv)
        if r.returncode != 0:
            raise ToolError(r)
        return r.stdout

    def read_file(self, path):
        with open(path) as f:
            return f.read(65536)

    def write_file(self, path, text):
        """Write a sysfs attribute (one write(2), as `echo N > file` does);
        the kernel's refusal comes back as OSError."""
        with open(path, "w") as f:
            f.write(f"{text}\n")

    def which(self, tool):
        """Whether a tool is installed (libvirt's virsh is optional on a host)."""
        return shutil.which(tool) is not None

    def link_target_name(self, path):
        """Last component of where a sysfs link points (a PCI address for .../device)."""
        if not os.path.exists(path):
            raise FileNotFoundError(path)
        return os.path.basename(os.path.realpath(path))


class Replay(Runner):
    """Answers from recorded output: {argv tuple: Result}; files from {path: text}.
    An argv it has no answer for is an error (the test did not expect that call)."""

    def __init__(self, answers, files=None, links=None, tools=()):
        self.answers = {tuple(k): v for k, v in answers.items()}
        self.files = files or {}
        self.links = links or {}
        self.tools = set(tools)        # installed optional tools (which): none unless given
        self.calls = []
        self.writes = []

    def run(self, argv, stdin=None):
        argv = tuple(str(a) for a in argv)
        if stdin is not None:
            argv += (stdin,)     # a batch: answered by its argv and its lines
        self.calls.append(argv)
        if argv not in self.answers:
            raise AssertionError(f"unexpected command {argv}")
        return self.answers[argv]

    def virsh(self, uri, args, stdin=None):
        """A virsh command of the session, answered like a process with
        that argv (tests/virshhost.py models virsh itself)."""
        return self.run(["virsh", "-q", "-c", uri, *args], stdin)

    def read_file(self, path):
        if path not in self.files:
            raise FileNotFoundError(path)
        return self.files[path]

    def write_file(self, path, text):
        self.writes.append((path, str(text)))
        self.calls.append(("write", path, str(text)))

    def which(self, tool):
        return tool in self.tools

    def link_target_name(self, path):
        if path not in self.links:
            raise FileNotFoundError(path)
        return self.links[path]
