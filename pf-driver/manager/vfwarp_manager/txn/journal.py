"""The journal of the transaction in progress: written (fsync'd) before the
first change, removed after the host is verified (at the target, or back
at the snapshot). A journal found at start-up means a vfwarpctl died in
the middle (SIGKILL, power cut of the management side, OOM): the host is
somewhere between snapshot and target, and the journal says how to return.

Format (JSON object, "format": 1):
  op           apply | rollback | confirm-expired
  pid, started the process that wrote it and when (UTC, ISO 8601)
  model, scope which host model (layers/host.py MODELS) and its scope, e.g. {"pf": "enp1s0"}
  snapshot     every layer the steps touch, as read back from the kernel before the first step
  target       the state the steps lead to
  steps        [{layer, object, summary, do: [action], undo: [action]}], in execution order
  policy_hash  of the files applied (apply only)

Recovery does not replay `undo` blindly (the journal cannot know how far
the dead process got): it reads the live state and converges it to
`snapshot`, then verifies.
"""
import datetime
import os

from . import statedir

FORMAT = 1


class JournalError(statedir.StateError):
    pass


def write(sd, op, model, snapshot, target, steps, policy_hash=None):
    doc = {"format": FORMAT, "op": op, "pid": os.getpid(),
           "started": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
           "model": model.kind, "scope": model.scope, "snapshot": snapshot, "target": target,
           "steps": [s.as_json() for s in steps], "policy_hash": policy_hash}
    statedir.write_json(sd.journal, doc)
    return doc


def read(sd):
    """The journal left behind, or None. JournalError if it cannot be used:
    then nothing may change until an operator looks (a guess could make the
    host worse)."""
    try:
        doc = statedir.read_json(sd.journal)
    except statedir.StateError as e:
        raise JournalError(f"{e}: inspect it, restore the host by hand, then remove it") from None
    if doc is None:
        return None
    missing = [k for k in ("format", "op", "model", "scope", "snapshot", "steps") if k not in doc]
    if missing or doc["format"] != FORMAT:
        raise JournalError(f"{sd.journal}: not a format-{FORMAT} journal "
                           f"({'lacks ' + ', '.join(missing) if missing else 'format ' + str(doc['format'])})"
                           ": inspect it, restore the host by hand, then remove it")
    return doc


def remove(sd):
    statedir.remove(sd.journal)
