#!/usr/bin/env python3
"""Benchmark (not a test): the 8-byte round trip with the device model's
thread at the same priority as the vCPUs and above them (issue 14).

Under TCG the adapter's model runs in each QEMU's main thread (doorbell
bottom half, frames from the wire, timers), beside a vCPU thread that
spins while perftest busy-polls. On a 2-core machine two hosts make four
busy threads, so a wake-up of the device can wait a host scheduler slice
for a core: that is the suspected source of the millisecond tail that
pulls ib_write_lat's mean far above its median (docs/verbs-bench.md,
"The latency floor"). This bench tests it: in one lab it alternates the
nice value of both QEMUs' main threads (the thread id equal to the
process id; the vCPU threads stay at 0) and measures, for each setting,
ib_write_lat -R through the VFs and sockperf TCP ping-pong over
virtio-net (whose device runs in the same thread, so the baseline gets
the same help).

    python3 bench/device_priority.py [--reps 3] [--secs 10] [--nice 0,-10]

Writes bench/results/device-priority.json: every sample (mean, median,
min, max, 99th percentile), per setting the medians of those over the
repetitions and the ratio of RDMA to virtio-net TCP, the commands and the
machine. Settings alternate in order from one repetition to the next so a
drift of the machine's load does not favour one of them.
"""
import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import verbs_bench as vb  # noqa: E402
from machine_info import machine  # noqa: E402

OUT = vb.TOP / "bench" / "results" / "device-priority.json"


def set_device_nice(lab, nice):
    """Both QEMUs' main threads (where the device model runs) at `nice`;
    setpriority on a thread id changes that thread alone."""
    for spec in lab.hosts.values():
        os.setpriority(os.PRIO_PROCESS, spec.pid, nice)


def measure(lab, secs):
    rdma, _, rcmd = vb.perftest(lab, "ib_write_lat", "vf0", vb.VF["h2"], 8, secs, "-I 8")
    tcp, tcmd = vb.sockperf(lab, "vio", vb.VIO["h2"], secs)
    return {"rdma": rdma, "tcp": tcp}, {"rdma": rcmd, "tcp": tcmd}


def summary(samples):
    out = {}
    for path in ("rdma", "tcp"):
        keys = set.intersection(*(set(s[path]) for s in samples))
        out[path] = {k: round(statistics.median(s[path][k] for s in samples), 1)
                     for k in sorted(keys)}
    out["ratio_avg"] = round(out["rdma"]["avg"] / out["tcp"]["avg"], 3)
    out["ratio_median"] = round(out["rdma"]["typical"] / out["tcp"]["typical"], 3)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--secs", type=int, default=10,
                    help="ib_write_lat runs secs*200 round trips; sockperf runs secs seconds")
    ap.add_argument("--nice", default="0,-10",
                    help="nice values of the QEMU main threads to alternate")
    a = ap.parse_args()
    nices = [int(n) for n in a.nice.split(",")]
    if not 1 <= a.reps <= 20 or not 1 <= a.secs <= 60 or any(not -20 <= n <= 19 for n in nices):
        ap.error("--reps 1..20, --secs 1..60, nice values -20..19")
    lab = vb.Lab(Path(tempfile.mkdtemp(prefix="vfw-prio-bench-")), image=vb.Image.default())
    samples = {n: [] for n in nices}
    cmds = {}
    t0 = time.time()
    try:
        lab.up(2, virtio_wire=True)
        for h in vb.vt.HOSTS:
            vb.vt.setup_host(lab, h, n=1)
            lab.ssh(h, vb.VIO_SETUP % {"ip": vb.VIO[h]}, timeout=120)
        for rep in range(a.reps):
            order = nices if rep % 2 == 0 else nices[::-1]
            for n in order:
                set_device_nice(lab, n)
                fig, cmds = measure(lab, a.secs)
                samples[n].append(fig)
                print(f"[rep {rep + 1}/{a.reps}, {time.time() - t0:.0f}s] main thread nice {n:3d}: "
                      f"RDMA avg {fig['rdma']['avg']:7.1f} median {fig['rdma']['typical']:6.1f} "
                      f"p99 {fig['rdma'].get('p99', float('nan')):7.1f} usec; "
                      f"TCP avg {fig['tcp']['avg']:7.1f} median {fig['tcp']['typical']:6.1f}",
                      flush=True)
    finally:
        lab.down()
    res = {
        "what": "8-byte round trip (half, as perftest and sockperf report it) with both QEMU "
                "main threads (the device models) at each nice value, vCPU threads at 0",
        "command": "python3 bench/device_priority.py " + " ".join(sys.argv[1:]),
        "tools": cmds,
        "settings": {str(n): {"samples": samples[n], "median_of_reps": summary(samples[n])}
                     for n in nices},
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": machine(),
    }
    OUT.write_text(json.dumps(res, indent=1) + "\n")
    print(f"\n{'nice':>5} {'RDMA avg':>9} {'median':>7} {'p99':>8} {'TCP avg':>8} {'median':>7} "
          f"{'avg ratio':>9} {'median ratio':>12}")
    for n in nices:
        s = res["settings"][str(n)]["median_of_reps"]
        print(f"{n:5d} {s['rdma']['avg']:9.1f} {s['rdma']['typical']:7.1f} "
              f"{s['rdma'].get('p99', float('nan')):8.1f} {s['tcp']['avg']:8.1f} "
              f"{s['tcp']['typical']:7.1f} {s['ratio_avg']:9.3f} {s['ratio_median']:12.3f}")
    print(f"results: {OUT}")


if __name__ == "__main__":
    main()
