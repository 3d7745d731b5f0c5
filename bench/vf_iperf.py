#!/usr/bin/env python3
"""Benchmark (not a test): iperf3 TCP between two lab hosts, VF to VF through
the emulated adapter (rings + embedded switch + lab wire), next to virtio-net
between the same two hosts on a second wire (the software-switched path the
VF bypasses). Both run in the same lab, one after the other, REPS times each
(alternating), so the ratio is measured under the same load.

    python3 bench/vf_iperf.py [--secs 5] [--reps 3]

Writes bench/results/vf-iperf.json. Needs `make qemu modules image`.
"""
import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

TOP = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TOP / "lab"))
sys.path.insert(0, str(TOP / "tests" / "lab"))
from vfwarp_lab import Image, Lab  # noqa: E402
from lib import vf as vt  # noqa: E402
from machine_info import machine  # noqa: E402

VIO_SETUP = r"""
set -eu
nd=$(grep -l '^52:54:00:01:00:' /sys/class/net/*/address | head -n1 | xargs dirname | xargs basename)
ip netns add vio
ip link set dev $nd netns vio
ip -n vio addr add 10.78.0.%(n)d/24 dev $nd
ip -n vio link set lo up
ip -n vio link set $nd up
echo $nd
"""


def iperf(lab, ns, dst, secs):
    lab.ssh("h2", f"ip netns exec {ns} setsid timeout {secs + 60} iperf3 -s -1 "
                  ">/tmp/iperf3-s.log 2>&1 < /dev/null &")
    time.sleep(1)
    r = lab.ssh("h1", f"ip netns exec {ns} timeout {secs + 60} iperf3 -c {dst} -t {secs} -O 1 -J",
                timeout=secs + 120)
    return json.loads(r.stdout)["end"]["sum_received"]["bits_per_second"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--secs", type=int, default=5)
    ap.add_argument("--reps", type=int, default=3)
    a = ap.parse_args()
    lab = Lab(Path(tempfile.mkdtemp(prefix="vfw-bench-")), image=Image.default())
    res = {"vf": [], "virtio": []}
    try:
        lab.up(2, virtio_wire=True)
        for h in vt.HOSTS:
            vt.setup_host(lab, h, n=1)
            lab.ssh(h, VIO_SETUP % {"n": int(h[1:])})
        for _ in range(a.reps):
            res["vf"].append(iperf(lab, "vf0", vt.addr("h2", 0), a.secs))
            res["virtio"].append(iperf(lab, "vio", "10.78.0.2", a.secs))
            print(f"vf {res['vf'][-1] / 1e6:.1f} Mbit/s, virtio-net {res['virtio'][-1] / 1e6:.1f} Mbit/s",
                  flush=True)
    finally:
        lab.down()
    vf, vio = statistics.median(res["vf"]), statistics.median(res["virtio"])
    out = {
        "figure": "iperf3 TCP goodput h1 -> h2, median",
        "unit": "Mbit/s",
        "vf_to_vf": round(vf / 1e6, 1),
        "virtio_net": round(vio / 1e6, 1),
        "ratio_vf_over_virtio": round(vf / vio, 3),
        "samples_mbps": {k: [round(x / 1e6, 1) for x in v] for k, v in res.items()},
        "command": "python3 bench/vf_iperf.py " + " ".join(sys.argv[1:]),
        "iperf3": f"iperf3 -c DST -t {a.secs} -O 1 -J (one stream), {a.reps} alternating runs each",
        "setup": "2 lab hosts (TCG, 1 vCPU, 2 GiB each); VF0 of each host in a netns; "
                 "virtio-net NICs on a second dgram wire in a netns",
        "machine": machine(),
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    (TOP / "bench" / "results").mkdir(parents=True, exist_ok=True)
    (TOP / "bench" / "results" / "vf-iperf.json").write_text(json.dumps(out, indent=1) + "\n")
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
