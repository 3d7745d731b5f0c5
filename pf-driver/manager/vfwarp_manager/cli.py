"""vfwarpctl: validate policy files, and plan what applying them would change.

Exit status (stable; docs/policy.md):
  0  valid / nothing to change
  1  the policy files are invalid (every error printed, nothing done)
  2  usage error
  3  the live state could not be read (tool missing or failing, not an SR-IOV PF)
  4  plan: the host differs from the files (changes listed)
"""
import argparse
import json
import sys

from . import desired as dz
from . import format_v1, live, plan as pl, policy
from .runner import Runner

EXIT_OK, EXIT_INVALID, EXIT_USAGE, EXIT_LIVE, EXIT_CHANGES = 0, 1, 2, 3, 4


def _load(args, runner):
    """Policy, or (exit code) after printing the errors."""
    total = args.totalvfs
    if getattr(args, "live", False) and total is None:
        host = _host_pf(args.files)
        if host:
            total = live.read_sriov(runner, host)["totalvfs"]
    return policy.load(args.files, totalvfs=total)


def _host_pf(files):
    """The PF a host file names, read leniently to find the device to ask."""
    try:
        p = policy.load(files)
        return p.pf
    except policy.PolicyInvalid:
        return None


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
        p = _load(args, runner)
        want = dz.compile_policy(p)
        state = pl.read_live(runner, want)
        if p.host.data["adapter"]["num_vfs"] > state["sriov"]["totalvfs"]:
            p = policy.load(args.files, totalvfs=state["sriov"]["totalvfs"])   # raises with the place
    except policy.PolicyInvalid as e:
        return _invalid(e, args, out)
    except live.LiveError as e:
        return _live_error(e, args, out)
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


def parser():
    ap = argparse.ArgumentParser(prog="vfwarpctl", description="vfwarp PF manager: tenant policy "
                                 "files -> sriov_numvfs, ip link, devlink rate, tc, dcb, libvirt")
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name, fn, hlp in (("validate", cmd_validate, "check policy files; change nothing"),
                          ("plan", cmd_plan, "show what apply would change, with its disruption")):
        s = sub.add_parser(name, help=hlp)
        s.add_argument("files", nargs="+", help="policy files or directories of *.yaml")
        s.add_argument("--json", action="store_true", help="machine-readable output")
        s.add_argument("--totalvfs", type=int, help="the PF's sriov_totalvfs (default: read it "
                       "with --live, or plan)")
        if name == "validate":
            s.add_argument("--live", action="store_true", help="also check against the PF's sysfs")
        s.set_defaults(fn=fn)
    s = sub.add_parser("schema", help="print the JSON Schema of the format (for editors)")
    s.set_defaults(fn=cmd_schema, json=True)
    return ap


def main(argv=None, runner=None, out=None):
    args = parser().parse_args(argv)
    return args.fn(args, runner or Runner(), out or sys.stdout)
