"""One change of the host as a transaction:

  1. snapshot: read every layer the change touches back from the kernel
  2. plan the steps from the snapshot to the target (dependency order)
  3. journal: snapshot + steps on disk, fsync'd, before the first change
  4. run the steps; a step that fails counts as run (it may have half-applied)
  5. read back and verify: the live state must equal the target
  6. on any failure: run the undo actions of the steps run, in reverse order,
     then read back and verify against the snapshot; if it still differs
     (an undo refused, a driver that did more than asked), converge from
     what is live to the snapshot once more and verify again
  7. remove the journal once the host is verified at target or snapshot

The caller holds the lock (lock.py). Nothing here prints; outcomes and
reasons go back to the CLI, which reports and writes the audit log.

Failure injection for tests (docs/policy.md "Testing the transaction"):
VFWARP_FAIL_AT=K makes step K fail before it runs, K:after after its
actions ran, K:kill SIGKILLs the process after step K ran (the journal
stays behind), and `verify` makes the read-back check fail.
"""
import os
import signal
import subprocess
from dataclasses import dataclass, field

from . import journal, layers, live
from .runner import ToolError

# What a step, a read-back or an undo may raise when the kernel or a tool says no.
STEP_ERRORS = (ToolError, OSError, live.LiveError, subprocess.TimeoutExpired)


class InjectedFailure(RuntimeError):
    pass


class VerifyFailed(RuntimeError):
    """The state read back after the steps is not the target."""


class RecoveryFailed(RuntimeError):
    def __init__(self, message, problems):
        self.problems = problems
        super().__init__(message)


class Injection:
    """Where the test hook asks the transaction to fail (or None)."""

    def __init__(self, spec=None):
        self.step, self.when = None, None
        spec = (spec or "").strip()
        if spec == "verify":
            self.when = "verify"
        elif spec:
            k, _, when = spec.partition(":")
            if not k.isdigit() or when not in ("", "after", "kill"):
                raise ValueError(f"VFWARP_FAIL_AT={spec!r}: expected K, K:after, K:kill or verify")
            self.step, self.when = int(k), when or "before"

    @classmethod
    def from_env(cls):
        return cls(os.environ.get("VFWARP_FAIL_AT"))

    def at(self, k, when):
        if self.step != k or self.when != when:
            return
        if when == "kill":
            os.kill(os.getpid(), signal.SIGKILL)
        raise InjectedFailure(f"failure injected {'after' if when == 'after' else 'at'} step {k} "
                              "(VFWARP_FAIL_AT)")

    def verify(self):
        if self.when == "verify":
            raise VerifyFailed("failure injected at verification (VFWARP_FAIL_AT=verify)")


@dataclass
class Outcome:
    result: str                 # applied | unchanged | restored | not-restored
    snapshot: dict
    steps: list                 # [layers.Step] planned
    ran: int = 0                # steps started (the failed one included)
    reason: str = None          # why it did not apply
    problems: list = field(default_factory=list)   # undo errors, what still differs

    @property
    def ok(self):
        return self.result in ("applied", "unchanged")

    def as_json(self):
        return {"result": self.result, "steps": [s.as_json() for s in self.steps],
                "changes": [str(s) for s in self.steps], "ran": self.ran,
                "rollback_reason": self.reason, "problems": self.problems}


def run(sd, model, runner, target, op, policy_hash=None, inject=None):
    inject = inject or Injection()
    snapshot = model.read(runner)
    steps = model.steps(snapshot, target)
    if not steps:
        return Outcome("unchanged", snapshot, steps)
    journal.write(sd, op, model, snapshot, target, steps, policy_hash)
    ran = current = 0
    try:
        for k, step in enumerate(steps, 1):
            current = k
            inject.at(k, "before")
            ran = k                        # counts before it runs: a failed step may be half done
            for a in step.do:
                layers.run_action(runner, a)
            inject.at(k, "after")
            inject.at(k, "kill")
        inject.verify()
        wrong = layers.mismatches(model.read(runner), target)
        if wrong:
            raise VerifyFailed("read back differs from the target: " + "; ".join(wrong[:8]))
    except STEP_ERRORS + (InjectedFailure, VerifyFailed) as e:
        reason = str(e) if isinstance(e, VerifyFailed) else f"step {current} ({steps[current - 1]}): {e}"
        problems = undo(model, runner, steps[:ran], snapshot)
        if problems["differs"]:
            # The journal stays: the next vfwarpctl tries again to restore the snapshot.
            return Outcome("not-restored", snapshot, steps, ran, reason,
                           problems["errors"] + problems["differs"])
        journal.remove(sd)
        return Outcome("restored", snapshot, steps, ran, reason, problems["errors"])
    journal.remove(sd)
    return Outcome("applied", snapshot, steps, ran)


def undo(model, runner, done, snapshot):
    """Undo the steps run, last first, then verify against the snapshot
    (converging once more from the live state if it differs).
    {'errors': [undo actions refused], 'differs': [what still differs]}."""
    errors = []
    for step in reversed(done):
        for a in step.undo:
            try:
                layers.run_action(runner, a)
            except STEP_ERRORS as e:       # keep going: the other undos still help
                errors.append(f"undo of {step}: {e}")
    differs = _differs(model, runner, snapshot)
    if differs:
        # Said in the outcome: an undo that needs this fallback is a bug or a
        # driver surprise worth knowing about, even when the host ends up right.
        errors += [f"after undo: {d}" for d in differs]
        errors += converge(model, runner, snapshot)
        differs = _differs(model, runner, snapshot)
    return {"errors": errors, "differs": differs}


def converge(model, runner, target):
    """Bring the live state to target with no undo: used to restore a
    snapshot (recovery, the fallback of undo). Returns the errors met."""
    errors = []
    try:
        steps = model.steps(model.read(runner), target)
    except STEP_ERRORS as e:
        return [f"read live state: {e}"]
    for step in steps:
        for a in step.do:
            try:
                layers.run_action(runner, a)
            except STEP_ERRORS as e:
                errors.append(f"restore {step}: {e}")
    return errors


def _differs(model, runner, target):
    try:
        return layers.mismatches(model.read(runner), target)
    except STEP_ERRORS as e:
        return [f"read live state: {e}"]


def recover(sd, runner):
    """Restore the snapshot of a transaction that died mid-way, if its
    journal is there. None when there is none; else the journal's summary.
    RecoveryFailed (journal kept) when the host cannot be brought back."""
    j = journal.read(sd)
    if j is None:
        return None
    model = layers.model_from(j["model"], j["scope"])
    snapshot = model.normalize(j["snapshot"])
    errors = converge(model, runner, snapshot)
    differs = _differs(model, runner, snapshot)
    info = {"op": j["op"], "pid": j.get("pid"), "started": j.get("started"),
            "steps": len(j["steps"]), "policy_hash": j.get("policy_hash"), "errors": errors}
    if differs:
        raise RecoveryFailed(f"the {j['op']} of pid {j.get('pid')} (started {j.get('started')}) "
                             f"was interrupted and its snapshot could not be restored; journal "
                             f"kept at {sd.journal}", errors + differs)
    journal.remove(sd)
    return info
