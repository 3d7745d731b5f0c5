"""One transaction at a time: an exclusive flock(2) on STATE_DIR/lock.

flock rather than a pid file: the kernel drops the lock when its holder
dies, SIGKILL included, so a killed apply never leaves a stale lock behind
(its journal is what it leaves, and the next holder recovers it). The
holder's pid is written into the file only to name it in the error.
"""
import fcntl
import os
import time


class LockBusy(RuntimeError):
    def __init__(self, path, holder):
        self.path, self.holder = path, holder
        super().__init__(f"another vfwarpctl holds {path}"
                         + (f" (pid {holder})" if holder else "") + "; try again when it is done")


class Lock:
    POLL = 0.1

    def __init__(self, path):
        self.path = path
        self.fd = None

    def acquire(self, wait=10.0):
        """Take the lock, waiting up to `wait` seconds; LockBusy if still held."""
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        deadline = time.monotonic() + max(0.0, wait)
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    holder = _holder(fd)
                    os.close(fd)
                    raise LockBusy(self.path, holder) from None
                time.sleep(self.POLL)
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self.fd = fd
        return self

    def release(self):
        if self.fd is not None:
            os.ftruncate(self.fd, 0)
            fcntl.flock(self.fd, fcntl.LOCK_UN)
            os.close(self.fd)
            self.fd = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.release()


def _holder(fd):
    try:
        text = os.pread(fd, 32, 0).decode().strip()
        return int(text) if text.isdigit() else None
    except (OSError, ValueError):
        return None
