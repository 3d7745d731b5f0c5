"""labctl: boot, inspect, reach and tear down the emulated hosts.

  labctl up [-n 2]            boot h1..hN and wait for ssh
  labctl status               one line per host
  labctl ssh HOST [CMD...]    run a command (or a shell) on a host
  labctl down                 stop everything, remove sockets
  labctl tenant up HOST NAME [--slot N]     boot a tenant VM (L2) on a host's libvirt
  labctl tenant attach HOST NAME VF [--mac M] [--vlan V] [--plain]
                              give the tenant VF number VF of the host's PF
                              (virsh attach-device --live)
  labctl tenant ssh NAME [CMD...]           run a command in a tenant
  labctl tenant down HOST NAME              destroy and undefine it
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
    tn = sub.add_parser("tenant", help="tenant VMs (L2) on the hosts").add_subparsers(
        dest="tcmd", required=True)
    tu = tn.add_parser("up", help="define and start a tenant, wait for its ssh")
    tu.add_argument("host")
    tu.add_argument("name")
    tu.add_argument("--slot", type=int, default=0, help="0..9: its management address")
    tu.add_argument("--mem", type=int, default=512, help="MiB")
    ta = tn.add_parser("attach", help="virsh attach-device --live a VF of the host's PF")
    ta.add_argument("host")
    ta.add_argument("name")
    ta.add_argument("vf", type=int)
    ta.add_argument("--mac", help="<interface type='hostdev'> with this MAC")
    ta.add_argument("--vlan", type=int, default=0)
    ta.add_argument("--plain", action="store_true", help="a plain <hostdev> instead")
    ts = tn.add_parser("ssh", help="run a command in a tenant")
    ts.add_argument("name")
    ts.add_argument("command", nargs=argparse.REMAINDER)
    td = tn.add_parser("down", help="destroy and undefine a tenant")
    td.add_argument("host")
    td.add_argument("name")
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
        elif args.cmd == "tenant":
            return tenant_cmd(lab, args)
    except LabError as e:
        print(f"labctl: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("labctl: interrupted", file=sys.stderr)
        return 130
    return 0


def tenant_cmd(lab, args) -> int:
    from .tenants import Tenants, hostdev_interface_xml, hostdev_xml
    ten = Tenants(lab)
    if args.tcmd == "up":
        ten.prepare_host(args.host)
        took = ten.start(args.host, args.name, args.slot, mem_mb=args.mem)
        print(f"tenant {args.name} up on {args.host} in {took:.0f}s, "
              f"management address {ten.where[args.name][1]}")
    elif args.tcmd == "attach":
        pf = lab.ssh(args.host, "lspci -D -n -d 1234:f0a0 | awk 'NR==1{print $1}'").stdout.strip()
        r = lab.ssh(args.host, f"readlink /sys/bus/pci/devices/{pf}/virtfn{args.vf}", check=False)
        if r.returncode != 0:
            raise LabError(f"{args.host}: no VF {args.vf} on the PF {pf or '(none)'}")
        bdf = r.stdout.strip().rsplit("/", 1)[-1]
        if args.plain:
            xml = hostdev_xml(bdf)
        else:
            if not args.mac:
                raise LabError("--mac is needed for an <interface type='hostdev'> (or --plain)")
            xml = hostdev_interface_xml(bdf, args.mac, args.vlan)
        r = ten.virsh(args.host, f"attach-device {args.name} {{xml}} --live", stdin_xml=xml,
                      check=False)
        if r.returncode != 0:
            raise LabError(f"{args.host}: {(r.stderr or r.stdout).strip()}")
        print(f"{args.host}: VF {args.vf} ({bdf}) attached to {args.name}")
    elif args.tcmd == "ssh":
        r = ten.ssh(args.name, " ".join(args.command) or "true", check=False, timeout=3600)
        sys.stdout.write(r.stdout)
        sys.stderr.write(r.stderr)
        return r.returncode
    elif args.tcmd == "down":
        ten.destroy(args.host, args.name)
        print(f"tenant {args.name} on {args.host}: destroyed")
    return 0
