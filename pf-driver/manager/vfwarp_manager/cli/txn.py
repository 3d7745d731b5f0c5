"""The commands that change the host or watch it: apply, rollback, commit,
status, drift (and the hidden _confirm-timer). vfwarpctl.py holds the parser and
the read-only commands; exit codes are listed there and in docs/policy.md.

Every command that may change the host takes the lock, then first settles
what an earlier run left behind ("housekeeping"): a journal (a killed
transaction: restore its snapshot) and an expired confirmation (revert it),
and says so, before doing what it was asked.
"""
import argparse
import datetime
import json
import os
import sys
import time

from .. import timings
from ..layers import desired as dz, host, live, network as network_layer
from ..policy import parse_cache, validate as policy
from ..txn import audit, confirm, plan as pl, statedir, transaction
from ..txn.journal import JournalError
from ..txn.lock import Lock, LockBusy

E_OK, E_INVALID, E_LIVE, E_CHANGES = 0, 1, 3, 4
E_RESTORED, E_NOT_RESTORED, E_BUSY, E_UNAPPLIED, E_NOTHING, E_REFUSED = 5, 6, 7, 8, 9, 10


class Report:
    """Text lines for people, one JSON document for programs (--json)."""

    def __init__(self, args, out):
        self.json, self.out = getattr(args, "json", False), out
        self.lines, self.doc = [], {}

    def say(self, line):
        self.lines.append(line)

    def done(self, code):
        self.doc["exit"] = code
        if self.json:
            json.dump(self.doc, self.out, indent=1, default=str)
            self.out.write("\n")
        else:
            for ln in self.lines:
                self.out.write(ln + "\n")
        return code


def _now():
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def _when(epoch):
    return datetime.datetime.fromtimestamp(epoch, datetime.timezone.utc).isoformat(timespec="seconds")


class Session:
    """State dir, lock and audit log of one invocation."""

    def __init__(self, args, runner, rep, prog):
        self.sd = statedir.StateDir(args.state_dir, args.audit_log)
        self.runner, self.rep, self.prog = runner, rep, prog
        self.wait = args.wait
        self.lock = None

    def __enter__(self):
        self.sd.ensure()
        self.lock = Lock(self.sd.lock).acquire(self.wait)
        return self

    def __exit__(self, *exc):
        self.lock.release()

    def audit(self, command, result, **fields):
        return audit.append(self.sd.audit_log, command, result, **fields)

    def housekeeping(self, stop_timer=True):
        """Recover a journal, revert an expired confirmation; notes in the report."""
        rep = self.rep
        info = transaction.recover(self.sd, self.runner)      # JournalError, RecoveryFailed
        if info:
            rep.doc["recovered"] = info
            rep.say(f"recovered: an interrupted {info['op']} (pid {info['pid']}, started "
                    f"{info['started']}) had left its journal; the host is back at its snapshot "
                    "(verified)")
            self.audit("recover", "restored", interrupted=info["op"], interrupted_pid=info["pid"],
                       policy_hash=info["policy_hash"], problems=info["errors"] or None)
        doc = confirm.pending(self.sd)
        if doc and confirm.expired(doc):
            out = self.revert_confirmation(doc, "confirm-expired", stop_timer)
            rep.doc["expired"] = out.as_json()
            if out.ok:
                rep.say(f"reverted: the apply waiting for confirmation until {_when(doc['deadline'])} "
                        "was not committed in time; the host is back at its snapshot")
            else:
                rep.say(f"the unconfirmed apply (deadline {_when(doc['deadline'])}) could not be "
                        f"reverted: {out.reason}")
        return info

    def revert_confirmation(self, doc, op, stop_timer=True):
        model = host.model_from(doc["model"], doc["scope"])
        snap = model.normalize(doc["snapshot"])
        out = transaction.run(self.sd, model, self.runner, snap, op)
        if out.ok:
            statedir.remove(self.sd.confirm)
            if stop_timer:
                confirm.stop_timer(doc)
        self.audit(op, "reverted" if out.ok else out.result, policy_hash=doc.get("policy_hash"),
                   changes=[str(s) for s in out.steps], rollback_reason=out.reason,
                   problems=out.problems or None)
        return out


def _guard(fn):
    """Map the failures every transactional command shares to exit codes."""
    def wrapped(args, runner, out, prog):
        rep = Report(args, out)
        try:
            return fn(args, runner, rep, prog)
        except LockBusy as e:
            rep.doc["error"] = str(e)
            rep.say(f"vfwarpctl: {e}")
            return rep.done(E_BUSY)
        except (JournalError, transaction.RecoveryFailed) as e:
            rep.doc["error"] = str(e)
            rep.doc["problems"] = getattr(e, "problems", [])
            rep.say(f"vfwarpctl: {e}")
            rep.lines += [f"  {p}" for p in rep.doc["problems"]]
            return rep.done(E_NOT_RESTORED)
        except statedir.StateError as e:
            rep.doc["error"] = str(e)
            rep.say(f"vfwarpctl: {e}")
            return rep.done(E_NOT_RESTORED)
        except live.LiveError as e:
            rep.doc["error"] = str(e)
            rep.say(f"vfwarpctl: cannot read the live state: {e}")
            return rep.done(E_LIVE)
    wrapped.__name__ = fn.__name__
    return wrapped


def _load_policy(args, runner, rep):
    """(Policy, desired) with VF numbers checked against the PF's
    sriov_totalvfs; None after reporting the errors."""
    total = args.totalvfs
    if total is None:
        total = lambda pf: live.read_sriov(runner, pf)["totalvfs"]  # noqa: E731
    cache = parse_cache.Cache(statedir.StateDir(args.state_dir, args.audit_log).path,
                              create=args.cmd == "apply")
    try:
        p = policy.load(args.files, totalvfs=total, cache=cache)
    except policy.PolicyInvalid as e:
        rep.doc.update(valid=False, errors=[x.as_json() for x in e.errors])
        rep.lines += [str(x) for x in e.errors]
        return None
    return p, dz.compile_policy(p)


@_guard
def cmd_apply(args, runner, rep, prog):
    with timings.span("load policy files"):
        loaded = _load_policy(args, runner, rep)
    sd = statedir.StateDir(args.state_dir, args.audit_log)
    if loaded is None:
        audit.append(sd.audit_log, "apply", "invalid", files=args.files,
                     errors=[e["rule"] for e in rep.doc["errors"]])
        return rep.done(E_INVALID)
    p, want = loaded
    phash = audit.policy_hash(p.files)
    skip = set(args.skip or ()) | (set(host.NOT_APPLIED) if args.skip_unapplied else set())
    needs = host.needed_unapplied(p, want)
    refused = [(l, why, w) for l, why, w in needs if l not in skip]
    rep.doc.update(files=p.files, policy_hash=phash,
                   not_applied={l: why for l, why, _ in needs})
    if refused:
        for l, why, w in refused:
            rep.say(f"{w}: not applied: {l}: {why}")
        rep.say("refused: nothing changed; leave these out of the files, or pass --skip "
                f"{','.join(sorted({l for l, _, _ in refused}))} (or --skip-unapplied) to apply the rest")
        rep.doc["result"] = "refused"
        audit.append(sd.audit_log, "apply", "refused", files=p.files, policy_hash=phash,
                     not_applied={l: why for l, why, _ in refused})
        return rep.done(E_UNAPPLIED)
    for l, why, _ in needs:
        rep.say(f"not applied: {l}: {why}")
    with Session(args, runner, rep, prog) as s:
        with timings.span("lock, housekeeping"):
            s.housekeeping()
        doc = confirm.pending(s.sd)
        if doc:
            rep.doc["result"] = "busy"
            rep.say(f"refused: the previous apply waits for confirmation until "
                    f"{_when(doc['deadline'])}: `vfwarpctl commit` or `vfwarpctl rollback` first")
            return rep.done(E_BUSY)
        with timings.span("host model (probe devlink, libvirt)"):
            model = host.PfHost.for_desired(runner, want, libvirt="networks" not in skip)
        model.refuse_in_use = not args.allow_disruptive
        unavailable = host.unavailable(model, want)
        if "networks" in skip:
            unavailable = [(l, host.SKIPPABLE[l] if l == "networks" else why)
                           for l, why in unavailable]
        for l, why in unavailable:
            rep.doc["not_applied"][l] = why
            needs.append((l, why, None))
            rep.say(f"not applied: {l}: {why}")
        try:
            out = transaction.run(s.sd, model, runner, model.target(want), "apply", phash,
                                  transaction.Injection.from_env())
        except network_layer.Refused as e:
            rep.doc.update(result="refused", error=str(e))
            rep.say(f"refused: {e}")
            rep.say("nothing changed")
            s.audit("apply", "refused", files=p.files, policy_hash=phash, error=str(e))
            return rep.done(E_REFUSED)
        rep.doc.update(out.as_json())
        confirm_doc = None
        if out.result == "applied":
            if args.confirm_within:
                confirm_doc = confirm.start(s.sd, model, out.snapshot, args.confirm_within, prog, phash)
                rep.doc["confirm"] = {"deadline": _when(confirm_doc["deadline"]),
                                      "timer": confirm_doc["timer"]}
            else:
                statedir.write_json(s.sd.last, {"model": model.kind, "scope": model.scope,
                                                "snapshot": out.snapshot, "time": _now(),
                                                "policy_hash": phash})
        with timings.span("audit log"):
            s.audit("apply", out.result, files=p.files, policy_hash=phash,
                    changes=[str(x) for x in out.steps], rollback_reason=out.reason,
                    problems=out.problems or None,
                    not_applied={l: why for l, why, _ in needs} or None,
                    confirm_within=args.confirm_within)
    _say_outcome(rep, out, "apply")
    if confirm_doc:
        rep.say(f"waiting for confirmation: reverted at {_when(confirm_doc['deadline'])} "
                f"({args.confirm_within} s) unless `vfwarpctl commit` comes first "
                f"(timer: {confirm_doc['timer']['how']})")
    return rep.done({"applied": E_OK, "unchanged": E_OK, "restored": E_RESTORED}.get(out.result,
                                                                                   E_NOT_RESTORED))


def _say_outcome(rep, out, what):
    if out.result == "unchanged":
        rep.say(f"no changes: the host already matches ({', '.join(out.snapshot)}); "
                "nothing was done")
        return
    if out.result == "applied":
        rep.say(f"{what}: {len(out.steps)} steps")
        rep.lines += [f"  {s}" for s in out.steps]
        rep.say("verified: the state read back equals the target")
        return
    rep.say(f"{what} failed: {out.reason}")
    rep.say(f"  {out.ran} of {len(out.steps)} steps had run; undone in reverse order")
    rep.lines += [f"  {p}" for p in out.problems]
    if out.result == "restored":
        rep.say("restored: the host is back at its snapshot (verified)")
    else:
        rep.say("NOT RESTORED: the host differs from its snapshot (above); the journal is kept "
                "and the next vfwarpctl apply/rollback/status tries again")


@_guard
def cmd_rollback(args, runner, rep, prog):
    with Session(args, runner, rep, prog) as s:
        if s.housekeeping():
            rep.doc["result"] = "recovered"
            rep.say("rollback: done by the recovery above")
            return rep.done(E_OK)
        doc = confirm.pending(s.sd)
        if doc:
            out = s.revert_confirmation(doc, "rollback")
            rep.doc.update(out.as_json())
            _say_outcome(rep, out, "rollback")
            return rep.done(E_OK if out.ok else E_NOT_RESTORED)
        last = statedir.read_json(s.sd.last)
        if last is None:
            rep.doc["result"] = "nothing"
            rep.say("nothing to roll back: no snapshot of an earlier apply")
            return rep.done(E_NOTHING)
        model = host.model_from(last["model"], last["scope"])
        out = transaction.run(s.sd, model, runner, model.normalize(last["snapshot"]), "rollback",
                              last.get("policy_hash"))
        if out.ok:
            statedir.remove(s.sd.last)
        s.audit("rollback", out.result, policy_hash=last.get("policy_hash"),
                changes=[str(x) for x in out.steps], rollback_reason=out.reason,
                problems=out.problems or None, snapshot_time=last.get("time"))
        rep.doc.update(out.as_json())
        rep.doc["snapshot_time"] = last.get("time")
        rep.say(f"rollback to the snapshot taken {last.get('time')} (before the last apply)")
        _say_outcome(rep, out, "rollback")
    return rep.done({"applied": E_OK, "unchanged": E_OK, "restored": E_RESTORED}.get(out.result,
                                                                                   E_NOT_RESTORED))


@_guard
def cmd_commit(args, runner, rep, prog):
    with Session(args, runner, rep, prog) as s:
        s.housekeeping()
        if "expired" in rep.doc:
            rep.doc["result"] = "too-late"
            rep.say("commit: too late, the change was reverted")
            return rep.done(E_NOTHING)
        doc = confirm.pending(s.sd)
        if doc is None:
            rep.doc["result"] = "nothing"
            rep.say("nothing to commit: no apply waits for confirmation")
            return rep.done(E_NOTHING)
        statedir.write_json(s.sd.last, {"model": doc["model"], "scope": doc["scope"],
                                        "snapshot": doc["snapshot"], "time": _now(),
                                        "policy_hash": doc.get("policy_hash")})
        statedir.remove(s.sd.confirm)
        confirm.stop_timer(doc)
        s.audit("commit", "committed", policy_hash=doc.get("policy_hash"),
                seconds_left=round(doc["deadline"] - time.time(), 1))
        rep.doc["result"] = "committed"
        rep.say(f"committed: the apply stays (it had {doc['deadline'] - time.time():.0f} s left)")
    return rep.done(E_OK)


@_guard
def cmd_status(args, runner, rep, prog):
    with Session(args, runner, rep, prog) as s:
        s.housekeeping()
        doc = confirm.pending(s.sd)
        last = statedir.read_json(s.sd.last)
        tail = audit.tail(s.sd.audit_log, 1)
    rep.doc.update(state_dir=s.sd.path, audit_log=s.sd.audit_log, journal=None,
                   confirm=None if doc is None else {
                       "deadline": _when(doc["deadline"]),
                       "seconds_left": round(doc["deadline"] - time.time(), 1),
                       "timer": doc.get("timer"), "policy_hash": doc.get("policy_hash")},
                   last_snapshot=None if last is None else {
                       "time": last.get("time"), "scope": last.get("scope"),
                       "policy_hash": last.get("policy_hash")},
                   last_audit=tail[0] if tail else None)
    rep.say("journal: none (no transaction in progress or interrupted)")
    rep.say("confirmation: " + ("none" if doc is None else
                                f"waiting until {_when(doc['deadline'])} "
                                f"({doc['deadline'] - time.time():.0f} s left; timer "
                                f"{(doc.get('timer') or {}).get('how')})"))
    rep.say("rollback target: " + ("none" if last is None else
                                   f"snapshot of {_scope(last.get('scope'))} taken {last.get('time')}"))
    if tail:
        t = tail[0]
        rep.say(f"last audit record: {t.get('time')} {t.get('command')} {t.get('result')}"
                + (f" ({t['rollback_reason']})" if t.get("rollback_reason") else ""))
    return rep.done(E_OK)


def cmd_drift(args, runner, out, prog):
    """Compare the live host with the files; changes nothing (safe for cron)."""
    rep = Report(args, out)
    try:
        with timings.span("load policy files"):
            loaded = _load_policy(args, runner, rep)
        if loaded is None:
            return rep.done(E_INVALID)
        p, want = loaded
        with timings.span("read live state"):
            state = pl.read_live(runner, want)
    except live.LiveError as e:
        rep.doc["error"] = str(e)
        rep.say(f"vfwarpctl: cannot read the live state: {e}")
        return rep.done(E_LIVE)
    with timings.span("diff"):
        changes = pl.diff(state, want)
    needs = host.needed_unapplied(p, want)
    sd = statedir.StateDir(args.state_dir, args.audit_log)
    pending = [n for n, f in (("journal", sd.journal), ("confirmation", sd.confirm))
               if os.path.exists(f)]
    rep.doc.update(drift=[c.as_json() for c in changes], unread=state["unread"],
                   not_applied={l: why for l, why, _ in needs}, pending=pending)
    for c in changes:
        rep.say(f"drift: {c}")
    for layer, why in sorted(state["unread"].items()):
        rep.say(f"? {layer}: not compared: {why}")
    for n in pending:
        rep.say(f"note: a {n} is pending in {sd.path} (`vfwarpctl status` settles it)")
    rep.say(f"{len(changes)} differences" if changes else "no drift: the host matches the files")
    return rep.done(E_CHANGES if changes else E_OK)


def cmd_confirm_timer(args, runner, out, prog):
    """Hidden: the timer of `apply --confirm-within` (confirm.py)."""
    sd = statedir.StateDir(args.state_dir, args.audit_log)
    if not confirm.wait_for_deadline(sd, args.token):
        return E_OK
    rep = Report(args, out)
    try:
        with Session(args, runner, rep, prog) as s:
            doc = confirm.pending(s.sd)
            if doc is None or doc["token"] != args.token:
                return E_OK                  # settled while we waited for the lock
            s.revert_confirmation(doc, "confirm-expired", stop_timer=False)
    except Exception as e:                   # nobody reads our output: leave a trace
        audit.append(sd.audit_log, "confirm-timer", "error", error=f"{type(e).__name__}: {e}")
        raise
    return E_OK


def add_parsers(sub, common, files_opts):
    s = sub.add_parser("apply", parents=[common, files_opts],
                       help="make the host match the files, as one transaction")
    s.add_argument("--confirm-within", type=_seconds, metavar="SECONDS",
                   help="revert unless `vfwarpctl commit` comes within SECONDS (e.g. 60 or 60s)")
    s.add_argument("--skip", type=_layer_list,
                   action="extend", metavar="LAYER[,LAYER]",
                   help=f"apply the rest although the files ask for these unapplied layers "
                        f"({', '.join(host.NOT_APPLIED)}); `networks`: leave libvirt's "
                        f"networks alone, libvirt not even asked (the boot unit, ordered "
                        f"before libvirtd)")
    s.add_argument("--skip-unapplied", action="store_true",
                   help="skip every layer that is not applied yet")
    s.add_argument("--allow-disruptive", action="store_true",
                   help="make changes that disturb running VMs (restart or remove a libvirt "
                        "network a running domain uses); refused without it, naming the domains")
    s.set_defaults(fn=cmd_apply)
    s = sub.add_parser("drift", parents=[common, files_opts],
                       help="does the live host differ from the files? (exit 0: no, 4: yes)")
    s.set_defaults(fn=cmd_drift)
    for name, fn, hlp in (("rollback", cmd_rollback, "return the host to the snapshot taken "
                           "before the last apply"),
                          ("commit", cmd_commit, "keep an apply made with --confirm-within"),
                          ("status", cmd_status, "journal, pending confirmation, rollback target, "
                           "last audit record")):
        s = sub.add_parser(name, parents=[common], help=hlp)
        s.set_defaults(fn=fn)
    s = sub.add_parser("_confirm-timer", parents=[common])
    s.add_argument("token")
    s.set_defaults(fn=cmd_confirm_timer)


def _layer_list(text):
    names = [x for x in text.split(",") if x]
    known = [*host.NOT_APPLIED, *host.SKIPPABLE]
    bad = [x for x in names if x not in known]
    if bad:
        raise argparse.ArgumentTypeError(f"not a layer that is skipped: {', '.join(bad)} "
                                         f"(layers: {', '.join(known)})")
    return names


def _scope(scope):
    return ", ".join(f"{k} {v}" for k, v in sorted((scope or {}).items())) or "?"


def _seconds(text):
    t = text[:-1] if text.endswith("s") else text
    if not t.isdigit() or not 1 <= int(t) <= 86400:
        raise ValueError(text)
    return int(t)


def default_prog():
    """How the timer process runs this vfwarpctl again."""
    return [sys.executable, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__)))), "vfwarpctl")]
