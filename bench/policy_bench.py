#!/usr/bin/env python3
"""Benchmark (not a test): `vfwarpctl` with 128 VFs and 32 tenants on a lab
host (issue 19): the files applied from nothing (sriov_numvfs 0, no owned
rate nodes, DCB at the device's defaults), re-applied unchanged, planned,
and checked for drift; REPS times each, min and median. Targets: apply
from nothing <= 5 s, re-apply <= 1 s, plan <= 1 s.

Each run starts on a quiet host (udev settled, the vCPU 90% idle over a
second; the wait is recorded: what the run before left the host doing) and
is timed inside the host (bash $EPOCHREALTIME around vfwarpctl,
no ssh in the figure) and with `--timings`, which says where the time went
(start-up, policy files, reading the kernel, the steps per tool and
process counts). The kernel's own part is measured on its own: sriov_numvfs
0 -> 128 and back, one `ip -j -d link show` of 128 VFs, 128 `ip link set
... vf N` as separate processes and as one `ip -batch`, and the
interpreter's start-up.

    python3 bench/policy_bench.py [--reps 3] [--baseline REV] [--libvirtd warm|cold]

libvirt: all of a run's libvirt commands go through one virsh process
(pf-driver/manager/vfwarp_manager/virsh_session.py), whose connection
costs what libvirtd costs to reach: the image's libvirtd is
socket-activated with `--timeout 120` (Debian's default LIBVIRTD_ARGS):
idle for 2 minutes it exits, and the next connection starts it again.
--libvirtd warm (the default) connects once (`virsh version`) before each
timed run, outside the figure; cold stops libvirtd before each, so the run
pays its start. Each run records whether libvirtd was running before it
and whether it was (re)started during it; the kernel part times a cold
start + first connection and a warm connection on their own.

--baseline REV also runs the manager of git revision REV (e.g. main) on
the same host in the same way, for a before/after. Writes
bench/results/policy.json. Needs `make qemu modules image`.

The files (generated here, `policy_files()`): a legacy-mode host (tenant
ACLs need switchdev: the validator refuses `acl` in legacy mode, and 128
representors are a different benchmark), 128 VFs, a 10 Gbit/s line, two
ETS classes with a priority map and DSCP table; 32 tenants of 4 VFs each
(VFs 4i..4i+3), each with a MAC base, its own VLAN and 802.1p priority,
spoof check on, trust on every other tenant, per-VF cap, guarantee and
weight, a tenant rate node (cap, guarantee, weight) and one per-VF
override (a higher cap and a priority for its first VF).
"""
import argparse
import base64
import io
import json
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

import yaml

TOP = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TOP / "lab"))
sys.path.insert(0, str(TOP / "tests" / "lab"))
from vfwarp_lab import Image, Lab  # noqa: E402
from vfwarp_lab.paths import guest_share_dir  # noqa: E402
from lib.qos import RESET  # noqa: E402
from machine_info import machine  # noqa: E402

HOST = "h1"
PF_ID = "1234:f0a0"
PF = "enp1s0"
MOD = "/mnt/vfwarp/modules/vfwarp_pf.ko"
MANAGER = TOP / "pf-driver" / "manager"
NUM_VFS, TENANTS = 128, 32
TARGETS = {"apply_from_nothing": 5.0, "reapply_unchanged": 1.0, "plan": 1.0}
BDF = "$(lspci -D -n -d %s | awk 'NR==1{print $1}')" % PF_ID
QOS_RESET = RESET % {"bdf": BDF}


def policy_files(num_vfs=NUM_VFS, tenants=TENANTS):
    """{file name: YAML text}: the host file and one file per tenant."""
    per = num_vfs // tenants
    files = {"host.yaml": (
        "version: 1\nkind: host\n"
        f"adapter: {{pf: {PF}, num_vfs: {num_vfs}, line_rate: 10gbit}}\n"
        "traffic_classes:\n"
        "  - {tc: 0, name: best-effort, tsa: ets, bandwidth: 70}\n"
        "  - {tc: 1, name: bulk, tsa: ets, bandwidth: 30}\n"
        "prio_tc: [0, 1, 0, 0, 0, 0, 0, 0]\n"
        "dscp_prio: [{dscp: 10, priority: 1}, {dscp: 26, priority: 3}]\n")}
    for i in range(tenants):
        lo = i * per
        files[f"t{i:02d}.yaml"] = (
            f"version: 1\nkind: tenant\nname: t{i:02d}\n"
            f"vfs: {{range: {lo}-{lo + per - 1}}}\n"
            f"mac_base: \"02:00:00:00:{i:02x}:00\"\n"
            f"vlan: {100 + i}\nvlan_priority: {i % 4}\n"
            f"trust: {'true' if i % 2 else 'false'}\nspoofchk: true\n"
            "vf_rate: {tx_max: 1gbit, tx_share: 25mbit, tx_weight: 2}\n"
            "rate: {tx_max: 2gbit, tx_share: 150mbit, tx_weight: 5}\n"
            f"vf: [{{index: {lo}, tx_max: 1500mbit, tx_priority: 1}}]\n")
    return files


EMPTY = {"host.yaml": f"version: 1\nkind: host\nadapter: {{pf: {PF}, num_vfs: 0, line_rate: 10gbit}}\n"}


def bundle(manager_dir):
    """tar.gz (base64) of vfwarpctl + vfwarp_manager/ from manager_dir and
    the pure-Python part of this machine's PyYAML (the host image has none)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as t:
        t.add(manager_dir / "vfwarpctl", "vfwarpctl")
        for f in sorted((manager_dir / "vfwarp_manager").rglob("*.py")):   # subfolders too
            t.add(f, f"vfwarp_manager/{f.relative_to(manager_dir / 'vfwarp_manager')}")
        for f in sorted(Path(yaml.__file__).parent.glob("*.py")):
            t.add(f, f"yaml/{f.name}")
    return base64.b64encode(buf.getvalue()).decode()


def files_tar(files):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as t:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
    return base64.b64encode(buf.getvalue()).decode()


class Host:
    def __init__(self, lab):
        self.lab = lab

    def sh(self, cmd, check=True, timeout=600):
        return self.lab.ssh(HOST, cmd, check=check, timeout=timeout)

    def put_tar(self, b64, dest):
        self.sh(f"rm -rf {dest} /tmp/put.b64 && mkdir -p {dest}")
        for i in range(0, len(b64), 60000):     # one ssh argument stays far below 128 KiB
            self.sh(f"cat >> /tmp/put.b64 <<'EOF'\n{b64[i:i + 60000]}\nEOF")
        self.sh(f"base64 -d /tmp/put.b64 | tar xz -C {dest} && rm /tmp/put.b64")

    def libvirtd(self):
        """(systemd's ActiveState, MainPID) of libvirtd."""
        r = self.sh("systemctl show -p ActiveState -p MainPID libvirtd.service", check=False)
        kv = dict(ln.split("=", 1) for ln in r.stdout.split() if "=" in ln)
        return kv.get("ActiveState", "?"), kv.get("MainPID", "0")

    def set_libvirtd(self, mode):
        """Before a timed run: warm, libvirtd running (a connection made);
        cold, libvirtd stopped (its sockets stay: the run's connection
        starts it)."""
        if mode == "warm":
            self.sh("virsh -q -c qemu:///system version >/dev/null", timeout=300)
        elif mode == "cold":
            self.sh("systemctl stop libvirtd.service", timeout=300)

    def timed(self, opt, args, timings=True):
        """One vfwarpctl run timed inside the host: (seconds, exit, stdout
        JSON, timings JSON)."""
        r = self.sh(f"""cd {opt} && s=$EPOCHREALTIME
VFWARP_STATE_DIR=/run/vfwarp-bench ./vfwarpctl {args} --json {"--timings" if timings else ""} >/tmp/b.out 2>/tmp/b.err
rc=$?; e=$EPOCHREALTIME; echo "@@ $rc $s $e"; cat /tmp/b.out; echo "@@err"; cat /tmp/b.err""")
        head, _, rest = r.stdout.partition("\n")
        _, rc, s, e = head.split()
        out, _, err = rest.partition("@@err\n")
        tim = [json.loads(ln)["timings"] for ln in err.splitlines() if ln.startswith('{"timings"')]
        return float(e) - float(s), int(rc), json.loads(out) if out.strip() else None, \
            (tim[0] if tim else None), err

    def settle(self, idle=0.9, limit=120):
        """Wait until the host is quiet before a timed run: udev has handled the
        last run's events (128 VF netdevs come and go) and the vCPU was at least
        `idle` idle over one second; at most `limit` s. Returns the seconds
        waited (what the last run left the host doing), measured in the host."""
        r = self.sh(f"""s=$EPOCHREALTIME; udevadm settle --timeout={limit}
for i in $(seq {limit}); do
  read -r _ u n y i0 w q sq _ </proc/stat; sleep 1
  read -r _ u2 n2 y2 i1 w2 q2 sq2 _ </proc/stat
  busy=$(( (u2 + n2 + y2 + q2 + sq2) - (u + n + y + q + sq) )); idl=$(( (i1 + w2) - (i0 + w) ))
  [ $(( idl * 100 )) -ge $(( (busy + idl) * {int(idle * 100)} )) ] && break
done; e=$EPOCHREALTIME; echo "$s $e" """, timeout=limit * 3)
        s, e = r.stdout.split()[-2:]
        return round(float(e) - float(s), 2)

    def seconds(self, cmd):
        """Wall seconds of a shell command inside the host."""
        r = self.sh(f's=$EPOCHREALTIME; {{ {cmd} ; }} >/dev/null; e=$EPOCHREALTIME; echo "$s $e"')
        s, e = r.stdout.split()[-2:]
        return float(e) - float(s)


def to_nothing(h, opt, timings=True):
    """No VFs, no owned rate nodes (an apply of a host file with 0 VFs),
    DCB and the line rate at the device's defaults."""
    secs, rc, out, _, err = h.timed(opt, "apply /root/pol-empty", timings)
    if rc != 0:
        raise RuntimeError(f"reset apply failed ({rc}): {out} {err}")
    h.sh(QOS_RESET)
    left = h.sh(f"cat /sys/bus/pci/devices/{BDF}/sriov_numvfs; devlink port function rate show"
                ).stdout
    if left.split()[0] != "0" or "vfw-" in left:
        raise RuntimeError(f"not at nothing: {left}")


def run_manager(h, opt, reps, log, timings=True, libvirtd="warm"):
    """timings: the manager has --timings (a baseline from before it may not).
    libvirtd: warm | cold before each timed run (Host.set_libvirtd)."""
    phases = {k: [] for k in ("apply_from_nothing", "reapply_unchanged", "plan", "drift")}
    for rep in range(reps):
        to_nothing(h, opt, timings)
        for phase, args, want_rc, want_result in (
                ("apply_from_nothing", "apply /root/pol-bench", 0, "applied"),
                ("reapply_unchanged", "apply /root/pol-bench", 0, "unchanged"),
                ("plan", "plan /root/pol-bench", 0, None),
                ("drift", "drift /root/pol-bench", 0, None)):
            h.set_libvirtd(libvirtd)
            settled = h.settle()
            before = h.libvirtd()
            secs, rc, out, tim, err = h.timed(opt, args, timings)
            after = h.libvirtd()
            daemon = {"active_before": before[0] == "active",
                      "started_during_run": after[1] != before[1] and after[1] != "0"}
            if rc != want_rc or (want_result and (out or {}).get("result") != want_result):
                raise RuntimeError(f"{opt} {phase}: exit {rc}: {json.dumps(out)[:2000]} {err[-2000:]}")
            extra = {"steps": len(out.get("steps", []))} if want_result else {}
            phases[phase].append(dict({"s": round(secs, 3), "timings": tim, "libvirtd": daemon,
                                       "settled_before_s": settled}, **extra))
            log(f"{opt} rep {rep + 1} {phase}: {secs:.2f} s (host quiet after {settled:.0f} s; libvirtd "
                f"{'started by the run' if daemon['started_during_run'] else 'running'})"
                + (f" (vfwarpctl's own total {tim['total_s']:.2f} s)" if tim else ""))
    return {k: summary(v) for k, v in phases.items()}


def summary(runs):
    xs = [r["s"] for r in runs]
    med = sorted(runs, key=lambda r: r["s"])[len(runs) // 2]
    return {"samples_s": xs, "min_s": min(xs), "median_s": round(statistics.median(xs), 3),
            "median_run": med}


def kernel_part(h, reps):
    """The kernel's and the tools' own costs, without the manager."""
    numvfs = f"/sys/bus/pci/devices/{BDF}/sriov_numvfs"
    out = {k: [] for k in ("sriov_numvfs_0_to_128", "sriov_numvfs_128_to_0", "ip_link_show_128",
                           "ip_link_set_128_processes", "ip_link_set_128_one_batch",
                           "devlink_rate_show", "python3_start", "python3_import_yaml",
                           "libvirtd_cold_start_and_connect", "virsh_warm_connect")}
    h.sh("printf 'link set dev %s vf %%d max_tx_rate 0\\n' $(seq 0 127) > /tmp/b128" % PF)
    for _ in range(reps):
        h.sh(f"echo 0 > {numvfs}")
        out["sriov_numvfs_0_to_128"].append(h.seconds(f"echo 128 > {numvfs}"))
        out["ip_link_show_128"].append(h.seconds(f"ip -j -d link show dev {PF}"))
        out["ip_link_set_128_processes"].append(h.seconds(
            f"for i in $(seq 0 127); do ip link set dev {PF} vf $i max_tx_rate 0; done"))
        out["ip_link_set_128_one_batch"].append(h.seconds("ip -batch /tmp/b128"))
        out["devlink_rate_show"].append(h.seconds("devlink -j port function rate show"))
        out["python3_start"].append(h.seconds("python3 -c pass"))
        out["python3_import_yaml"].append(h.seconds("cd /opt/vfwarpctl && python3 -c 'import yaml'"))
        out["sriov_numvfs_128_to_0"].append(h.seconds(f"echo 0 > {numvfs}"))
        # what the first libvirt connection of a run costs with libvirtd
        # stopped (socket activation starts it) and running
        h.sh("systemctl stop libvirtd.service", timeout=300)
        out["libvirtd_cold_start_and_connect"].append(h.seconds("virsh -q -c qemu:///system version"))
        out["virsh_warm_connect"].append(h.seconds("virsh -q -c qemu:///system version"))
    return {k: {"samples_s": [round(x, 3) for x in v], "min_s": round(min(v), 3),
                "median_s": round(statistics.median(v), 3)} for k, v in out.items()}


def checkout(rev):
    """pf-driver/manager of git revision rev, in a temporary directory."""
    d = Path(tempfile.mkdtemp(prefix="vfw-base-"))
    arch = subprocess.run(["git", "-C", str(TOP), "archive", rev, "pf-driver/manager"],
                          check=True, capture_output=True).stdout
    with tarfile.open(fileobj=io.BytesIO(arch)) as t:
        t.extractall(d)
    return d / "pf-driver" / "manager", subprocess.run(
        ["git", "-C", str(TOP), "rev-parse", "--short", rev], check=True, capture_output=True,
        text=True).stdout.strip()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--baseline", metavar="REV", help="also run the manager of this git revision")
    ap.add_argument("--libvirtd", choices=("warm", "cold"), default="warm",
                    help="libvirtd running (default) or stopped before each timed run")
    ap.add_argument("--reuse", metavar="DIR", help="run on h1 of a lab already up "
                    "(`lab/labctl --state DIR up`), leave it up with vfwarp_pf unloaded")
    a = ap.parse_args()
    if not (guest_share_dir() / "modules" / "vfwarp_pf.ko").exists():
        sys.exit("run 'make modules' first")
    log = lambda m: print(m, flush=True)  # noqa: E731
    base = checkout(a.baseline) if a.baseline else None
    here = subprocess.run(["git", "-C", str(TOP), "describe", "--always", "--dirty"],
                          capture_output=True, text=True).stdout.strip()
    lab = Lab(Path(a.reuse or tempfile.mkdtemp(prefix="vfw-bench-")), image=Image.default())
    res = {}
    try:
        if not a.reuse:
            lab.up(1)
        h = Host(lab)
        # udev renames the PF's netdev (eth0 -> enp1s0) after insmod: the reset
        # names it, so it waits for the rename (a run of 2026-11-29 read eth0)
        h.sh(f"insmod {MOD} && udevadm settle --timeout=120")
        h.sh(QOS_RESET)
        h.put_tar(bundle(MANAGER), "/opt/vfwarpctl")
        if base:
            h.put_tar(bundle(base[0]), "/opt/vfwarpctl-base")
        h.put_tar(files_tar(policy_files()), "/root/pol-bench")
        h.put_tar(files_tar(EMPTY), "/root/pol-empty")
        r = h.sh("cd /opt/vfwarpctl && ./vfwarpctl validate --live /root/pol-bench")
        log(r.stdout.strip()[:200])
        res["kernel"] = kernel_part(h, a.reps)
        log(json.dumps({k: v["median_s"] for k, v in res["kernel"].items()}))
        res["manager"] = run_manager(h, "/opt/vfwarpctl", a.reps, log, libvirtd=a.libvirtd)
        if base:
            res["baseline"] = dict(run_manager(h, "/opt/vfwarpctl-base", a.reps, log, timings=False,
                                               libvirtd=a.libvirtd),
                                   revision=f"{a.baseline} ({base[1]})")
        to_nothing(h, "/opt/vfwarpctl")
        info = h.sh("uname -r; nproc; ip -V; devlink -V; python3 -V; virsh -v; "
                    "grep -h '^LIBVIRTD_ARGS' /etc/default/libvirtd || "
                    "systemctl show -p Environment libvirtd.service").stdout.split("\n")
    finally:
        if a.reuse:
            lab.ssh(HOST, f"rm -rf /run/vfwarp-bench; [ -d /sys/module/vfwarp_pf ] && {{ {QOS_RESET} }}; "
                          f"echo 0 > /sys/bus/pci/devices/{BDF}/sriov_numvfs; rmmod vfwarp_pf",
                    check=False, timeout=600)
        else:
            lab.down()
    m = res["manager"]
    out = {
        "figure": "vfwarpctl wall time on a lab host, 128 VFs / 32 tenants (inside the host, no ssh)",
        "unit": "s",
        "apply_from_nothing_s": m["apply_from_nothing"]["median_s"],
        "reapply_unchanged_s": m["reapply_unchanged"]["median_s"],
        "plan_s": m["plan"]["median_s"],
        "drift_s": m["drift"]["median_s"],
        "targets_s": TARGETS,
        "met": {k: m[k]["median_s"] <= v for k, v in TARGETS.items()},
        "results": res,
        "files": f"1 host file (legacy eswitch, {NUM_VFS} VFs, 10gbit line, 2 ETS classes, "
                 f"prio_tc, 2 DSCP entries) + {TENANTS} tenant files ({NUM_VFS // TENANTS} VFs "
                 "each by range: mac_base, vlan+priority, spoofchk, trust, vf_rate tx_max/tx_share/"
                 "tx_weight, rate node tx_max/tx_share/tx_weight, a per-VF override); no ACLs "
                 "(switchdev only); bench/policy_bench.py policy_files()",
        "from_nothing": "apply of a host file with num_vfs 0 (owned rate nodes removed), then "
                        "line rate and DCB reset to the device's defaults (tests/lab/lib/qos.py RESET)",
        "command": "python3 bench/policy_bench.py " + " ".join(sys.argv[1:]),
        "manager_revision": here,
        "setup": "1 lab host (TCG, 1 vCPU, 2 GiB), vfwarp_pf; vfwarpctl run as "
                 "`vfwarpctl CMD --json --timings DIR`, timed with bash $EPOCHREALTIME inside the host",
        "host": {"kernel": info[0], "vcpus": info[1], "iproute2": info[2], "devlink": info[3],
                 "python": info[4], "libvirt": info[5], "libvirtd_args": info[6]},
        "libvirtd": f"{a.libvirtd}: " + (
            "libvirtd running before each timed run (a `virsh version` just before, outside the "
            "figure)" if a.libvirtd == "warm" else
            "libvirtd stopped before each timed run: the run's first connection starts it"),
        "machine": machine(),
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    (TOP / "bench" / "results").mkdir(parents=True, exist_ok=True)
    (TOP / "bench" / "results" / "policy.json").write_text(json.dumps(out, indent=1) + "\n")
    print(json.dumps({k: out[k] for k in ("apply_from_nothing_s", "reapply_unchanged_s", "plan_s",
                                          "drift_s", "met")}, indent=1))


if __name__ == "__main__":
    main()
