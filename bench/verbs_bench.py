#!/usr/bin/env python3
"""Benchmark (not a test): iWARP RDMA through the VFs next to the paths it
replaces, between the same two lab hosts in one run (issue 14):

  rdma_vf     ib_write_bw -R between VF0 of h1 and VF0 of h2 (the adapter's
              engine, kernel bypass; bytes move by the adapter's DMA)
  rdma_vf_ev  ib_send_bw -R -e through the same VFs: both sides sleep on
              completion events instead of busy-polling their CQs (what an
              application that wants its CPU back does; perftest has no -e
              for WRITE, whose target side has no completions to wait for)
  tcp_virtio  iperf3 over virtio-net on a second wire (the host vswitch path)
  tcp_vf      iperf3 over the VF netdevs (the guest's TCP over the adapter)
  siw_virtio  ib_write_bw -R over Linux siw on the virtio-net netdevs

per message size, unidirectional and bidirectional, with the hosts' CPU
busy share (sampled from /proc/stat on both hosts over a window inside each
run's steady transfer; each host has one vCPU) turned into CPU-seconds per
GB moved. Latency: 8-byte
ib_write_lat -R and ib_send_lat -R through the VFs next to sockperf
ping-pong (TCP) over virtio-net and over the VFs.

    python3 bench/verbs_bench.py [--secs 3] [--sizes 64,1024,...] [--quick] [--mtu 9000]
                                 [--device-opts line-rate=12000000] [--out NAME]

Writes bench/results/verbs.json (figures, units, the commands, the machine)
and bench/results/verbs.png; with --mtu other than 1500 (both paths: the VF
netdevs, whose MTU the RNIC follows, and the virtio-net NICs) verbs-mtuN.*.
Needs `make qemu modules provider siw`.
Under TCG every figure is far below silicon; the ratios measured in the same
run are the point.
"""
import argparse
import json
import os
import re
import sys
import tempfile
import time
from pathlib import Path

TOP = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TOP / "lab"))
sys.path.insert(0, str(TOP / "tests" / "lab"))
from vfwarp_lab import Image, Lab  # noqa: E402
from machine_info import machine  # noqa: E402
from lib import vf as vt  # noqa: E402

SIZES = [64, 256, 1024, 4096, 16384, 65536, 262144]
VIO = {"h1": "10.78.0.1", "h2": "10.78.0.2"}
VF = {"h1": vt.addr("h1", 0), "h2": vt.addr("h2", 0)}

VIO_SETUP = r"""
set -eu
nd=$(grep -l '^52:54:00:01:00:' /sys/class/net/*/address | head -n1 | xargs dirname | xargs basename)
ip netns add vio
ip link set dev $nd netns vio
ip -n vio addr add %(ip)s/24 dev $nd
ip -n vio link set lo up
ip -n vio link set $nd up
modprobe -a ib_uverbs libcrc32c
insmod /mnt/vfwarp/modules/siw.ko
rdma link add siw0 type siw netdev $nd 2>/dev/null || ip netns exec vio rdma link add siw0 type siw netdev $nd
for i in $(seq 50); do rdma link show siw0/1 | grep -q ACTIVE && break; sleep 0.2; done
rdma link show siw0/1
"""


CPU_LEAD_S = 3   # a run's set-up (ssh channel, connect, registration) before the window
CPU_TAIL_S = 1   # and its tear-down (results exchange, deregistration) after it

# Samples the first line of /proc/stat every 0.25 s with bash builtins only
# (no fork per sample: a fork+exec costs milliseconds of a TCG guest's one
# vCPU, which would show up as busy time in an events-mode run). The fifo
# is never written: `read -t` on it is a sleep without a process.
SAMPLER = r"""rm -f /tmp/cpusamp /tmp/cpusamp.stop /tmp/cpusamp.fifo; mkfifo /tmp/cpusamp.fifo
setsid bash -c 'exec 9<>/tmp/cpusamp.fifo; end=$((EPOCHSECONDS + %(max)d))
while [ $EPOCHSECONDS -lt $end ] && [ ! -e /tmp/cpusamp.stop ]; do
  read -r l </proc/stat; echo "$EPOCHREALTIME $l"; read -t 0.25 -u 9 _
done' >/tmp/cpusamp 2>/dev/null </dev/null &"""

STAMP = "date +%s.%N"


class ShortRun(RuntimeError):
    """The run's steady part was too short for a CPU window."""
    mbps = None


def cpu_sampler_start(lab, max_s):
    for h in vt.HOSTS:
        lab.ssh(h, SAMPLER % {"max": max_s})


def stamped(cmd, mark):
    """`cmd` with its start and end times (the host's clock) in /tmp/mark.t0
    and .t1, and its exit status kept."""
    return (f"{STAMP} >/tmp/{mark}.t0; {cmd}; rc=$?; {STAMP} >/tmp/{mark}.t1; exit $rc")


def busy_share(samples, t_from, t_to):
    """Busy share 0..1 between the first sample at or after t_from and the
    last at or before t_to; None if they are less than 1 s apart (the steady
    part of the run was too short to measure)."""
    inside = [(t, v) for t, v in samples if t_from <= t <= t_to]
    if len(inside) < 2 or inside[-1][0] - inside[0][0] < 1.0:
        return None, 0.0
    (ta, a), (tb, b) = inside[0], inside[-1]
    idle = (b[3] + b[4]) - (a[3] + a[4])
    total = sum(b) - sum(a)
    return (total - idle) / max(1, total), tb - ta


def read_samples(text):
    out = []
    for ln in text.splitlines():
        f = ln.split()
        if len(f) > 5 and f[1] == "cpu":
            out.append((float(f[0].replace(",", ".")), [int(x) for x in f[2:]]))
    return out


def cpu_windows(lab, srv_mark, cli_mark, srv_delay):
    """Busy share per host over the steady transfer: on h1 from CPU_LEAD_S
    after the client started to CPU_TAIL_S before it ended; on h2 the same
    span, located on h2's clock from the server's own start and end (the
    client was started `srv_delay` s after the server). Stops the samplers.
    Returns ({host: busy}, seconds measured on h1)."""
    deadline = time.monotonic() + 15      # the server ends just after the client
    while lab.ssh("h2", f"test -e /tmp/{srv_mark}.t1", check=False).returncode != 0:
        if time.monotonic() > deadline:
            raise RuntimeError("the server had not ended 15 s after the client")
        time.sleep(0.5)
    spans = {}
    t0, t1 = (float(x) for x in lab.ssh(
        "h1", f"cat /tmp/{cli_mark}.t0 /tmp/{cli_mark}.t1").stdout.split())
    spans["h1"] = (t0 + CPU_LEAD_S, t1 - CPU_TAIL_S)
    s0, s1 = (float(x) for x in lab.ssh(
        "h2", f"cat /tmp/{srv_mark}.t0 /tmp/{srv_mark}.t1").stdout.split())
    spans["h2"] = (s0 + srv_delay + CPU_LEAD_S, s1 - CPU_TAIL_S)
    busy, measured = {}, {}
    for h in vt.HOSTS:
        text = lab.ssh(h, "touch /tmp/cpusamp.stop; cat /tmp/cpusamp").stdout
        busy[h], measured[h] = busy_share(read_samples(text), *spans[h])
        if busy[h] is None:
            raise ShortRun(f"{h}: the steady transfer ({spans[h][1] - spans[h][0]:.1f} s "
                               f"after {CPU_LEAD_S} s of set-up) was too short for a CPU window")
    return busy, round(measured["h1"], 2)


def perftest(lab, tool, dev_ns, srv_ip, size, secs, extra="", iters=0):
    """Run perftest `tool` -R: server on h2, client on h1, in namespaces
    dev_ns; returns (MB/s or usec, cpu busy per host, client output).
    Bandwidth runs last CPU_LEAD_S + secs + a margin: by duration, or
    (perftest's events mode has no duration mode) by `iters` messages,
    which the caller sizes from a rate measured before; the CPU window is
    whatever steady part the run had."""
    log = f"/tmp/{tool}-srv.log"
    lab.ssh("h2", f"pkill -x {tool}; rm -f {log} /tmp/srv.t0 /tmp/srv.t1", check=False)
    bw = "_bw" in tool
    if bw:
        dur = f"-n {iters}" if iters else f"-D {secs + CPU_LEAD_S + CPU_TAIL_S + 1}"
    else:
        dur = f"-n {max(100, secs * 200)}"
    # by count, a run may take longer than the polled one it was sized from
    limit = secs + (60 if iters else 90)
    if bw:
        cpu_sampler_start(lab, limit + 30)
    cmd = f"{tool} -R -F -s {size} {dur} {extra}"
    t_srv = time.monotonic()
    lab.ssh("h2", "setsid sh -c '" + stamped(f"ip netns exec {dev_ns} timeout {limit} {cmd} "
                                             f">{log} 2>&1", "srv") + "' >/dev/null 2>&1 </dev/null &")
    time.sleep(2)
    srv_delay = time.monotonic() - t_srv
    r = lab.ssh("h1", stamped(f"ip netns exec {dev_ns} timeout {limit} {cmd} {srv_ip}", "cli"),
                check=False, timeout=limit + 60)
    if r.returncode != 0:
        raise RuntimeError(f"{cmd}: exit {r.returncode}\n{r.stdout[-2000:]}\n{r.stderr[-1000:]}\n"
                           + lab.ssh("h2", f"cat {log}", check=False).stdout[-2000:])
    line = [ln for ln in r.stdout.splitlines() if re.match(rf"^\s*{size}\s+\d+\s+[\d.]", ln)]
    if not line:
        raise RuntimeError(f"{cmd}: no result line\n{r.stdout[-2000:]}")
    cols = line[-1].split()
    # bw: #bytes #iterations BW_peak BW_average MsgRate; lat: #bytes #iter t_min t_max t_typical t_avg ...
    if not bw:
        # lat: t_typical is perftest's median, t_avg its mean (a tail of
        # host-scheduling stalls under TCG pulls the mean far above it)
        lat = {"avg": float(cols[5]), "typical": float(cols[4]), "min": float(cols[2]),
               "max": float(cols[3])}
        if len(cols) > 8:   # 99% and 99.9% percentiles
            lat.update(p99=float(cols[7]), p999=float(cols[8]))
        return lat, ({}, 0), cmd
    val = float(cols[3])
    if val <= 0:
        # perftest prints a result line even when nothing moved (siw seen so)
        raise RuntimeError(f"{cmd}: reported {val}\n{r.stdout[-1000:]}")
    try:
        cpu_fig = cpu_windows(lab, "srv", "cli", srv_delay)
    except ShortRun as e:
        e.mbps = val
        raise
    return val, cpu_fig, cmd


def iperf(lab, ns, dst, size, secs, bidir):
    lab.ssh("h2", "pkill -x iperf3; rm -f /tmp/srv.t0 /tmp/srv.t1", check=False)
    cpu_sampler_start(lab, secs + 120)
    t_srv = time.monotonic()
    lab.ssh("h2", "setsid sh -c '" + stamped(f"ip netns exec {ns} timeout {secs + 60} iperf3 -s -1 "
                                             ">/tmp/iperf3-s.log 2>&1", "srv")
            + "' >/dev/null 2>&1 </dev/null &")
    time.sleep(1)
    srv_delay = time.monotonic() - t_srv
    cmd = f"iperf3 -c {dst} -t {secs + CPU_LEAD_S + CPU_TAIL_S + 1} -l {size} -J" + \
        (" --bidir" if bidir else "")
    r = lab.ssh("h1", stamped(f"ip netns exec {ns} timeout {secs + 60} {cmd}", "cli"),
                timeout=secs + 120)
    busy = cpu_windows(lab, "srv", "cli", srv_delay)
    end = json.loads(r.stdout)["end"]
    bps = end["sum_received"]["bits_per_second"]
    if bidir:
        bps += end.get("sum_received_bidir_reverse", {}).get("bits_per_second", 0)
    return bps / 8e6, busy, cmd


def sockperf(lab, ns, dst, secs):
    lab.ssh("h2", f"pkill -x sockperf; ip netns exec {ns} setsid timeout {secs + 60} "
                  f"sockperf sr --tcp -i {dst} >/tmp/sockperf-s.log 2>&1 < /dev/null &", check=False)
    time.sleep(1)
    cmd = f"sockperf pp --tcp -i {dst} -m 14 -t {secs}"
    r = lab.ssh("h1", f"ip netns exec {ns} timeout {secs + 60} {cmd}", timeout=secs + 120)
    lab.ssh("h2", "pkill -x sockperf", check=False)
    m = re.search(r"avg-latency=([\d.]+)", r.stdout) or re.search(r"avg-lat=\s*([\d.]+)", r.stdout)
    med = re.search(r"percentile 50\.000 =\s*([\d.]+)", r.stdout)
    if not m or not med:
        raise RuntimeError(f"{cmd}: no latency\n{r.stdout[-2000:]}")
    lat = {"avg": float(m.group(1)), "typical": float(med.group(1))}
    p99 = re.search(r"percentile 99\.000 =\s*([\d.]+)", r.stdout)
    if p99:
        lat["p99"] = float(p99.group(1))
    return lat, cmd


EVENTS_MIN_ITERS = 1000
# Below this size the events runs are left out: perftest's sender on iWARP
# blocks on send credits, which come back as RDMA WRITEs and raise no
# completion; when its last signaled send has completed before the credit
# arrives it waits for an event forever (seen at 64 B: 681 of 2000 sent, all
# completed, the credit written, the sender in ibv_get_cq_event). Small
# messages outrun the receiver's credit writes; at >= 16 KiB they did not.
EVENTS_MIN_SIZE = 16384


def rdma_events(lab, size, bi, secs, polled_mbps):
    """ib_send_bw -e through the VFs. perftest has no duration mode with
    events, so the run goes by message count, sized from the polled run's
    rate to outlast the CPU window's lead, `secs` and its tail; if events
    mode ran faster (under TCG a busy-polling vCPU takes the core from the
    device model's thread, so it can) and the run was too short to measure,
    it runs again sized from its own rate.

    At least EVENTS_MIN_ITERS messages: below that perftest shrinks its
    send and receive depths to the count, and on iWARP (send credits come
    back as RDMA WRITEs, which raise no completion at the sender) a sender
    that blocks on credits with no signaled send outstanding waits for an
    event that never comes."""
    extra = "-e" + (" -b" if bi else "")
    want_s = 1.3 * (secs + CPU_LEAD_S + CPU_TAIL_S + 1)
    rate = polled_mbps or 50.0
    for attempt in (1, 2, 3):
        iters = max(EVENTS_MIN_ITERS, int(want_s * rate * 1e6 / size))
        try:
            return perftest(lab, "ib_send_bw", "vf0", VF["h2"], size, secs, extra, iters=iters)
        except ShortRun as e:
            if attempt == 3:
                raise
            rate = e.mbps
        except RuntimeError as e:
            # the credit wait above, rarer at these sizes: once more
            if attempt == 3 or "exit 124" not in str(e):
                raise
            print(f"    {size} B events run timed out (perftest credit wait?): again", flush=True)


def polled_rate(res, size, mode):
    return next((r["MBps"] for r in res["throughput"] if r["path"] == "rdma_vf"
                 and r["size"] == size and r["mode"] == mode and "MBps" in r), None)


def cpu_s_per_gb(mbps, busy):
    """Both hosts' CPU-seconds per GB moved (each host: one vCPU): busy
    shares over the window, at the run's rate (MB/s)."""
    return round(sum(busy.values()) * 1000.0 / mbps, 3) if mbps > 0 else None


def plot(res, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib missing: no plot (pip install matplotlib)")
        return
    fig, ax = plt.subplots(1, 2, figsize=(12, 4.5))
    for key, style in (("rdma_vf", "o-"), ("rdma_vf_ev", "x-"), ("tcp_virtio", "s--"),
                       ("tcp_vf", "^-."),
                       ("siw_virtio", "d:")):
        for mode, alpha in (("uni", 1.0), ("bi", 0.45)):
            pts = [(r["size"], r["MBps"], r["cpu_s_per_GB"]) for r in res["throughput"]
                   if r["path"] == key and r["mode"] == mode and "MBps" in r]
            if not pts:
                continue
            xs = [p[0] for p in pts]
            ax[0].plot(xs, [p[1] for p in pts], style, alpha=alpha, label=f"{key} {mode}")
            ax[1].plot(xs, [p[2] for p in pts], style, alpha=alpha, label=f"{key} {mode}")
    for a_, t, y in ((ax[0], "throughput h1 -> h2", "MB/s"),
                     (ax[1], "CPU per GB moved (both hosts)", "CPU-seconds / GB")):
        a_.set_xscale("log", base=2)
        a_.set_xlabel("message / write size (bytes)")
        a_.set_ylabel(y)
        a_.set_title(t)
        a_.grid(True, alpha=0.3)
    ax[1].set_yscale("log")
    ax[0].legend(fontsize=7)
    fig.suptitle("vfwarp lab (TCG): VF iWARP RDMA WRITE vs TCP over virtio-net, TCP over VF, siw")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    print(f"plot: {path}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--secs", type=int, default=3)
    ap.add_argument("--sizes", default=",".join(map(str, SIZES)))
    ap.add_argument("--quick", action="store_true", help="64 KiB only, unidirectional")
    ap.add_argument("--mtu", type=int, default=1500,
                    help="MTU of the VF netdevs (the RNIC follows) and of the virtio-net NICs")
    ap.add_argument("--device-opts", default="",
                    help="extra properties of the adapter (VFWARP_DEVICE_OPTS), "
                         "e.g. line-rate=12000000")
    ap.add_argument("--out", default="",
                    help="results name under bench/results (default verbs, verbs-mtuN)")
    a = ap.parse_args()
    if a.device_opts:
        os.environ["VFWARP_DEVICE_OPTS"] = a.device_opts
    sizes = [65536] if a.quick else [int(s) for s in a.sizes.split(",")]
    modes = ["uni"] if a.quick else ["uni", "bi"]
    lab = Lab(Path(tempfile.mkdtemp(prefix="vfw-verbs-bench-")), image=Image.default())
    res = {"throughput": [], "latency": []}
    t0 = time.time()
    try:
        lab.up(2, virtio_wire=True)
        for h in vt.HOSTS:
            vt.setup_host(lab, h, n=1)
            lab.ssh(h, VIO_SETUP % {"ip": VIO[h]}, timeout=120)
            # both paths at the same MTU: the RDMA engine follows the VF
            # netdev's, the virtio-net NIC (siw's too) gets the same
            lab.ssh(h, f"ip -n vf0 link set vfeth mtu {a.mtu}; "
                       f"for n in $(ip netns exec vio ls /sys/class/net); do "
                       f"[ $n = lo ] || ip -n vio link set $n mtu {a.mtu}; done")
        total = len(sizes) * len(modes) * 5
        n = 0
        for size in sizes:
            for mode in modes:
                bi = mode == "bi"
                runs = (
                    ("rdma_vf", lambda: perftest(lab, "ib_write_bw", "vf0", VF["h2"], size, a.secs,
                                                 "-b" if bi else "")),
                    ("rdma_vf_ev", lambda: rdma_events(lab, size, bi, a.secs,
                                                       polled_rate(res, size, mode))),
                    ("tcp_virtio", lambda: iperf(lab, "vio", VIO["h2"], size, a.secs, bi)),
                    ("tcp_vf", lambda: iperf(lab, "vf0", VF["h2"], size, a.secs, bi)),
                    ("siw_virtio", lambda: perftest(lab, "ib_write_bw", "vio", VIO["h2"], size,
                                                    a.secs, "-d siw0" + (" -b" if bi else ""))),
                )
                for key, fn in runs:
                    n += 1
                    if key == "rdma_vf_ev" and size < EVENTS_MIN_SIZE:
                        res["throughput"].append({"path": key, "mode": mode, "size": size,
                                                  "skipped": f"below {EVENTS_MIN_SIZE} B: "
                                                  "perftest -e waits forever for credits"})
                        continue
                    try:
                        mbps, (busy, win_s), cmd = fn()
                    except (RuntimeError, ValueError, KeyError) as e:
                        print(f"[{n}/{total}] {key} {mode} {size} B: FAILED: {str(e)[:300]}",
                              flush=True)
                        res["throughput"].append({"path": key, "mode": mode, "size": size,
                                                  "error": str(e)[:500]})
                        continue
                    rec = {"path": key, "mode": mode, "size": size, "MBps": round(mbps, 2),
                           "cpu_busy": {h: round(v, 3) for h, v in busy.items()},
                           "cpu_window_s": win_s, "cpu_s_per_GB": cpu_s_per_gb(mbps, busy),
                           "command": cmd}
                    res["throughput"].append(rec)
                    print(f"[{n}/{total}, {time.time() - t0:.0f}s] {key:10s} {mode} {size:7d} B: "
                          f"{mbps:8.2f} MB/s, CPU h1 {busy['h1']:.0%} h2 {busy['h2']:.0%}",
                          flush=True)
        # ping-pong: each side waits for one message, so events mode has no
        # credit wait here (ib_write_lat has no -e: it polls memory)
        for key, tool, extra in (("rdma_vf", "ib_write_lat", "-I 8"),
                                 ("rdma_vf", "ib_send_lat", "-I 8"),
                                 ("rdma_vf_ev", "ib_send_lat", "-I 8 -e")):
            try:
                us, _, cmd = perftest(lab, tool, "vf0", VF["h2"], 8, a.secs, extra)
                res["latency"].append({"path": key, "tool": tool, "usec_avg": us["avg"],
                                       "usec_median": us["typical"], "command": cmd})
                print(f"{tool} {extra} 8 B through the VFs: avg {us['avg']} median "
                      f"{us['typical']} usec", flush=True)
            except RuntimeError as e:
                res["latency"].append({"path": key, "tool": tool, "error": str(e)[:500]})
                print(f"{tool} {extra}: FAILED {str(e)[:300]}")
        for key, ns, dst in (("tcp_virtio", "vio", VIO["h2"]), ("tcp_vf", "vf0", VF["h2"])):
            try:
                us, cmd = sockperf(lab, ns, dst, a.secs)
                res["latency"].append({"path": key, "tool": "sockperf pp --tcp",
                                       "usec_avg": us["avg"], "usec_median": us["typical"],
                                       "command": cmd})
                print(f"sockperf TCP ping-pong {key}: avg {us['avg']} median {us['typical']} usec",
                      flush=True)
            except RuntimeError as e:
                res["latency"].append({"path": key, "tool": "sockperf", "error": str(e)[:500]})
                print(f"sockperf {key}: FAILED {str(e)[:300]}")
    finally:
        lab.down()

    def fig(path, mode, size):
        for r in res["throughput"]:
            if r["path"] == path and r["mode"] == mode and r["size"] == size and \
                    r.get("MBps", 0) > 0:
                return r
        return None

    ratios = {}
    for size in sizes:
        if size < 65536:
            continue
        rd, vio, siw = fig("rdma_vf", "uni", size), fig("tcp_virtio", "uni", size), \
            fig("siw_virtio", "uni", size)
        if rd and vio:
            ratios[f"rdma_over_virtio_tcp_{size}"] = round(rd["MBps"] / vio["MBps"], 2)
            if rd["cpu_s_per_GB"] and vio["cpu_s_per_GB"]:
                ratios[f"cpu_per_GB_rdma_over_virtio_tcp_{size}"] = \
                    round(rd["cpu_s_per_GB"] / vio["cpu_s_per_GB"], 3)
        ev = fig("rdma_vf_ev", "uni", size)
        if ev and vio and ev["cpu_s_per_GB"] and vio["cpu_s_per_GB"]:
            ratios[f"rdma_events_over_virtio_tcp_{size}"] = round(ev["MBps"] / vio["MBps"], 2)
            ratios[f"cpu_per_GB_rdma_events_over_virtio_tcp_{size}"] = \
                round(ev["cpu_s_per_GB"] / vio["cpu_s_per_GB"], 3)
        if rd and siw:
            ratios[f"rdma_over_siw_{size}"] = round(rd["MBps"] / siw["MBps"], 2)
            if rd["cpu_s_per_GB"] and siw["cpu_s_per_GB"]:
                ratios[f"cpu_per_GB_rdma_over_siw_{size}"] = \
                    round(rd["cpu_s_per_GB"] / siw["cpu_s_per_GB"], 3)
    # means and medians each against their own (both tools report half the
    # round trip)
    for stat in ("avg", "median"):
        lat = {r["tool"] + ":" + r["path"]: r.get(f"usec_{stat}") for r in res["latency"]}
        rr = lat.get("sockperf pp --tcp:tcp_virtio")
        for name, k in (("write_lat", "ib_write_lat:rdma_vf"), ("send_lat", "ib_send_lat:rdma_vf"),
                        ("send_lat_events", "ib_send_lat:rdma_vf_ev")):
            if lat.get(k) and rr:
                ratios[f"{name}_over_virtio_tcp_rr_{stat}"] = round(lat[k] / rr, 3)
    out = {
        "figure": "iWARP RDMA through VFs vs TCP over virtio-net, TCP over VFs, siw over virtio-net",
        "targets": "rdma >= 4x virtio TCP at >= 64 KiB; latency <= 1/5; >= 3x siw; CPU/GB <= 1/10",
        "ratios": ratios,
        "throughput": res["throughput"],
        "latency": res["latency"],
        "command": "python3 bench/verbs_bench.py " + " ".join(sys.argv[1:]),
        "setup": "2 lab hosts (TCG, 1 vCPU, 2 GiB each); VF0 of each host in netns vf0; "
                 "virtio-net NICs on a second dgram wire in netns vio (siw0 on them); "
                 f"MTU {a.mtu} on both paths; CPU busy sampled every 0.25 s, over each run "
                 f"from {CPU_LEAD_S} s after its start to {CPU_TAIL_S} s before its end "
                 f"(bandwidth runs last {a.secs + CPU_LEAD_S + CPU_TAIL_S + 1} s; events-mode "
                 "runs by message count); server on h2, client on h1; "
                 f"adapter properties: {a.device_opts or 'defaults'}",
        "machine": machine(),
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "wall_s": round(time.time() - t0),
    }
    rdir = TOP / "bench" / "results"
    rdir.mkdir(parents=True, exist_ok=True)
    name = a.out or ("verbs" if a.mtu == 1500 else f"verbs-mtu{a.mtu}")
    (rdir / f"{name}.json").write_text(json.dumps(out, indent=1) + "\n")
    plot(out, rdir / f"{name}.png")
    print(json.dumps({"ratios": ratios, "latency": res["latency"]}, indent=1))


if __name__ == "__main__":
    main()
