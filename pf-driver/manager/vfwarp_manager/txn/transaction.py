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
from dataclasses import dataclass, field

from .. import timings
from ..layers import host
from . import batch, journal

# What a step, a read-back or an undo may raise when the kernel or a tool says no.
STEP_ERRORS = batch.ACTION_ERRORS


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
    steps: list                 # [layers.actions.Step] planned
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


def _segments(n, inject):
    """Steps 1..n as runs [(first, last)]: the step a failure is injected at
    runs alone (its hooks come between steps), the others in runs whose
    commands batch.run_actions may batch."""
    out, k = [], 1
    while k <= n:
        if inject.step == k:
            out.append((k, k))
            k += 1
            continue
        last = inject.step - 1 if inject.step and k < inject.step <= n else n
        out.append((k, last))
        k = last + 1
    return out


class _ActionFailed(Exception):
    def __init__(self, step, error):
        self.step, self.error = step, error


def _run_steps(runner, steps, first, last, inject):
    """Run steps first..last (1-based), batched; _ActionFailed names the
    step whose command failed (the steps before it ran, it may have half
    run, the rest did not). Injection hooks apply to a run of one step."""
    if first == last:
        inject.at(first, "before")
    acts, owner = [], []
    for k in range(first, last + 1):
        acts += steps[k - 1].do
        owner += [k] * len(steps[k - 1].do)
    errs = batch.run_actions(runner, acts)
    if errs:
        i, e = errs[0]
        raise _ActionFailed(owner[i], e)
    if first == last:
        inject.at(first, "after")
        inject.at(first, "kill")


def run(sd, model, runner, target, op, policy_hash=None, inject=None):
    inject = inject or Injection()
    with timings.span("snapshot (read live state)"):
        snapshot = model.read(runner)
    with timings.span("plan steps"):
        steps = model.steps(snapshot, target)
    if not steps:
        return Outcome("unchanged", snapshot, steps)
    with timings.span("journal write"):
        journal.write(sd, op, model, snapshot, target, steps, policy_hash)
    ran = current = 0
    try:
        for first, last in _segments(len(steps), inject):
            current = first
            try:
                _run_steps(runner, steps, first, last, inject)
            except InjectedFailure:
                ran = first - 1 if inject.when == "before" else first
                raise
            except _ActionFailed as f:
                # a failed step counts as run: it may be half done
                current = ran = f.step
                raise f.error from None
            current = ran = last
        inject.verify()
        with timings.span("verify (read back)"):
            wrong = host.mismatches(model.read(runner), target)
        if wrong:
            raise VerifyFailed("read back differs from the target: " + "; ".join(wrong[:8]))
    except STEP_ERRORS + (InjectedFailure, VerifyFailed) as e:
        reason = str(e) if isinstance(e, VerifyFailed) else f"step {current} ({steps[current - 1]}): {e}"
        with timings.span("undo"):
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
    errors = _run_all(runner, [(s, s.undo) for s in reversed(done)], "undo of")
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
    try:
        steps = model.steps(model.read(runner), target)
    except STEP_ERRORS as e:
        return [f"read live state: {e}"]
    return _run_all(runner, [(s, s.do) for s in steps], "restore")


def _run_all(runner, work, what):
    """Run [(step, actions)] in order, batched, keeping going past failures
    (each undo still helps); the errors as "WHAT STEP: error"."""
    acts, owner = [], []
    for step, actions in work:
        acts += actions
        owner += [step] * len(actions)
    return [f"{what} {owner[i]}: {e}" for i, e in batch.run_actions(runner, acts, keep_going=True)]


def _differs(model, runner, target):
    try:
        return host.mismatches(model.read(runner), target)
    except STEP_ERRORS as e:
        return [f"read live state: {e}"]


def recover(sd, runner):
    """Restore the snapshot of a transaction that died mid-way, if its
    journal is there. None when there is none; else the journal's summary.
    RecoveryFailed (journal kept) when the host cannot be brought back."""
    j = journal.read(sd)
    if j is None:
        return None
    model = host.model_from(j["model"], j["scope"])
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
