"""The commands that keep a pool VF at its policy around libvirt:
reapply-vf (one VF, once or held for a while), install-hook, remove-hook
(libvirt/hold.py, libvirt/hook.py). Exit codes as in vfwarpctl.py."""
import json
import os
import signal
import sys
import time

E_OK, E_INVALID, E_USAGE, E_LIVE, E_BUSY = 0, 1, 2, 3, 7


def add_parsers(sub, common, files_opts):
    s = sub.add_parser("reapply-vf", parents=[common, files_opts],
                       help="put one VF back at its tenant's ip-link settings (after libvirt "
                            "set its MAC/VLAN); with --hold, keep doing so for a while")
    which = s.add_mutually_exclusive_group(required=True)
    which.add_argument("--pci", help="the VF's PCI address (dddd:bb:ss.f), as libvirt names it")
    which.add_argument("--vf", type=int, metavar="N", help="the VF's number on the files' PF")
    s.add_argument("--hold", type=_hold_seconds, default=0, metavar="SECONDS",
                   help="watch the PF's link events for SECONDS (1-600) and re-apply whenever "
                        "the VF differs (the libvirt hook uses this); default: check once")
    s.add_argument("--reason", default="", help="what started this (logged)")
    s.set_defaults(fn=cmd_reapply_vf)
    s = sub.add_parser("install-hook", parents=[common, files_opts],
                       help="install the libvirt network hook that keeps pool VFs at these "
                            "files' settings while domains hold them; reload libvirt")
    s.add_argument("--hooks-dir", default=None, help="libvirt's hook directory "
                   "(default /etc/libvirt/hooks)")
    s.add_argument("--hold", type=_hold_seconds, default=None, metavar="SECONDS",
                   help="how long each hold watches its VF (default 60)")
    s.add_argument("--log", help="where the hook and its holds log "
                   "(default /var/log/vfwarp/libvirt-hook.log)")
    s.set_defaults(fn=cmd_install_hook)
    s = sub.add_parser("remove-hook", parents=[common],
                       help="remove the libvirt network hook, end its running holds")
    s.add_argument("--hooks-dir", default=None, help="libvirt's hook directory")
    s.set_defaults(fn=cmd_remove_hook)


def _hold_seconds(text):
    t = text[:-1] if text.endswith("s") else text
    if not t.isdigit() or not 0 <= int(t) <= 600:
        raise ValueError(text)
    return int(t)


def _load_files(args, sd):
    from ..layers import desired as dz
    from ..policy import parse_cache, validate as policy
    cache = parse_cache.Cache(sd.path)
    return lambda: dz.compile_policy(policy.load(args.files, cache=cache))


def _files_problem(args, out):
    """Exit status and message when the files are invalid, else None."""
    from ..policy import validate as policy
    try:
        policy.load(args.files)
    except policy.PolicyInvalid as e:
        for x in e.errors:
            out.write(f"{x}\n")
        return E_INVALID
    return None


def cmd_reapply_vf(args, runner, out, prog=None):
    from ..layers import desired as dz
    from ..libvirt import hold as vh
    from ..policy import validate as policy
    from ..txn import statedir
    sd = statedir.StateDir(args.state_dir, args.audit_log)
    stamp = lambda: time.strftime("%Y-%m-%dT%H:%M:%S%z")  # noqa: E731

    notes = []

    def say(line):
        if args.json and not args.hold:
            notes.append(line)
            return
        out.write(f"{stamp()} reapply-vf {line}\n" if args.hold else f"{line}\n")
        out.flush()
    try:
        p = policy.load(args.files)
        if args.pci:
            pf, n = vh.vf_of_pci(args.pci)
        else:
            pf, n = p.pf, args.vf
            if n not in dz.compile_policy(p)["vfs"]:
                raise vh.HoldError(f"the files give {pf} no VF {n}")
    except policy.PolicyInvalid as e:
        for x in e.errors:
            out.write(f"{x}\n")
        return E_INVALID
    except vh.HoldError as e:
        say(f"{args.pci or args.vf}: {e}")
        return E_LIVE
    sd.ensure()
    hold = vh.Hold(runner, sd, _load_files(args, sd), pf, n, say)
    if not args.hold:
        try:
            fix = hold.check()
        except Exception as e:              # noqa: BLE001
            say(f"{pf} vf {n}: not corrected: {e}")
            return E_LIVE
        code = E_BUSY if hold.at_policy is None else E_OK
        if args.json:
            json.dump({"pf": pf, "vf": n, "corrected": {k: list(v) for k, v in fix.items()},
                       "notes": notes, "exit": code}, out)
            out.write("\n")
        elif not fix and code == E_OK:
            say(f"{pf} vf {n}: at the files' settings")
        return code
    key = args.pci or f"{pf}-vf{n}"
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))    # end the monitor on the way out
    vh.claim(sd, key)
    say(f"{pf} vf {n} ({key}) held for {args.hold} s: {args.reason or 'asked'}")
    try:
        hold.run(args.hold)
    finally:
        vh.release(sd, key)
        say(f"{pf} vf {n} ({key}) released: {hold.corrected} correction(s), "
            + {True: "at the files' settings", False: "NOT at the files' settings",
               None: "not checked (lock busy)"}[hold.at_policy])
    return E_OK if hold.at_policy else E_LIVE


def cmd_install_hook(args, runner, out, prog=None):
    from ..libvirt import hook as lh
    from ..txn import statedir
    bad = _files_problem(args, out)
    if bad is not None:
        return bad
    sd = statedir.StateDir(args.state_dir, args.audit_log)
    here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    config = {"python": sys.executable, "vfwarpctl": os.path.join(here, "vfwarpctl"),
              "package_dir": here, "files": [os.path.abspath(f) for f in args.files],
              "state_dir": os.path.abspath(sd.path),
              "hold": lh.DEFAULT_HOLD if args.hold is None else args.hold,
              "log": os.path.abspath(args.log or lh.DEFAULT_LOG)}
    hooks = args.hooks_dir or lh.DEFAULT_HOOKS_DIR
    changed = lh.install(hooks, config)
    out.write(f"{'installed' if changed else 'unchanged'}: {lh.hook_path(hooks)} "
              f"(holds of {config['hold']} s, log {config['log']})\n")
    return _reload(runner, out) if changed else E_OK


def cmd_remove_hook(args, runner, out, prog=None):
    from ..libvirt import hold as vh, hook as lh
    from ..txn import statedir
    hooks = args.hooks_dir or lh.DEFAULT_HOOKS_DIR
    sd = statedir.StateDir(args.state_dir, args.audit_log)
    ended = vh.end_all(sd)
    removed = lh.remove(hooks)
    out.write(f"{'removed' if removed else 'not installed'}: {lh.hook_path(hooks)}"
              + (f"; holds ended: {', '.join(ended)}" if ended else "") + "\n")
    return _reload(runner, out) if removed else E_OK


def _reload(runner, out):
    from ..libvirt import hook as lh
    code = E_OK
    for unit, problem in lh.reload_daemons(runner):
        out.write(f"{unit}: {'reloaded' if problem is None else 'NOT reloaded: ' + problem}\n")
        code = E_LIVE if problem else code
    return code
