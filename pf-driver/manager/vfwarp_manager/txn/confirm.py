"""`apply --confirm-within SECONDS`: the change stays only if `vfwarpctl
commit` comes before the deadline, so an operator who cuts the host off its
management network gets it back without touching it.

After a successful apply the snapshot is kept in STATE_DIR/confirm.json
with a random token and the deadline, and a timer process is started that
sleeps until the deadline, then (under the lock) reverts to the snapshot if
confirm.json still holds its token. Two ways to start it, both present on a
stock Debian 13 host:

  systemd-run   when systemd runs the host (/run/systemd/system exists):
                a transient service vfwarp-confirm-TOKEN, outside the
                operator's ssh session, so logging out or losing the
                connection cannot take the timer with it
  detached      otherwise: a child in its own session (setsid), stdio on
                /dev/null, re-parented to init when vfwarpctl exits

And a check that needs no timer at all: every apply, rollback, commit and
status first reverts a confirmation whose deadline has passed (so a timer
lost with its process still ends in a revert, at the next invocation).
VFWARP_CONFIRM_TIMER=systemd|detached forces one way (tests use both).
"""
import os
import secrets
import shutil
import signal
import subprocess
import time

from . import statedir


def pending(sd):
    """The apply waiting for confirmation, or None."""
    doc = statedir.read_json(sd.confirm)
    if doc is not None and not {"token", "deadline", "model", "scope", "snapshot"} <= set(doc):
        raise statedir.StateError(f"{sd.confirm}: not a confirmation file; inspect and remove it")
    return doc


def expired(doc, now=None):
    return (now if now is not None else time.time()) >= doc["deadline"]


def start(sd, model, snapshot, seconds, prog, policy_hash=None, how=None):
    """Record the pending confirmation, then start its timer; the document."""
    token = secrets.token_hex(8)
    doc = {"token": token, "deadline": time.time() + seconds, "seconds": seconds,
           "model": model.kind, "scope": model.scope, "snapshot": snapshot,
           "policy_hash": policy_hash, "timer": None}
    statedir.write_json(sd.confirm, doc)
    doc["timer"] = launch_timer(sd, token, prog, how)
    statedir.write_json(sd.confirm, doc)
    return doc


def timer_argv(sd, token, prog):
    return list(prog) + ["_confirm-timer", "--state-dir", sd.path, "--audit-log", sd.audit_log,
                         token]


def choose_timer(how=None):
    how = how or os.environ.get("VFWARP_CONFIRM_TIMER") or "auto"
    if how == "auto":
        how = "systemd" if os.path.isdir("/run/systemd/system") and shutil.which("systemd-run") \
            else "detached"
    if how not in ("systemd", "detached"):
        raise ValueError(f"VFWARP_CONFIRM_TIMER={how!r}: expected systemd or detached")
    return how


def launch_timer(sd, token, prog, how=None):
    how = choose_timer(how)
    argv = timer_argv(sd, token, prog)
    if how == "systemd":
        unit = f"vfwarp-confirm-{token}"
        subprocess.run(["systemd-run", "--unit", unit, "--collect", "--quiet",
                        "--description", "vfwarpctl: revert an unconfirmed apply", "--", *argv],
                       check=True, capture_output=True, text=True, timeout=30)
        return {"how": how, "unit": unit}
    p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, start_new_session=True, close_fds=True, cwd="/")
    return {"how": how, "pid": p.pid}


def stop_timer(doc):
    """Stop the timer of a confirmation that is settled (committed, rolled back,
    reverted). A timer that is already gone is fine; a pid is only signalled
    while its command line still carries the token (pids get reused)."""
    t = doc.get("timer") or {}
    if t.get("how") == "systemd":
        subprocess.run(["systemctl", "stop", t["unit"]], capture_output=True, timeout=30)
    elif t.get("how") == "detached" and isinstance(t.get("pid"), int):
        try:
            with open(f"/proc/{t['pid']}/cmdline", "rb") as f:
                mine = doc["token"].encode() in f.read()
        except OSError:
            return
        if mine and t["pid"] != os.getpid():
            try:
                os.kill(t["pid"], signal.SIGTERM)
            except ProcessLookupError:
                pass


def wait_for_deadline(sd, token):
    """Sleep until the deadline of confirmation `token`; False as soon as it is
    settled by someone else (committed, rolled back, replaced)."""
    while True:
        try:
            doc = pending(sd)
        except statedir.StateError:
            return False
        if doc is None or doc["token"] != token:
            return False
        left = doc["deadline"] - time.time()
        if left <= 0:
            return True
        time.sleep(min(left, 1.0))
