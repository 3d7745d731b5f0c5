"""The transaction (transaction.py, journal.py, confirm.py, lock.py) with real
commands on a real kernel: a veth pair in a private network namespace
(tests/vethmodel.py), so every step, refusal, undo and read-back is the
kernel's. Needs root and `ip netns`; the SR-IOV layers themselves run on a
lab host (tests/lab/test_manager.py)."""
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import vethmodel
from vfwarp_manager.cli import vfwarpctl as cli
from vfwarp_manager.layers import host as layers
from vfwarp_manager.txn import audit, journal, statedir, transaction
from vfwarp_manager.runner import Runner

HELPER = [sys.executable, str(Path(vethmodel.__file__).resolve())]


def _can_netns():
    if os.geteuid() != 0:
        return "needs root (ip netns)"
    r = subprocess.run(["ip", "netns", "add", f"vfwt-probe-{os.getpid()}"], capture_output=True)
    if r.returncode:
        return f"ip netns add failed: {r.stderr.decode().strip()}"
    subprocess.run(["ip", "netns", "del", f"vfwt-probe-{os.getpid()}"], capture_output=True)
    return None


NO_NETNS = _can_netns()
needs_netns = pytest.mark.skipif(NO_NETNS is not None, reason=str(NO_NETNS))


@pytest.fixture
def ns():
    name = f"vfwt-{os.getpid()}-{time.monotonic_ns() % 10**6}"
    subprocess.run(["ip", "netns", "add", name], check=True)
    try:
        subprocess.run(["ip", "-n", name, "link", "add", "va", "type", "veth", "peer", "name", "vb"],
                       check=True)
        yield name
    finally:
        subprocess.run(["ip", "netns", "del", name], check=True)


@pytest.fixture
def sd(tmp_path):
    s = statedir.StateDir(str(tmp_path / "state"))
    s.ensure()
    return s


class Recording(Runner):
    """The real runner, noting each command and whether the journal was on
    disk when it ran."""

    def __init__(self, sd):
        self.sd, self.log, self.processes = sd, [], []

    def run(self, argv, stdin=None):
        self.processes.append(tuple(argv))
        # a batch (`ip -n NS -batch -`): each of its lines is one command
        cmds = [tuple(argv[:3]) + tuple(ln.split()) for ln in stdin.splitlines()] \
            if stdin is not None else [tuple(argv)]
        for c in cmds:
            if "set" in c:
                self.log.append((c, os.path.exists(self.sd.journal)))
        return super().run(argv, stdin)


def target_of(model, **changes):
    t = model.read(Runner())
    for key, v in changes.items():
        link, prop = key.split("_", 1)
        t["links"][link][prop] = v
    return t


CHANGES = dict(va_mtu=1400, va_alias="tenant-blue", vb_txqlen=77, vb_address="02:00:00:00:77:01")


@needs_netns
def test_apply_journal_first_then_verified_and_journal_gone(ns, sd):
    model = vethmodel.VethHost(ns)
    target = target_of(model, **CHANGES)
    r = Recording(sd)
    out = transaction.run(sd, model, r, target, "apply")
    assert out.result == "applied" and len(out.steps) == 4
    assert all(journal_there for _, journal_there in r.log) and len(r.log) == 4
    # the four commands went to the kernel through one `ip -batch` (batch.py)
    assert [p for p in r.processes if "-j" not in p] == [("ip", "-n", ns, "-batch", "-")]
    assert model.read(Runner()) == target
    assert not os.path.exists(sd.journal)
    # the same target again: nothing to do, nothing run
    r2 = Recording(sd)
    assert transaction.run(sd, model, r2, target, "apply").result == "unchanged" and r2.log == []


@needs_netns
@pytest.mark.parametrize("when", ["before", "after"])
def test_failure_at_each_step_undoes_in_reverse_to_the_snapshot(ns, sd, when):
    model = vethmodel.VethHost(ns)
    snapshot = model.read(Runner())
    target = target_of(model, **CHANGES)
    for k in range(1, 5):
        r = Recording(sd)
        out = transaction.run(sd, model, r, target, "apply",
                              inject=transaction.Injection(f"{k}:after" if when == "after" else str(k)))
        assert out.result == "restored", (k, out)
        assert f"step {k}" in out.reason and out.problems == []
        assert model.read(Runner()) == snapshot, k
        assert not os.path.exists(sd.journal)
        ran = k if when == "after" else k - 1
        dos = [tuple(s.do[0]["argv"]) for s in out.steps[:ran]]
        undos = [tuple(s.undo[0]["argv"]) for s in reversed(out.steps[:ran])]
        assert [a for a, _ in r.log] == dos + undos, k


@needs_netns
def test_kernel_refusal_undoes_earlier_steps(ns, sd):
    model = vethmodel.VethHost(ns)
    snapshot = model.read(Runner())
    target = target_of(model, va_mtu=1400, va_alias="x", vb_mtu=70000)   # above the veth maximum
    out = transaction.run(sd, model, Runner(), target, "apply")
    assert out.result == "restored"
    assert "step 3" in out.reason and "mtu greater than device maximum" in out.reason, out.reason
    assert model.read(Runner()) == snapshot


@needs_netns
def test_wrong_undo_is_caught_by_verification_and_reported(ns, sd):
    """An undo action that does not restore (a model bug, a driver surprise):
    the read-back against the snapshot sees it, the live state is converged
    to the snapshot, and the outcome says what the undo had left."""
    class BadUndo(vethmodel.VethHost):
        def steps(self, before, target):
            out = super().steps(before, target)
            for s in out:
                if s.summary.startswith("mtu"):
                    s.undo = [layers.argv_action(s.undo[0]["argv"][:-1] + ["1300"])]
            return out
    model = BadUndo(ns)
    snapshot = model.read(Runner())
    out = transaction.run(sd, model, Runner(), target_of(model, **CHANGES), "apply",
                          inject=transaction.Injection("4:after"))
    assert out.result == "restored" and model.read(Runner()) == snapshot
    assert out.problems == ["after undo: links va mtu: 1300, want 1500"], out.problems


@needs_netns
def test_step_that_succeeds_but_misses_the_target_is_undone(ns, sd):
    """A command that exits 0 yet leaves another value (a driver rounding a
    rate): only reading back shows it, and the whole change is undone."""
    class Rounding(vethmodel.VethHost):
        def steps(self, before, target):
            out = super().steps(before, target)
            for s in out:
                if s.summary.startswith("txqlen"):
                    s.do = [layers.argv_action(s.do[0]["argv"][:-1] + ["80"])]
            return out
    model = Rounding(ns)
    snapshot = model.read(Runner())
    out = transaction.run(sd, model, Runner(), target_of(model, **CHANGES), "apply")
    assert (out.result, out.ran) == ("restored", 4), out
    assert out.reason == "read back differs from the target: links vb txqlen: 80, want 77"
    assert model.read(Runner()) == snapshot and not os.path.exists(sd.journal)


@needs_netns
def test_verify_failure_undoes_everything(ns, sd):
    model = vethmodel.VethHost(ns)
    snapshot = model.read(Runner())
    out = transaction.run(sd, model, Runner(), target_of(model, **CHANGES), "apply",
                          inject=transaction.Injection("verify"))
    assert (out.result, out.ran) == ("restored", 4) and "verification" in out.reason
    assert model.read(Runner()) == snapshot


def helper(*args, env=None, check=True):
    e = dict(os.environ, **(env or {}))
    r = subprocess.run(HELPER + list(args), capture_output=True, text=True, timeout=60, env=e)
    if check and r.returncode:
        raise AssertionError(f"{args}: exit {r.returncode}\n{r.stdout}\n{r.stderr}")
    return r


@needs_netns
def test_sigkill_mid_apply_is_recovered_by_the_next_run(ns, sd):
    model = vethmodel.VethHost(ns)
    snapshot = model.read(Runner())
    target = target_of(model, **CHANGES)
    r = helper("run", sd.path, ns, json.dumps(target), env={"VFWARP_FAIL_AT": "2:kill"}, check=False)
    assert r.returncode == -signal.SIGKILL, (r.returncode, r.stderr)
    j = journal.read(sd)
    assert j["op"] == "apply" and len(j["steps"]) == 4 and j["snapshot"] == snapshot
    partial = model.read(Runner())
    assert partial != snapshot and partial["links"]["va"]["alias"] == "tenant-blue"
    # The lock died with the process; `status` finds the journal and says so.
    r = helper("cli", "status", "--state-dir", sd.path)
    assert "recovered: an interrupted apply" in r.stdout, r.stdout
    assert model.read(Runner()) == snapshot
    assert journal.read(sd) is None
    (rec,) = audit.tail(sd.audit_log, 1)
    assert (rec["command"], rec["result"], rec["interrupted"]) == ("recover", "restored", "apply")


def test_corrupt_journal_stops_everything(sd):
    Path(sd.journal).write_text('{"format": 1, "op": "apply", "snaps')
    with pytest.raises(journal.JournalError, match="restore the host by hand"):
        transaction.recover(sd, Runner())
    out = __import__("io").StringIO()
    assert cli.main(["status", "--state-dir", sd.path], out=out) == cli.cli_txn.E_NOT_RESTORED
    assert "not valid JSON" in out.getvalue()
    assert os.path.exists(sd.journal)       # left for the operator


def test_journal_round_trip(sd):
    class M:
        kind, scope = "pf", {"pf": "enp1s0"}
    from vfwarp_manager.layers.actions import Step, write_action
    steps = [Step("sriov", "enp1s0", "sriov_numvfs: 0 -> 2", [write_action("/x", 2)],
                  [write_action("/x", 0)])]
    journal.write(sd, "apply", M, {"sriov": {"numvfs": 0}, "vfs": {}}, {"sriov": {"numvfs": 2}},
                  steps, "abc")
    j = journal.read(sd)
    assert (j["format"], j["op"], j["model"], j["scope"], j["policy_hash"], j["pid"]) == \
        (1, "apply", "pf", {"pf": "enp1s0"}, "abc", os.getpid())
    assert [Step.from_json(s) for s in j["steps"]] == steps
    assert not [f for f in os.listdir(sd.path) if ".tmp." in f]      # renamed into place
    journal.remove(sd)
    assert journal.read(sd) is None


def test_lock_contention_between_processes(sd):
    from vfwarp_manager.txn.lock import Lock, LockBusy
    p = subprocess.Popen(HELPER + ["hold", sd.path, "30"], stdout=subprocess.PIPE, text=True)
    try:
        assert p.stdout.readline().strip() == "held"
        t0 = time.monotonic()
        with pytest.raises(LockBusy) as e:
            Lock(sd.lock).acquire(wait=0.3)
        assert e.value.holder == p.pid and time.monotonic() - t0 >= 0.3
        out = __import__("io").StringIO()
        assert cli.main(["status", "--state-dir", sd.path, "--wait", "0"], out=out) == \
            cli.cli_txn.E_BUSY
        assert f"pid {p.pid}" in out.getvalue()
    finally:
        p.kill()
        p.wait()
    # SIGKILL released it: no stale lock
    Lock(sd.lock).acquire(wait=0).release()


def _wait(cond, secs):
    end = time.monotonic() + secs
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.2)
    return cond()


@needs_netns
def test_unconfirmed_apply_is_reverted_by_its_timer(ns, sd):
    model = vethmodel.VethHost(ns)
    snapshot = model.read(Runner())
    target = target_of(model, **CHANGES)
    helper("confirm", sd.path, ns, json.dumps(target), "2",
           env={"VFWARP_CONFIRM_TIMER": "detached"})
    doc = json.loads(Path(sd.confirm).read_text())
    assert doc["timer"]["how"] == "detached"
    assert model.read(Runner()) == target
    assert _wait(lambda: not os.path.exists(sd.confirm), 20), "timer did not revert"
    assert model.read(Runner()) == snapshot
    rec = audit.tail(sd.audit_log, 1)[0]
    assert (rec["command"], rec["result"]) == ("confirm-expired", "reverted")
    assert _wait(lambda: not os.path.exists(f"/proc/{doc['timer']['pid']}"), 10) or \
        "Z" in Path(f"/proc/{doc['timer']['pid']}/stat").read_text().split()[2]


@needs_netns
def test_commit_in_time_keeps_the_change_and_stops_the_timer(ns, sd):
    model = vethmodel.VethHost(ns)
    target = target_of(model, **CHANGES)
    helper("confirm", sd.path, ns, json.dumps(target), "30",
           env={"VFWARP_CONFIRM_TIMER": "detached"})
    pid = json.loads(Path(sd.confirm).read_text())["timer"]["pid"]
    r = helper("cli", "commit", "--state-dir", sd.path)
    assert "committed" in r.stdout
    assert not os.path.exists(sd.confirm) and os.path.exists(sd.last)
    assert _wait(lambda: not os.path.exists(f"/proc/{pid}") or
                 Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z", 10)
    assert model.read(Runner()) == target
    # rollback goes to the snapshot the apply took
    r = helper("cli", "rollback", "--state-dir", sd.path)
    assert model.read(Runner()) != target and not os.path.exists(sd.last), r.stdout
    assert helper("cli", "rollback", "--state-dir", sd.path, check=False).returncode == \
        cli.cli_txn.E_NOTHING


@needs_netns
def test_expired_confirmation_is_reverted_by_the_next_invocation(ns, sd):
    """A timer lost with its process (e.g. killed): the next command reverts."""
    model = vethmodel.VethHost(ns)
    snapshot = model.read(Runner())
    target = target_of(model, **CHANGES)
    helper("confirm", sd.path, ns, json.dumps(target), "1", env={"VFWARP_CONFIRM_TIMER": "detached"})
    doc = json.loads(Path(sd.confirm).read_text())
    os.kill(doc["timer"]["pid"], signal.SIGKILL)
    time.sleep(1.2)
    assert model.read(Runner()) == target
    r = helper("cli", "commit", "--state-dir", sd.path, check=False)
    assert r.returncode == cli.cli_txn.E_NOTHING and "too late" in r.stdout, r.stdout
    assert "was not committed in time" in r.stdout
    assert model.read(Runner()) == snapshot
