"""The soak of issue 33 (`make soak`: bench/soak.py; the short variant:
tests/lab/test_soak.py): N VFs on h1, each with a verified mover
(tools/verbs/vfw_soak.c) of Q QPs to a server on one of M VFs of h2, while
faults are injected at random from a seed; then the pass criteria and a JSON
report.

Design (why this shape): one mover process per VF namespace, each a single
event loop over its QPs that sleeps on completion and CM channels (128 of them
share h1's one TCG vCPU, so nothing busy-polls). h2 needs only enough VFs for
the connections (a VF's quota is 64 QPs, 128 connections): M servers, client i
talks to server i % M. A mover is started by a small supervisor shell loop on
h1 that restarts it when it ends early (killed, or its device went away at an
FLR: it exits 3), until the run's end. Each VF is the target of at most one
destructive fault (FLR or kill -9), so its connections before the fault are
exactly the ones of its first process: those must all be reported drained,
every outstanding WR completed (flushed), and its later processes must run
clean. Every other VF must see no QP error at all, through the transient faults
too (a VF's link disabled for a moment, a rate rule, the wire cut, the peer
paused: the adapter's TCP retransmits through each).

Faults (FAULT_KINDS):
  flr     echo 1 > /sys/bus/pci/devices/<VF>/reset on h1
  kill    kill -9 of the VF's mover on h1
  link    ip link set <PF> vf N state disable, LINK_SECS later state auto
  rule    ip link set <PF> vf N max_tx_rate 1 (1 Mbit/s: a meter rule in the
          adapter's switch, below what a mover sends), RULE_SECS later removed (max_tx_rate 0)
  uplink  h1's uplink cut on the wire: QEMU's `set_link uplink off` through the
          monitor (frames dropped both ways), UPLINK_SECS later on again
  pause   h2's QEMU stopped (`stop` on its monitor) for PAUSE_SECS, then `cont`
"""
import json
import random
import re
import socket
import time
from pathlib import Path

from .pf import MODS, PF_ID, VF_UNLOAD, no_vfwarp_modules, require_modules, vf_load
from .pf import VF_KOS
from .verbs import RES_KINDS
from .vf import MODULES_UP

TOOL = "/mnt/vfwarp/tools/vfw_soak"
PORT = 7480
DIR = "/tmp/soak"
FAULT_KINDS = ("flr", "kill", "link", "rule", "uplink", "pause")
DESTRUCTIVE = ("flr", "kill")
LINK_SECS = 2
RULE_SECS = 3
UPLINK_SECS = 2
PAUSE_SECS = 1
# QEMU's RSS may grow by this much over the run's last half. Why 16 MiB: the
# adapter allocates 576 KiB of buffers per connection (docs/security.md), so a
# leak of the connections of ten faulted 3-QP VFs is 17 MiB; the noise is the
# guest touching pages it had not touched before (page cache, slab), which
# stays well under it once the movers run (measured: see the report's
# rss figures).
RSS_TOLERANCE_KIB = 16 * 1024
# every connection up within this (384 took about 5 minutes on a loaded machine)
WARMUP_MAX = 900
SPLAT = re.compile(r"WARNING:|BUG:|Oops|Call Trace|general protection|list_del corruption")


def vf_addr(host, i):
    """VF i's address on `host`: 10.78.<host>.<i+1>/16 (128 VFs do not fit
    lib/vf.py's 10.77.0.0/24 plan)."""
    return f"10.78.{int(host[1:])}.{i + 1}"


SETUP = r"""
set -eu""" + MODULES_UP + r"""udevadm settle -t 600 || true
# the namespaces and the moves in one `ip -batch`, each namespace's own
# settings in one more: 6 processes per VF took 166 s for 32 + 8 VFs
B=/tmp/vfsetup.batch
: > $B; : > $B.names
for i in $(seq 0 $((%(n)d - 1))); do
  vf=$(basename $(readlink $D/virtfn$i))
  for t in $(seq 300); do [ -d /sys/bus/pci/devices/$vf/net ] && break; sleep 0.1; done
  nd=$(ls /sys/bus/pci/devices/$vf/net)
  echo "netns add vf$i" >> $B
  echo "link set dev $nd netns vf$i" >> $B
  echo "$i $nd" >> $B.names
done
ip -batch $B
while read i nd; do
  printf 'link set dev %%s name vfeth\naddr add 10.78.%(h)d.%%d/16 dev vfeth\nlink set lo up\nlink set vfeth up\n' \
    $nd $((i + 1)) | ip -n vf$i -batch -
done < $B.names
for i in $(seq 0 $((%(n)d - 1))); do
  for t in $(seq 100); do ip -n vf$i link show vfeth | grep -q LOWER_UP && break; sleep 0.1; done
  ip -n vf$i link show vfeth | grep -q LOWER_UP && echo "up vf$i $(basename $(readlink $D/virtfn$i))" || true
done
echo "pfnet $(ls $D/net)"
"""

CLEANUP = r"""
# the supervisors first (else they start the movers again), then the movers
[ -d %(dir)s ] && touch %(dir)s/stop
pkill -9 -f '[s]h %(dir)s/sup.sh' 2>/dev/null   # [s]: not this shell itself
for p in $(cat %(dir)s/*.pid 2>/dev/null); do kill -9 $p 2>/dev/null; done
pkill -9 -x vfw_soak 2>/dev/null
for ns in $(ip netns list | awk '$1 ~ /^vf[0-9]+$/ {print $1}'); do ip netns del $ns; done
%(vf_unload)s
PF=$(lspci -D -n -d %(pf)s | awk 'NR==1{print $1}')
[ -n "$PF" ] && [ -d /sys/module/vfwarp_pf ] && echo 0 > /sys/bus/pci/devices/$PF/sriov_numvfs
rmmod vfwarp_pf 2>/dev/null
true
""" % {"dir": DIR, "pf": PF_ID, "vf_unload": VF_UNLOAD}

# The supervisor of one VF's mover: started again when it ends before the
# run's end (killed, its device gone at an FLR), 1 s apart, 50 times at most.
# The run ends with the stop file and SIGTERM to the movers (Soak.stop: the
# run's time counts from when every connection is up, and 384 connections
# took minutes to come up under TCG); `end` only bounds it.
SUP = r"""#!/bin/sh
i=$1 end=$2 srv=$3 q=$4 seed=$5
[ -n "${6:-}" ] && export VFW_SOAK_CORRUPT=$6    # the checker's test only
log=%(dir)s/c$i.log n=0
while [ $n -lt 50 ] && [ ! -e %(dir)s/stop ]; do
  left=$(( end - $(date +%%s) ))
  [ $left -gt 3 ] || break
  n=$((n + 1))
  %(tool)s -c $srv -p %(port)d -i $i -q $q -t $left -S $seed >>$log 2>&1 &
  echo $! > %(dir)s/c$i.pid
  wait $!
  echo "{\"ev\":\"exit\",\"client\":$i,\"rc\":$?,\"ts\":$(date +%%s.%%N)}" >>$log
  sleep 1
done
rm -f %(dir)s/c$i.pid
echo "{\"ev\":\"sup_end\",\"client\":$i,\"runs\":$n}" >>$log
""" % {"dir": DIR, "tool": TOOL, "port": PORT}


class Monitor:
    """QEMU's human monitor of a lab host (its Unix socket in the state dir)."""

    def __init__(self, lab, host):
        self.path = str(lab.state / f"{host}.monitor")

    def cmd(self, line, timeout=30):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(timeout)
        try:
            s.connect(self.path)
            out = self._until_prompt(s)
            s.sendall(line.encode() + b"\n")
            out = self._until_prompt(s)
        finally:
            s.close()
        # the monitor echoes the line as typed, then QEMU's answer: a
        # command that did nothing says "Error: ..." (a netdev not found)
        assert "Error" not in out, f"{self.path}: {line}: {out[-300:]}"
        return out

    @staticmethod
    def _until_prompt(s):
        buf = b""
        while not buf.endswith(b"(qemu) "):
            chunk = s.recv(4096)
            if not chunk:
                break
            buf += chunk
        return buf.decode(errors="replace")


def rss_kib(pid):
    """VmRSS of a process of this machine (a lab host's QEMU)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def jlines(text):
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                out.append(json.loads(line))
            except ValueError:
                out.append({"ev": "garbled", "line": line[:200]})
    return out


class Soak:
    def __init__(self, lab, nvf=8, nqp=3, secs=90, h2_vfs=8, seed=1, kinds=FAULT_KINDS,
                 fault_every=8.0, log=print, command=""):
        self.lab, self.m, self.log = lab, h2_vfs, log
        self.nvf_setup = nvf
        self.timing = {}
        self.bdf = {}
        self.pfnet = ""
        self.new_run(nvf, nqp, secs, seed, kinds, fault_every, command)

    def new_run(self, nvf, nqp, secs, seed=1, kinds=FAULT_KINDS, fault_every=8.0, command="",
                corrupt=None):
        """Parameters of the next run on the VFs set up (nvf of them at most).
        corrupt: {vf: N}, VFW_SOAK_CORRUPT=N for that VF's mover (the
        checker's own test)."""
        assert nvf <= self.nvf_setup and nvf * nqp <= self.m * 64, \
            "more connections than h2's VFs' QP quotas"
        self.nvf, self.nqp, self.secs = nvf, nqp, secs
        self.seed, self.kinds, self.fault_every = seed, tuple(kinds), fault_every
        self.command = command
        self.corrupt = corrupt or {}
        self.rng = random.Random(seed)
        self.faults = []            # dicts: kind, vf, t (s since start), ts (h1's clock)
        self.rss = []               # (t, h1 KiB, h2 KiB)
        self.timing = {k: v for k, v in self.timing.items() if k == "setup_s"}

    # ---- set-up and tear-down ------------------------------------------------
    def setup(self):
        require_modules("vfwarp_pf.ko", *VF_KOS)
        t0 = time.monotonic()
        for host, n in (("h1", self.nvf_setup), ("h2", self.m)):
            self.lab.ssh(host, CLEANUP, check=False, timeout=600)
            # h1's VFs with one MSI-X vector each (vf_netdev.c): 128 VFs of
            # 5 vectors do not fit the vector space of its one CPU
            args = "msix_vectors=1" if host == "h1" else ""
            out = self.lab.ssh(host, SETUP % {"h": int(host[1:]), "pf": PF_ID, "mods": MODS,
                                              "n": n, "vf_load": vf_load(args)},
                               timeout=1800).stdout
            up = re.findall(r"^up vf(\d+) (\S+)$", out, re.M)
            assert len(up) == n, f"{host}: {len(up)} of {n} VF links up:\n{out[-2000:]}"
            if host == "h1":
                self.bdf = {int(i): b for i, b in up}
                self.pfnet = re.search(r"^pfnet (\S+)$", out, re.M).group(1)
        self.timing["setup_s"] = round(time.monotonic() - t0, 1)
        self.log(f"soak: {self.nvf} VFs on h1, {self.m} on h2 set up in "
                 f"{self.timing['setup_s']} s")

    def cleanup(self):
        for h in ("h1", "h2"):
            try:
                self.lab.ssh(h, CLEANUP, check=False, timeout=600)
            except Exception as e:     # noqa: BLE001 (teardown goes on)
                self.log(f"{h}: cleanup: {e}")
        for h in ("h1", "h2"):
            mods = self.lab.ssh(h, "lsmod", check=False).stdout
            assert no_vfwarp_modules(mods), mods

    # ---- the run ------------------------------------------------------------------
    def start(self):
        lab = self.lab
        for h in ("h1", "h2"):
            lab.ssh(h, f"rm -rf {DIR}; mkdir -p {DIR}")
        # servers outlive the clients, warm-up included (at secs + 600 the
        # 128-VF run's servers ended 10 s before its clients: 398 client
        # QP errors at its end); SIGTERM ends them (their summary)
        srv = "; ".join(
            f"ip netns exec vf{j} setsid {TOOL} -s {vf_addr('h2', j)} -p {PORT} "
            f"-t {self.secs + WARMUP_MAX + 900} -S {self.seed} >{DIR}/s{j}.log 2>&1 </dev/null & "
            f"echo $! > {DIR}/s{j}.pid" for j in range(self.m))
        lab.ssh("h2", srv)
        end = time.time() + 120
        while True:
            n = len(re.findall(rf"state LISTEN .* src-addr \S+:{PORT}\b",
                               lab.ssh("h2", "rdma res show cm_id").stdout))
            if n == self.m:
                break
            assert time.time() < end, "h2: servers not listening:\n" + lab.ssh(
                "h2", f"tail -n 3 {DIR}/s*.log", check=False).stdout
            time.sleep(1)
        lab.ssh("h1", f"cat > {DIR}/sup.sh <<'EOF'\n{SUP}EOF\nchmod +x {DIR}/sup.sh")
        # the movers at nice 19 (their supervisors, whose children inherit
        # it): 128 of them keep h1's one vCPU busy, and at nice 0 a command
        # of the soak's own (a fault, a count of connections) waited minutes
        # for its share (an ssh `cat | grep` took 3 min 54 s; after a renice
        # to 19, seconds)
        guest_now = float(lab.ssh("h1", "date +%s.%N").stdout)
        # a bound only: Soak.stop ends the movers secs after the warm-up
        self.guest_end = int(guest_now) + self.secs + WARMUP_MAX + 300
        starts = "\n".join(
            f"ip netns exec vf{i} setsid nice -n 19 sh {DIR}/sup.sh {i} {self.guest_end} "
            f"{vf_addr('h2', i % self.m)} {self.nqp} {self.seed} {self.corrupt.get(i, '')} "
            "</dev/null >/dev/null 2>&1 &" for i in range(self.nvf))
        lab.ssh("h1", starts, timeout=300)
        self.t0 = time.monotonic()
        self.guest_t0 = guest_now
        self.h1pid, self.h2pid = lab.host("h1").pid, lab.host("h2").pid

    def conns(self):
        """Connections the clients have established so far (their conn lines)."""
        out = self.lab.ssh("h1", f"cat {DIR}/c*.log 2>/dev/null | grep -c '\"ev\":\"conn\"'",
                           check=False).stdout.strip()
        return int(out or 0)

    def warmup(self, secs=None):
        """Until every QP of every VF has connected once (faults start then)."""
        want = self.nvf * self.nqp
        secs = secs or WARMUP_MAX
        end = time.monotonic() + secs
        while True:
            n = self.conns()
            if n >= want:
                break
            assert time.monotonic() < end, f"only {n} of {want} connections after {secs} s"
            self.sample_rss()
            time.sleep(2)
        self.timing["warmup_s"] = round(time.monotonic() - self.t0, 1)
        self.t_run = time.monotonic()
        self.log(f"soak: {want} connections up after {self.timing['warmup_s']} s")

    def sample_rss(self):
        self.rss.append((round(time.monotonic() - self.t0, 1), rss_kib(self.h1pid),
                         rss_kib(self.h2pid)))

    def progress(self):
        out = self.lab.ssh("h2", f"for f in {DIR}/s*.log; do grep '\"ev\":\"stats\"' $f | "
                                 "tail -n 1; done", check=False).stdout
        st = jlines(out)
        checked = sum(s.get("bytes_checked", 0) for s in st)
        bad = sum(s.get("bytes_corrupt", 0) for s in st)
        errs = sum(s.get("qp_errors", 0) for s in st)
        t, r1, r2 = self.rss[-1] if self.rss else (0, 0, 0)
        self.log(f"soak: {time.monotonic() - self.t0:5.0f} s  faults {len(self.faults):3d}  "
                 f"h2 checked {checked / 2**20:8.1f} MiB  corrupt {bad}  server QP errors "
                 f"{errs}  QEMU RSS h1 {r1 / 1024:.0f} MiB h2 {r2 / 1024:.0f} MiB")

    def inject(self, kind):
        lab, stamp = self.lab, "date +%s.%N"
        f = {"kind": kind, "t": round(time.monotonic() - self.t0, 1)}
        if kind in ("flr", "kill", "link", "rule"):
            hit = {x["vf"] for x in self.faults if "vf" in x}
            done = {x["vf"] for x in self.faults if x["kind"] in DESTRUCTIVE}
            # a destructive fault on a VF not hit before: its first process's
            # connections are then exactly the ones it must see flushed
            pool = [i for i in range(self.nvf) if i not in hit] if kind in DESTRUCTIVE \
                else [i for i in range(self.nvf) if i not in done]
            if not pool:
                return None
            vf = self.rng.choice(pool)
            f["vf"] = vf
            cmd = {
                "flr": f"{stamp}; echo 1 > /sys/bus/pci/devices/{self.bdf.get(vf)}/reset",
                "kill": f"{stamp}; kill -9 $(cat {DIR}/c{vf}.pid)",
                "link": f"{stamp}; ip link set {self.pfnet} vf {vf} state disable; "
                        f"sleep {LINK_SECS}; ip link set {self.pfnet} vf {vf} state auto",
                "rule": f"{stamp}; ip link set {self.pfnet} vf {vf} max_tx_rate 1; "
                        f"sleep {RULE_SECS}; ip link set {self.pfnet} vf {vf} max_tx_rate 0",
            }[kind]
            r = lab.ssh("h1", cmd, check=False, timeout=300)
            f["ts"] = float(r.stdout.split()[0]) if r.stdout.split() else None
            f["rc"] = r.returncode
            if r.returncode:
                f["error"] = (r.stderr or r.stdout).strip()[-300:]
        elif kind == "uplink":
            mon = Monitor(lab, "h1")
            mon.cmd("set_link uplink off")
            time.sleep(UPLINK_SECS)
            mon.cmd("set_link uplink on")
        elif kind == "pause":
            mon = Monitor(lab, "h2")
            mon.cmd("stop")
            time.sleep(PAUSE_SECS)
            mon.cmd("cont")
        self.faults.append(f)
        return f

    def run(self):
        """Faults at random until the clients' end (destructive ones stop
        DESTRUCTIVE_TAIL s before it, so the faulted VFs are seen moving again);
        QEMU's RSS sampled every few seconds."""
        end = self.t_run + self.secs
        tail = max(20.0, self.secs * 0.15)
        next_fault = time.monotonic() + self.rng.uniform(0.5, 1.5) * self.fault_every
        next_prog = time.monotonic() + 30
        kinds = list(self.kinds)
        # one of each kind first, in a random order, then at random
        order = self.rng.sample(kinds, len(kinds))
        while time.monotonic() < end - 5:
            now = time.monotonic()
            self.sample_rss()
            if now >= next_fault:
                kind = order.pop(0) if order else self.rng.choice(kinds)
                if kind in DESTRUCTIVE and now > end - tail:
                    kind = self.rng.choice([k for k in kinds if k not in DESTRUCTIVE] or [None])
                f = self.inject(kind) if kind else None
                if f:
                    self.log(f"soak: {f['t']:5.0f} s  fault {f['kind']}"
                             + (f" VF {f['vf']}" if "vf" in f else "")
                             + (f"  (failed: {f.get('error')})" if f.get("rc") else ""))
                next_fault = time.monotonic() + self.rng.uniform(0.5, 1.5) * self.fault_every
            if now >= next_prog:
                self.progress()
                next_prog = now + 30
            time.sleep(max(0.0, min(5.0, next_fault - time.monotonic(), end - time.monotonic())))

    def stop(self):
        """The run's end: the supervisors stop, the movers get SIGTERM (each
        QP finishes its op, says BYE, disconnects gracefully); then the
        servers get SIGTERM."""
        lab = self.lab
        lab.ssh("h1", f"touch {DIR}/stop; kill -TERM $(cat {DIR}/c*.pid) 2>/dev/null", check=False)
        end = time.monotonic() + 300
        while lab.ssh("h1", "pgrep -x vfw_soak >/dev/null || pgrep -f "
                            f"'[s]h {DIR}/sup.sh' >/dev/null", check=False).returncode == 0:
            self.sample_rss()
            # a mover a supervisor started just before the stop file
            lab.ssh("h1", f"kill -TERM $(cat {DIR}/c*.pid 2>/dev/null) 2>/dev/null", check=False)
            if time.monotonic() > end:
                self.log("soak: clients still running 300 s after the end: killed")
                lab.ssh("h1", "pkill -x vfw_soak", check=False)
                break
            time.sleep(2)
        self.timing["clients_end_s"] = round(time.monotonic() - self.t0, 1)
        lab.ssh("h2", f"kill $(cat {DIR}/s*.pid)", check=False)
        end = time.monotonic() + 60
        while lab.ssh("h2", "pgrep -x vfw_soak", check=False).returncode == 0 and \
                time.monotonic() < end:
            time.sleep(1)

    def res_left(self, host):
        """Objects of any RDMA device of `host` in `rdma res` (none expected)."""
        out = self.lab.ssh(host, "rdma res show", check=False).stdout
        left = {}
        for m in re.finditer(r"^\d+: (\S+): (.*)$", out, re.M):
            counts = {k: int(v) for k, v in re.findall(r"\b(\w+) (\d+)\b", m.group(2))
                      if k in RES_KINDS}
            if any(counts.values()):
                left[m.group(1)] = counts
        return left

    # ---- the verdict -----------------------------------------------------------
    def collect(self):
        logs = {}
        for h, pat in (("h1", "c"), ("h2", "s")):
            out = self.lab.ssh(h, f"for f in {DIR}/{pat}*.log; do echo \"== $f\"; cat $f; done",
                               check=False, timeout=300).stdout
            for part in out.split("== ")[1:]:
                name, _, body = part.partition("\n")
                logs[Path(name.strip()).stem] = jlines(body)
        return logs

    def verdict(self):
        lab = self.lab
        end = time.monotonic() + 60      # iw_cm tears connections down asynchronously
        while time.monotonic() < end and (self.res_left("h1") or self.res_left("h2")):
            time.sleep(2)
        res = {h: self.res_left(h) for h in ("h1", "h2")}
        splats = {}
        for h in ("h1", "h2"):
            bad = [ln for ln in lab.ssh(h, "dmesg", check=False).stdout.splitlines()
                   if SPLAT.search(ln)]
            if bad:
                splats[h] = bad[:20]
        alive = {r["host"]: r["running"] for r in lab.status()}
        logs = self.collect()
        return self.evaluate(logs, res, splats, alive)

    def evaluate(self, logs, res, splats, alive):
        """The pass criteria over the movers' JSON lines (also used on logs
        alone by the checker's own test)."""
        checks, counts = {}, {}
        clients = {i: logs.get(f"c{i}", []) for i in range(self.nvf)}
        servers = [ev for j in range(self.m) for ev in logs.get(f"s{j}", [])]

        def last_stats(evs):
            """Per process: its summary, else its last stats line."""
            per = {}
            for ev in evs:
                if ev.get("ev") in ("stats", "summary"):
                    per[ev["pid"]] = ev
            return list(per.values())

        keys = ("ops_send", "ops_write", "ops_read", "bytes_send", "bytes_write", "bytes_read",
                "bytes_checked", "bytes_corrupt", "ops_corrupt", "qp_errors", "wr_flushed",
                "not_flushed", "connects", "connect_failures", "reconnects", "stalls")
        for side, evs in (("client", [e for c in clients.values() for e in c]),
                          ("server", servers)):
            st = last_stats(evs)
            counts[side] = {k: sum(s.get(k, 0) for s in st) for k in keys}
        corrupt = [e for e in servers + [e for c in clients.values() for e in c]
                   if e.get("ev") == "corrupt"]
        counts["corrupt_events"] = len(corrupt)
        counts["bytes_moved"] = sum(counts["client"][k] for k in
                                    ("bytes_send", "bytes_write", "bytes_read"))
        counts["bytes_checked"] = counts["client"]["bytes_checked"] + \
            counts["server"]["bytes_checked"]
        counts["bytes_corrupt"] = counts["client"]["bytes_corrupt"] + \
            counts["server"]["bytes_corrupt"]
        # movers started again after they ended early (killed, FLR)
        counts["restarts"] = sum(max(0, sum(1 for e in c if e.get("ev") == "start") - 1)
                                 for c in clients.values())
        counts["faults"] = {k: sum(1 for f in self.faults if f["kind"] == k)
                            for k in FAULT_KINDS}
        checks["zero_corrupt"] = (counts["bytes_corrupt"] == 0 and not corrupt,
                                  f"{counts['bytes_corrupt']} bytes in {len(corrupt)} ops"
                                  + (f", first: {corrupt[0]}" if corrupt else ""))
        failed_inj = [f for f in self.faults if f.get("rc")]
        checks["faults_injected"] = (not failed_inj and len(self.faults) > 0,
                                     f"{len(self.faults)} faults, failed: {failed_inj[:3]}")

        # every qp_error on either side: drained, every WR completed
        errs = [e for e in servers + [e for c in clients.values() for e in c]
                if e.get("ev") == "qp_error"]
        unflushed = [e for e in errs if not e.get("all_completed")
                     or e.get("qp_state") not in (6, -1)]     # IBV_QPS_ERR, or device gone
        checks["errors_flushed"] = (not unflushed, f"{len(errs)} QP errors, "
                                    f"{len(unflushed)} not flushed to ERROR: {unflushed[:3]}")

        destructive = {f["vf"]: f for f in self.faults if f["kind"] in DESTRUCTIVE
                       and not f.get("rc")}
        faulted_bad, disturbed, idle = [], [], []
        for i, evs in clients.items():
            pids = [e["pid"] for e in evs if e.get("ev") == "start"]
            first = pids[0] if pids else None
            c_err = [e for e in evs if e.get("ev") == "qp_error"]
            s_err = [e for e in servers if e.get("ev") == "qp_error" and e.get("client") == i]
            stalls = [e for e in evs if e.get("ev") == "stall"]
            if i in destructive:
                kind = destructive[i]["kind"]
                want = set(range(self.nqp))
                s_first = {e["qp"] for e in s_err if e.get("cpid") == first and e.get("gen") == 0}
                c_first = {e["qp"] for e in c_err if e.get("pid") == first and e.get("gen") == 0}
                later = [e for e in s_err if e.get("cpid") != first] + \
                        [e for e in c_err if e.get("pid") != first]
                moved_after = [e for e in evs if e.get("ev") == "conn" and e.get("pid") != first] \
                    if kind == "kill" or kind == "flr" else []
                why = []
                if s_first != want:
                    why.append(f"server drained QPs {sorted(s_first)} of {sorted(want)}")
                if kind == "flr" and c_first != want:
                    why.append(f"client drained QPs {sorted(c_first)} of {sorted(want)}")
                if later or stalls:
                    why.append(f"errors after the fault's restart: {(later + stalls)[:2]}")
                if len({e["qp"] for e in moved_after}) < self.nqp:
                    why.append(f"reconnected QPs after the fault: "
                               f"{sorted({e['qp'] for e in moved_after})}")
                if why:
                    faulted_bad.append({"vf": i, "fault": kind, "why": why})
            elif c_err or s_err or stalls:
                disturbed.append({"vf": i, "client_errors": c_err[:2], "server_errors": s_err[:2],
                                  "stalls": stalls[:2]})
            ops = sum(e.get("ops_send", 0) + e.get("ops_write", 0) + e.get("ops_read", 0)
                      for e in last_stats(evs))
            if ops == 0:
                idle.append(i)
        unknown = [e for e in servers if e.get("ev") == "qp_error" and
                   e.get("client") not in clients]
        checks["faulted_vfs_flushed"] = (not faulted_bad,
                                         f"{len(destructive)} VFs faulted (FLR/kill); "
                                         f"not as expected: {faulted_bad[:3]}")
        checks["others_unaffected"] = (not disturbed and not unknown,
                                       f"{len(disturbed)} unfaulted VFs with QP errors or "
                                       f"stalls: {disturbed[:3]}; unattributed server "
                                       f"errors: {unknown[:2]}")
        checks["every_vf_moved"] = (not idle, f"VFs without a completed op: {idle[:10]}")
        checks["rdma_res_empty"] = (not res["h1"] and not res["h2"], f"left: {res}")
        checks["no_kernel_splat"] = (not splats, f"{splats}")
        checks["qemu_alive"] = (all(alive.get(h) for h in ("h1", "h2")), f"{alive}")

        rss = self.rss_verdict()
        checks["qemu_rss_flat"] = (rss["growth_kib"] is not None and
                                   rss["growth_kib"] <= RSS_TOLERANCE_KIB,
                                   f"h1 QEMU RSS growth over the last half "
                                   f"{rss['growth_kib']} KiB (tolerance {RSS_TOLERANCE_KIB})")
        report = {
            "command": self.command,
            "params": {"vfs": self.nvf, "qps_per_vf": self.nqp, "secs": self.secs,
                       "h2_vfs": self.m, "seed": self.seed, "fault_kinds": list(self.kinds),
                       "fault_every_s": self.fault_every},
            "timing": self.timing, "counts": counts, "faults": self.faults, "rss": rss,
            "checks": {k: {"pass": bool(v[0]), "detail": v[1]} for k, v in checks.items()},
            "pass": all(v[0] for v in checks.values()),
        }
        return report

    def rss_verdict(self):
        """h1's QEMU RSS over the last half of the run: its last sample less
        its first sample of that half (a leak only grows)."""
        if not self.rss:
            return {"growth_kib": None}
        run0 = round(getattr(self, "t_run", self.t0) - self.t0, 1)
        half = [s for s in self.rss if s[0] >= run0 + self.secs / 2]
        out = {"samples": len(self.rss), "h1_first_kib": self.rss[0][1],
               "h1_last_kib": self.rss[-1][1], "h2_first_kib": self.rss[0][2],
               "h2_last_kib": self.rss[-1][2], "growth_kib": None}
        if len(half) >= 2:
            h1 = [s[1] for s in half]
            h2 = [s[2] for s in half]
            out["growth_kib"] = h1[-1] - h1[0]
            out["h1_half_min_max_kib"] = [min(h1), max(h1)]
            out["h2_growth_kib"] = h2[-1] - h2[0]
            out["half_from_s"] = half[0][0]
        return out
