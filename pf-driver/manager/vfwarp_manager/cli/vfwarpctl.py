"""vfwarpctl: validate policy files, plan what applying them would change,
apply them as one transaction, watch for drift, roll back (txn.py).

Exit status (stable; docs/policy.md):
  0  valid / nothing to change / applied / no drift
  1  the policy files are invalid (every error printed, nothing done)
  2  usage error
  3  the live state could not be read (tool missing or failing, not an SR-IOV PF)
  4  plan, drift: the host differs from the files (differences listed)
  5  apply/rollback failed and was undone: the host is back at its snapshot (verified)
  6  the host is NOT at its snapshot (an undo or a recovery failed; journal kept), or a
     state file is unusable
  7  busy: another vfwarpctl holds the lock, or an apply waits for confirmation
  8  apply refused: the files ask for a layer that is not applied yet (nothing changed)
  9  nothing to roll back / commit (or commit too late: the change was reverted)
  10 apply refused, nothing changed: a libvirt network the files ask for is held by a
     foreign network of that name, or a change would restart or remove a network a
     running domain uses (without --allow-disruptive)
"""
import argparse
import json
import sys
import time

from .. import timings
from ..layers import desired as dz, live
from ..policy import parse_cache, validate as policy
from ..runner import Runner
from ..txn import plan as pl, statedir
from . import txn as cli_txn, vf as cli_vf

EXIT_OK, EXIT_INVALID, EXIT_USAGE, EXIT_LIVE, EXIT_CHANGES = 0, 1, 2, 3, 4


def _load(args, runner):
    """Policy, or (exit code) after printing the errors."""
    total = args.totalvfs
    if getattr(args, "live", False) and total is None:
        total = lambda pf: live.read_sriov(runner, pf)["totalvfs"]  # noqa: E731
    # plan shares apply's parse cache (the state dir); validate always parses
    cache = parse_cache.Cache(statedir.StateDir().path) if args.cmd == "plan" else None
    return policy.load(args.files, totalvfs=total, cache=cache)


def cmd_validate(args, runner, out):
    try:
        p = _load(args, runner)
    except policy.PolicyInvalid as e:
        return _invalid(e, args, out)
    except live.LiveError as e:
        return _live_error(e, args, out)
    if args.json:
        json.dump({"valid": True, "files": p.files,
                   "tenants": {t.name: t.vfs for t in p.tenants}}, out, indent=1)
        out.write("\n")
    else:
        out.write(f"valid: {len(p.files)} files, host {p.pf}, "
                  f"{len(p.tenants)} tenants ({', '.join(f'{t.name}: VFs {_ranges(t.vfs)}' for t in p.tenants)})\n")
    return EXIT_OK


def cmd_plan(args, runner, out):
    try:
        with timings.span("load policy files"):
            p = _load(args, runner)
        with timings.span("compile"):
            want = dz.compile_policy(p)
        with timings.span("read live state"):
            state = pl.read_live(runner, want)
        if p.host.data["adapter"]["num_vfs"] > state["sriov"]["totalvfs"]:
            p = policy.load(args.files, totalvfs=state["sriov"]["totalvfs"])   # raises with the place
    except policy.PolicyInvalid as e:
        return _invalid(e, args, out)
    except live.LiveError as e:
        return _live_error(e, args, out)
    with timings.span("diff"):
        changes = pl.diff(state, want)
    if args.json:
        json.dump({"changes": [c.as_json() for c in changes], "worst": pl.worst(changes),
                   "unread": state["unread"]}, out, indent=1)
        out.write("\n")
    else:
        for c in changes:
            out.write(f"{c}\n")
        for layer, why in sorted(state["unread"].items()):
            out.write(f"? {layer}: not compared: {why}\n")
        out.write(f"{len(changes)} changes" + (f", worst: {pl.worst(changes)}\n" if changes else "\n"))
    return EXIT_CHANGES if changes else EXIT_OK


def cmd_schema(args, runner, out):
    from ..policy import format_v1
    json.dump(format_v1.json_schema(), out, indent=2, sort_keys=False)
    out.write("\n")
    return EXIT_OK


def _invalid(e, args, out):
    if args.json:
        json.dump({"valid": False, "errors": [x.as_json() for x in e.errors]}, out, indent=1)
        out.write("\n")
    else:
        for x in e.errors:
            out.write(f"{x}\n")
    return EXIT_INVALID


def _live_error(e, args, out):
    if args.json:
        json.dump({"error": str(e)}, out)
        out.write("\n")
    else:
        sys.stderr.write(f"vfwarpctl: cannot read the live state: {e}\n")
    return EXIT_LIVE


def _ranges(ns):
    out, ns = [], sorted(ns)
    i = 0
    while i < len(ns):
        j = i
        while j + 1 < len(ns) and ns[j + 1] == ns[j] + 1:
            j += 1
        out.append(str(ns[i]) if i == j else f"{ns[i]}-{ns[j]}")
        i = j + 1
    return ",".join(out) or "none"


TIMINGS_HELP = ("print where the time went to stderr: wall time per phase, processes "
                "per tool (with --json: one JSON object)")


def parser():
    ap = argparse.ArgumentParser(prog="vfwarpctl", description="vfwarp PF manager: tenant policy "
                                 "files -> sriov_numvfs, ip link, devlink rate, tc, dcb, libvirt")
    sub = ap.add_subparsers(dest="cmd", required=True, metavar="COMMAND")
    for name, fn, hlp in (("validate", cmd_validate, "check policy files; change nothing"),
                          ("plan", cmd_plan, "show what apply would change, with its disruption")):
        s = sub.add_parser(name, help=hlp)
        s.add_argument("files", nargs="+", help="policy files or directories of *.yaml")
        s.add_argument("--json", action="store_true", help="machine-readable output")
        s.add_argument("--timings", action="store_true", help=TIMINGS_HELP)
        s.add_argument("--totalvfs", type=int, help="the PF's sriov_totalvfs (default: read it "
                       "with --live, or plan)")
        if name == "validate":
            s.add_argument("--live", action="store_true", help="also check against the PF's sysfs")
        s.set_defaults(fn=fn)
    s = sub.add_parser("schema", help="print the JSON Schema of the format (for editors)")
    s.set_defaults(fn=cmd_schema, json=True)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--json", action="store_true", help="machine-readable output")
    common.add_argument("--timings", action="store_true", help=TIMINGS_HELP)
    common.add_argument("--state-dir", help="lock, journal, snapshots (default $VFWARP_STATE_DIR "
                        "or /run/vfwarp; also holds audit.jsonl when given)")
    common.add_argument("--audit-log", help="audit log (default $VFWARP_AUDIT_LOG or "
                        "/var/log/vfwarp/audit.jsonl)")
    common.add_argument("--wait", type=float, default=10.0, metavar="SECONDS",
                        help="how long to wait for another vfwarpctl's lock (default 10)")
    files = argparse.ArgumentParser(add_help=False)
    files.add_argument("files", nargs="+", help="policy files or directories of *.yaml")
    files.add_argument("--totalvfs", type=int, help="the PF's sriov_totalvfs (default: read it)")
    cli_txn.add_parsers(sub, common, files)
    cli_vf.add_parsers(sub, common, files)
    return ap


def main(argv=None, runner=None, out=None, prog=None):
    """prog: how a timer process runs this vfwarpctl again (default: this file's
    vfwarpctl with this Python)."""
    args = parser().parse_args(argv)
    rec = timings.start(timings.STARTED) if getattr(args, "timings", False) else None
    if rec:
        rec.add("start-up (interpreter, imports, arguments)", time.monotonic() - rec.t0)
    runner = runner or Runner()
    try:
        if args.fn.__module__ == cli_txn.__name__:
            return args.fn(args, runner, out or sys.stdout, prog or cli_txn.default_prog())
        return args.fn(args, runner, out or sys.stdout)
    finally:
        runner.close()          # its virsh co-process (a new one starts if used again)
        if rec:
            timings.stop()
            err = sys.stderr
            if args.json:
                err.write(json.dumps({"timings": rec.as_json()}) + "\n")
            else:
                err.write("\n".join(rec.lines()) + "\n")
