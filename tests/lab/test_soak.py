"""The short variant of issue 33's soak (`make soak` is the long one:
bench/soak.py, 128 VFs, 10 minutes): 8 VFs on h1 with 3 QPs each to h2's
8 VFs, every byte of SEND, WRITE and READ checked (tools/verbs/vfw_soak.c)
for 75 s while faults of every kind are injected at random from a seed (VF
FLR, kill -9 of a mover, a VF's link disabled, a rate rule added and
removed, h1's uplink cut on the wire, h2's QEMU paused); the pass criteria
are the soak's own (tests/lab/lib/soak.py): no corrupted byte, every QP of
a faulted VF drained with its WRs flushed and the VF moving again, the other
VFs without a QP error, `rdma res` empty on both hosts, no kernel splat,
QEMU alive and its RSS flat over the run's second half.

Then the checker itself, on the same VFs: a mover told to flip one byte
(VFW_SOAK_CORRUPT, read only by the mover) and a mover killed behind the
soak's back must fail exactly the checks that see them.
"""
import json

import pytest

from lib.soak import FAULT_KINDS, Soak


@pytest.fixture(scope="module")
def soak(lab2):
    s = Soak(lab2, nvf=8, nqp=3, secs=75, h2_vfs=8,
             log=lambda m: print(m, flush=True))
    try:
        s.setup()
        yield s
    finally:
        s.cleanup()


def run(s):
    s.start()
    s.warmup(secs=180)
    s.run()
    s.stop()
    return s.verdict()


def failed(report):
    return {k for k, c in report["checks"].items() if not c["pass"]}


def test_soak_short(soak):
    soak.new_run(nvf=8, nqp=3, secs=75, seed=33, kinds=FAULT_KINDS, fault_every=5.0,
                 command="tests/lab/test_soak.py::test_soak_short")
    report = run(soak)
    print("\n" + json.dumps({k: report[k] for k in ("counts", "rss", "timing")}))
    assert not failed(report), json.dumps(report["checks"], indent=1)
    # every kind of fault happened (the first six are one of each)
    assert all(report["counts"]["faults"][k] >= 1 for k in FAULT_KINDS), report["faults"]
    assert report["counts"]["bytes_checked"] > 0


def test_checker_sees_corruption_and_a_disturbed_vf(soak):
    """VF 0's mover flips one byte of its 20th SEND/WRITE payload; VF 1's
    mover is killed without the soak knowing it faulted VF 1. Exactly the
    corruption and the disturbance fail, each naming its VF."""
    soak.new_run(nvf=3, nqp=2, secs=30, seed=5, kinds=("pause",), fault_every=8.0,
                 command="tests/lab/test_soak.py::test_checker", corrupt={0: 20})
    soak.start()
    soak.warmup(secs=120)
    soak.lab.ssh("h1", "kill -9 $(cat /tmp/soak/c1.pid)")
    soak.run()
    soak.stop()
    report = soak.verdict()
    assert failed(report) == {"zero_corrupt", "others_unaffected"}, \
        json.dumps(report["checks"], indent=1)
    assert report["counts"]["bytes_corrupt"] == 1, report["counts"]
    assert '"client": 0' in json.dumps(report["checks"]["zero_corrupt"]["detail"]) or \
        "'client': 0" in report["checks"]["zero_corrupt"]["detail"], report["checks"]
    assert "'vf': 1" in report["checks"]["others_unaffected"]["detail"], report["checks"]
