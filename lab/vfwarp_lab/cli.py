"""labctl: boot, inspect, reach and tear down the emulated hosts.

  labctl up [-n 2]            boot h1..hN and wait for ssh
  labctl status               one line per host
  labctl ssh HOST [CMD...]    run a command (or a shell) on a host
  labctl down                 stop everything, remove sockets
Errors are one line on stderr and exit status 2; `up` cleans up after itself.
"""
import argparse
import json
import os
import sys
from pathlib import Path

from .hosts import DEFAULT_STATE, Lab
from .paths import Image, LabError


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="labctl", description=__doc__.splitlines()[0])
    ap.add_argument("--state", type=Path, default=DEFAULT_STATE,
                    help=f"lab state directory (default {DEFAULT_STATE})")
    ap.add_argument("--image", type=Path, help="guest image directory (default: the cached one)")
    sub = ap.add_subparsers(dest="cmd", required=True)
    up = sub.add_parser("up", help="boot hosts")
    up.add_argument("-n", "--hosts", type=int, default=2)
    up.add_argument("--ssh-port-base", type=int, default=0,
                    help="ssh ports base..base+N-1 on 127.0.0.1 (default: free ports)")
    up.add_argument("--mem", type=int, default=2048, help="MiB per host")
    up.add_argument("--cpus", type=int, default=1)
    up.add_argument("--boot-timeout", type=float, default=600)
    sub.add_parser("down", help="stop every host")
    st = sub.add_parser("status", help="show hosts")
    st.add_argument("--json", action="store_true")
    sh = sub.add_parser("ssh", help="run a command on a host")
    sh.add_argument("host")
    sh.add_argument("command", nargs=argparse.REMAINDER)
    args = ap.parse_args(argv)

    try:
        image = Image(args.image) if args.image else None
        lab = Lab(args.state, image=image)
        if args.cmd == "up":
            names = lab.up(args.hosts, args.ssh_port_base, args.mem, args.cpus, args.boot_timeout)
            print(f"lab up: {', '.join(names)} (state {args.state})")
        elif args.cmd == "down":
            n = lab.down()
            print(f"lab down: stopped {n} process(es)")
        elif args.cmd == "status":
            rows = lab.status()
            if args.json:
                print(json.dumps(rows, indent=1))
            elif not rows:
                print("lab is down")
            else:
                for r in rows:
                    print(f"{r['host']:4} {'running' if r['running'] else 'stopped':8} "
                          f"pid {r['pid']:<8} ssh {r['ssh']:16} uplink {r['uplink_mac']}")
        elif args.cmd == "ssh":
            cmd = " ".join(args.command)
            if not cmd:
                spec = lab.host(args.host)
                argv = lab._ssh_argv(spec, "")[:-1]
                argv.insert(1, "-t")
                os.execvp(argv[0], argv)
            r = lab.ssh(args.host, cmd, check=False, capture=False)
            return r.returncode
    except LabError as e:
        print(f"labctl: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("labctl: interrupted", file=sys.stderr)
        return 130
    return 0
