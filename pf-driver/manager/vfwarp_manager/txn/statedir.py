"""Where vfwarpctl keeps what must outlive one invocation, and how it writes
it so that a crash at any instant leaves either the old file or the new one.

  STATE_DIR/lock           flock(2) of the one running transaction (lock.py)
  STATE_DIR/journal.json   snapshot + steps of the transaction in progress (journal.py)
  STATE_DIR/confirm.json   an apply waiting for `vfwarpctl commit` (confirm.py)
  STATE_DIR/last.json      the snapshot taken before the last apply (`rollback` target)
  AUDIT_LOG                one JSON line per command that could change the host (audit.py)

The default STATE_DIR is /run/vfwarp: a tmpfs, on purpose. Everything the
manager applies today (VFs, their settings) lives in the kernel and is gone
after a reboot, so a snapshot or journal from before a reboot describes a
host that no longer exists; restoring it would be wrong.
"""
import json
import os

DEFAULT_STATE_DIR = "/run/vfwarp"
DEFAULT_AUDIT_LOG = "/var/log/vfwarp/audit.jsonl"
MAX_STATE_BYTES = 16 << 20        # bound what we read back (128 VFs of snapshot is ~40 KiB)


class StateError(RuntimeError):
    """A state file exists but cannot be used (unreadable, not ours, corrupt)."""


class StateDir:
    def __init__(self, path=None, audit_log=None):
        self.path = path or os.environ.get("VFWARP_STATE_DIR") or DEFAULT_STATE_DIR
        explicit = path or os.environ.get("VFWARP_STATE_DIR")
        self.audit_log = audit_log or os.environ.get("VFWARP_AUDIT_LOG") or \
            (os.path.join(self.path, "audit.jsonl") if explicit else DEFAULT_AUDIT_LOG)

    def file(self, name):
        return os.path.join(self.path, name)

    @property
    def lock(self):
        return self.file("lock")

    @property
    def journal(self):
        return self.file("journal.json")

    @property
    def confirm(self):
        return self.file("confirm.json")

    @property
    def last(self):
        return self.file("last.json")

    def ensure(self):
        os.makedirs(self.path, mode=0o700, exist_ok=True)


def fsync_dir(path):
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_json(path, doc):
    """Write doc to path atomically and durably: a temporary file in the same
    directory, fsync'd, renamed over path, then the directory fsync'd (so the
    rename itself survives a crash)."""
    d = os.path.dirname(path) or "."
    tmp = f"{path}.tmp.{os.getpid()}"
    data = json.dumps(doc, indent=1, sort_keys=True).encode() + b"\n"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)
    fsync_dir(d)


def write_text(path, text, mode=0o600):
    """Write a small text file atomically (a temporary file renamed over it)."""
    tmp = f"{path}.tmp.{os.getpid()}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    try:
        os.write(fd, text.encode())
        os.fchmod(fd, mode)
    finally:
        os.close(fd)
    os.replace(tmp, path)


def read_json(path):
    """The document at path, None if there is none; StateError if it is unusable."""
    try:
        with open(path, "rb") as f:
            raw = f.read(MAX_STATE_BYTES + 1)
    except FileNotFoundError:
        return None
    except OSError as e:
        raise StateError(f"{path}: {e}") from None
    if len(raw) > MAX_STATE_BYTES:
        raise StateError(f"{path}: larger than {MAX_STATE_BYTES} bytes")
    try:
        doc = json.loads(raw)
    except ValueError as e:
        raise StateError(f"{path}: not valid JSON ({e})") from None
    if not isinstance(doc, dict):
        raise StateError(f"{path}: not a JSON object")
    return doc


def remove(path):
    """Remove path durably; a missing file is fine."""
    try:
        os.unlink(path)
    except FileNotFoundError:
        return
    fsync_dir(os.path.dirname(path) or ".")
