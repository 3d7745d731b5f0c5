"""The audit log: one JSON object per line for every command that could
change the host (apply, rollback, commit, a recovery, an expired
confirmation), appended and fsync'd before the command reports.

Each record: time (UTC, ISO 8601), command, pid, uid, result, and where
they apply: files and policy_hash (sha256 over the files' names and bytes),
changes (one line per property changed, as the steps list them),
rollback_reason, not_applied (layer: why).
"""
import datetime
import hashlib
import json
import os

MAX_TAIL_BYTES = 1 << 20


def policy_hash(paths):
    """sha256 over each file's name and content, in name order: the same files
    give the same hash wherever they are read from."""
    h = hashlib.sha256()
    for p in sorted(paths, key=os.path.basename):
        with open(p, "rb") as f:
            data = f.read(1 << 21)
        h.update(os.path.basename(p).encode() + b"\0" + hashlib.sha256(data).digest())
    return h.hexdigest()


def append(path, command, result, **fields):
    rec = {"time": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
           "command": command, "pid": os.getpid(), "uid": os.getuid(), "result": result}
    rec.update({k: v for k, v in fields.items() if v is not None})
    d = os.path.dirname(path)
    if d:
        os.makedirs(d, mode=0o750, exist_ok=True)
    line = json.dumps(rec, sort_keys=True).encode() + b"\n"
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o640)
    try:
        os.write(fd, line)        # one write of one line: O_APPEND keeps lines whole
        os.fsync(fd)
    finally:
        os.close(fd)
    return rec


def tail(path, n=1):
    """The last n records (fewer if the log is shorter; [] if there is none)."""
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - MAX_TAIL_BYTES))
            lines = f.read().splitlines()
    except FileNotFoundError:
        return []
    out = []
    for ln in reversed(lines):
        try:
            out.append(json.loads(ln))
        except ValueError:
            continue
        if len(out) == n:
            break
    return list(reversed(out))
