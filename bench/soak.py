#!/usr/bin/env python3
"""The soak of issue 33 (`make soak`): N VFs on h1 (128 by default), each
with Q QPs to h2, moving random bytes with SEND, WRITE and READ, every byte
checked (tools/verbs/vfw_soak.c), for SECS seconds, while faults are
injected at random from a seed: VF FLR, kill -9 of a mover, a VF's link
disabled, a rate rule added and removed, h1's uplink cut on the wire, h2's
QEMU paused. The design and the pass criteria: tests/lab/lib/soak.py.

    python3 bench/soak.py [--vfs 128] [--qps 3] [--secs 600] [--seed 1]
                          [--h2-vfs 8] [--fault-every 6] [--out FILE]

Boots a two-host lab of its own unless VFWARP_LAB_REUSE names one already up
(`lab/labctl --state DIR up -n 2`). Writes the JSON report (the command, the
parameters, the counts, every fault, QEMU's RSS, each check and its detail)
to bench/results/soak.json and exits 1 when a check fails.
"""
import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

TOP = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TOP / "lab"))
sys.path.insert(0, str(TOP / "tests" / "lab"))
sys.path.insert(0, str(TOP / "bench"))
from vfwarp_lab import Image, Lab  # noqa: E402
from lib.soak import FAULT_KINDS, Soak  # noqa: E402
from machine_info import machine  # noqa: E402


def write(report, out, t0):
    report["machine"] = machine()
    report["timing"]["total_s"] = round(time.monotonic() - t0, 1)
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    Path(out).write_text(json.dumps(report, indent=1) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--vfs", type=int, default=128)
    ap.add_argument("--qps", type=int, default=3)
    ap.add_argument("--secs", type=int, default=600)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--h2-vfs", type=int, default=8)
    ap.add_argument("--fault-every", type=float, default=6.0)
    ap.add_argument("--faults", default=",".join(FAULT_KINDS))
    ap.add_argument("--out", default=str(TOP / "bench" / "results" / "soak.json"))
    a = ap.parse_args()
    kinds = [k for k in a.faults.split(",") if k]
    assert set(kinds) <= set(FAULT_KINDS), f"fault kinds: {FAULT_KINDS}"
    command = "python3 bench/soak.py " + " ".join(sys.argv[1:])
    log = lambda m: print(m, flush=True)  # noqa: E731
    reuse = os.environ.get("VFWARP_LAB_REUSE")
    if reuse:
        lab = Lab(Path(reuse), image=Image.default())
    else:
        lab = Lab(Path(tempfile.mkdtemp(prefix="vfw-soak-")), image=Image.default())
        lab.up(2)
    t0 = time.monotonic()
    soak = Soak(lab, nvf=a.vfs, nqp=a.qps, secs=a.secs, h2_vfs=a.h2_vfs, seed=a.seed,
                kinds=kinds, fault_every=a.fault_every, log=log, command=command)
    report = None
    try:
        soak.setup()
        soak.start()
        soak.warmup()
        soak.run()
        soak.stop()
        report = soak.verdict()
        # written before the tear-down: 128 VFs take minutes to remove
        write(report, a.out, t0)
    finally:
        try:
            soak.cleanup()
        finally:
            if not reuse:
                lab.down()
    write(report, a.out, t0)
    for name, c in report["checks"].items():
        log(f"  {'PASS' if c['pass'] else 'FAIL'} {name}: {c['detail'][:300]}")
    cnt = report["counts"]
    log(f"soak: {cnt['bytes_moved'] / 2**20:.1f} MiB moved, {cnt['bytes_checked'] / 2**20:.1f} "
        f"MiB checked, {cnt['bytes_corrupt']} corrupt; faults {cnt['faults']}; "
        f"{'PASS' if report['pass'] else 'FAIL'}; report {a.out}")
    return 0 if report["pass"] else 1


if __name__ == "__main__":
    sys.exit(main())
