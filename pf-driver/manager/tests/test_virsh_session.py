"""The virsh co-process (virsh_session.py) against a real virsh: its shell
on libvirt's test driver (`test:///default`, in the client library: no
daemon; it keeps its state for the life of one connection, which is what
a session is).

Which virsh: $VFWARP_TEST_VIRSH (a command line), else `virsh` on PATH,
else the lab host image's own (libvirt 11.3, Debian 13: the version the
manager meets on a lab host), run from the image's root file system with
its dynamic loader (`make image` builds it, ~/.cache/vfwarp/images). Without
any of them these tests are skipped (the network layer's tests still run,
on tests/virshhost.py).
"""
import os
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from vfwarp_manager import timings
from vfwarp_manager.layers import actions, network as network_layer
from vfwarp_manager.txn import batch
from vfwarp_manager.runner import Runner, ToolError
from vfwarp_manager.virsh_session import SessionError, VirshSession

URI = "test:///default"
MANAGER = Path(__file__).resolve().parents[1]


def real_virsh():
    if os.environ.get("VFWARP_TEST_VIRSH"):
        return shlex.split(os.environ["VFWARP_TEST_VIRSH"])
    if shutil.which("virsh"):
        return [shutil.which("virsh")]
    root = Path(os.environ.get("VFWARP_CACHE") or Path.home() / ".cache" / "vfwarp") / \
        "images" / "current" / "rootfs"
    ld, virsh = root / "lib64" / "ld-linux-x86-64.so.2", root / "usr" / "bin" / "virsh"
    if ld.exists() and virsh.exists():
        return [str(ld), "--library-path",
                f"{root}/usr/lib/x86_64-linux-gnu:{root}/lib/x86_64-linux-gnu", str(virsh)]
    return None


VIRSH = real_virsh()
pytestmark = pytest.mark.skipif(VIRSH is None, reason="no virsh here (set VFWARP_TEST_VIRSH, "
                                "install libvirt-clients, or `make image`)")


@pytest.fixture
def home(tmp_path, monkeypatch):
    """A HOME of the test's own: what virsh's shell would write there shows."""
    h = tmp_path / "home"
    h.mkdir()
    monkeypatch.setenv("HOME", str(h))
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    return h


@pytest.fixture
def session(home):
    s = VirshSession(VIRSH + ["-q", "-c", URI], timeout=20)
    yield s
    s.close()


class TestRunner(Runner):
    """The manager's Runner with the real virsh (its actions' URI is the
    test driver's)."""
    virsh_argv = tuple(VIRSH or ())
    timeout = 20


def bridge_xml(name, bridge="vfwtest0"):
    return (f"<network><name>{network_layer.escape(name)}</name>"
            f"<bridge name='{bridge}'/></network>")


def test_each_command_has_its_own_output_error_and_status(session):
    assert session.run(["net-list", "--all", "--name"]).stdout == "default\n"
    bad = session.run(["net-start", "--", "nosuch"])
    assert bad.returncode == 1 and bad.stdout == ""
    assert "no network with matching name 'nosuch'" in bad.stderr
    assert "@@" not in bad.stderr                       # no marker in a command's error
    # the failure does not leak into the next command: virsh's shell goes on
    ok = session.run(["net-dumpxml", "--", "default"])
    assert (ok.returncode, ok.stderr) == (0, "")
    assert ok.stdout.startswith("<network>\n  <name>default</name>") and ok.stdout.endswith("</network>\n")
    assert "virsh #" not in ok.stdout and "@@" not in ok.stdout    # prompt and echo cut off
    # output without a final newline (virsh -q echo) ends where the command's did
    assert session.run(["echo", "a b", "c"]).stdout == "a b c"


def test_names_virsh_parser_would_split_or_read_as_options_reach_libvirt_as_they_are(session):
    names = ["sp ace", "q'uote", 'd"quote', "back\\slash", "semi;colon", "#hash", "--all",
             "'", "x'\\''y", "é-ü", "!$`&|<>(){}*?~"]
    for n in names:
        r = session.run(["net-define", "/dev/stdin"], stdin=bridge_xml(n))
        assert r.returncode == 0, (n, r)
    listed = session.run(["net-list", "--all", "--name"]).stdout.splitlines()
    assert sorted(x for x in listed if x) == sorted(names + ["default"])
    for n in names:
        r = session.run(["net-dumpxml", "--", n])
        assert r.returncode == 0, (n, r)
        assert ET.fromstring(r.stdout).findtext("name") == n
    # what readline would edit on the input line is refused before anything runs
    before = session.n
    for bad in ("new\nline", "tab\tx", "esc\x1bx", "del\x7fx", "ctl\x01x", "nul\0x"):
        with pytest.raises(SessionError, match="control character"):
            session.run(["net-dumpxml", "--", bad])
    assert session.n == before


def test_one_process_one_connection_for_a_runs_actions_and_failures_are_each_actions(home):
    """The network layer's actions on a real virsh through the Runner: one
    virsh process; a failed command is charged to its action, the actions
    after it do not run (a transaction's contract), and with keep_going
    (undo) every failure is its own."""
    r = TestRunner()
    rec = timings.start()
    try:
        n = "vfwarp-sess"
        acts = [network_layer.define_action(URI, bridge_xml(n)),
                network_layer._cmd(URI, "net-autostart", n),
                network_layer._cmd(URI, "net-start", n),
                network_layer._cmd(URI, "net-start", n),          # already active: refused
                network_layer._cmd(URI, "net-destroy", n)]
        errs = batch.run_actions(r, acts)
        assert [i for i, _ in errs] == [3], errs
        assert isinstance(errs[0][1], ToolError) and "already running" in str(errs[0][1])
        assert network_layer.lists(r, URI)["active"] == ["default", n]     # action 4 did not run
        errs = batch.run_actions(r, [network_layer._cmd(URI, "net-undefine", "nosuch"),
                                     network_layer._cmd(URI, "net-start", n),
                                     network_layer._cmd(URI, "net-destroy", n)], keep_going=True)
        assert [i for i, _ in errs] == [0, 1], errs
        assert "nosuch" in str(errs[0][1]) and "already running" in str(errs[1][1])
        assert network_layer.lists(r, URI)["active"] == ["default"]       # the third ran
        actions.run_action(r, network_layer._cmd(URI, "net-undefine", n))
        assert network_layer.lists(r, URI)["all"] == ["default"]
        assert rec.tools["virsh"][0] == 1, rec.tools         # processes
    finally:
        timings.stop()
        r.close()
    assert r._virsh is None


def test_the_stdin_file_and_the_history_stay_in_the_sessions_own_directory(session, home):
    session.run(["net-define", "/dev/stdin"], stdin=bridge_xml("vfwarp-f"))
    d = session.dir
    assert os.listdir(d) == []                          # the XML's file is gone after the command
    session.close()
    assert not os.path.exists(d)
    # virsh's shell saves its readline history at exit: not in root's home
    assert list(home.rglob("*")) == []


def test_a_command_that_does_not_finish_times_out_kills_virsh_and_the_next_starts_anew(session):
    session.timeout = 2
    session.run(["echo", "x"])
    p = session.proc
    t = time.monotonic()
    with pytest.raises(subprocess.TimeoutExpired):
        session.run(["event", "--all", "--loop"])      # waits for domain events forever
    assert time.monotonic() - t < 10
    assert p.poll() is not None and session.proc is None
    r = session.run(["net-list", "--name"])
    assert (r.returncode, r.stdout) == (0, "default\n") and session.proc.pid != p.pid


def test_virsh_dying_fails_its_command_and_the_next_starts_a_new_virsh(session):
    session.run(["echo", "x"])
    old = session.proc
    threading.Timer(0.5, old.kill).start()
    r = session.run(["event", "--all", "--loop"])      # killed while it waits
    assert r.returncode != 0 and "virsh exited" in r.stderr
    assert session.proc is None
    r = session.run(["net-list", "--name"])
    assert r.returncode == 0 and session.proc.pid != old.pid
    # died between two commands: the next one starts a new virsh, no failure
    session.proc.kill()
    session.proc.wait()
    assert session.run(["net-list", "--name"]).returncode == 0


def test_an_error_printed_late_is_still_its_commands(home):
    """stdout and stderr are two pipes: a command's result is complete only
    when both markers are in (here virsh's stderr reaches the session 0.3 s
    late per line, through a shell that relays it)."""
    slow = ["bash", "-c", 'exec "$@" 2> >(while IFS= read -r l; do sleep 0.3; '
            'printf "%s\\n" "$l" >&2; done)', "slow-stderr"]
    s = VirshSession(slow + VIRSH + ["-q", "-c", URI], timeout=20)
    try:
        bad = s.run(["net-start", "--", "nosuch"])
        ok = s.run(["net-list", "--name"])
    finally:
        s.close()
    assert bad.returncode == 1 and "nosuch" in bad.stderr
    assert (ok.returncode, ok.stderr, ok.stdout) == (0, "", "default\n")


def test_a_command_virsh_shell_cannot_take_runs_as_its_own_process(home):
    """Runner.virsh: an argument with a control character (readline would
    edit it) goes to a virsh process of its own, as an argv, unchanged."""
    r = TestRunner()
    rec = timings.start()
    try:
        assert r.virsh(URI, ["echo", "plain"]).stdout == "plain"
        assert r.virsh(URI, ["echo", "tab\there"]).stdout == "tab\there"
        # (the process's tool name is argv[0]: the loader when VIRSH runs the image's virsh)
        assert sum(p for p, _ in rec.tools.values()) == 2, rec.tools
    finally:
        timings.stop()
        r.close()


def test_no_connection_is_a_failed_command_not_a_hang(home):
    s = VirshSession(VIRSH + ["-q", "-c", "nosuch:///x"], timeout=20)
    r = s.run(["net-list", "--name"])
    assert r.returncode != 0 and "failed to connect" in r.stderr
    assert s.proc is None and s.dir is None


CHILD = """
import os, signal, sys
sys.path.insert(0, {manager!r})
from vfwarp_manager.virsh_session import VirshSession
s = VirshSession({argv!r}, timeout=20)
assert s.run(["net-list", "--name"]).returncode == 0
print(s.proc.pid, s.dir, flush=True)
if sys.argv[1] == "kill":
    os.kill(os.getpid(), signal.SIGKILL)     # as VFWARP_FAIL_AT=K:kill
"""


@pytest.mark.parametrize("how", ["exit", "kill"])
def test_no_virsh_outlives_the_manager(home, how):
    """At exit without close() the session is closed (atexit: its private
    directory goes too); SIGKILLed, the manager's pipe closes and virsh's
    shell ends at end-of-file."""
    code = CHILD.format(manager=str(MANAGER), argv=VIRSH + ["-q", "-c", URI])
    p = subprocess.run([sys.executable, "-c", code, how], capture_output=True, text=True, timeout=60)
    assert p.returncode == (-signal.SIGKILL if how == "kill" else 0), p.stderr
    pid, d = p.stdout.split()[:2]
    pid = int(pid)
    assert os.path.exists(d) == (how == "kill")          # nothing runs after SIGKILL
    if how == "kill":
        shutil.rmtree(d)
    deadline = time.monotonic() + 10
    while _running(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _running(pid)


def _running(pid):
    """Alive and not a zombie (a zombie of init's has exited)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False
