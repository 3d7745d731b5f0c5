"""QoS under congestion of the uplink (issue 17, docs/qos.md): h1's uplink
gets a line rate of 12 Mbit/s (devlink param line_rate_kbps), VF 0 and VF 1
of h1 send to h2 at once with iperf3 (each could send 20-30 Mbit/s alone),
and what each gets shows the device's scheduler as set through devlink
rate, `ip link` and dcb: weights, tenant nodes, a tx_max, a tx_share, ETS
classes, a strict class's latency, and an RDMA flow's tx_max.

The hosts' VFs are set up once for the module (lib.vf.vfs_up) and every
test starts and ends with the device's QoS defaults (lib.congestion.Uplink
.reset: the device keeps them across driver loads, and no other lab test
may run behind a line rate of ours). Figures of each run are printed.
A broken set-up (the line not full, pings not in their class) is
pytest.fail, not an assertion of what is measured.
"""
import re
import statistics
import time

import pytest

from lib.congestion import (CLIENT, LINE_MBIT, PER_FRAME, PER_WIRE, Uplink, delta, flows,
                             ping_rtts, received, servers)
from lib.perftest import PERF_PORT, perftest_runs
from lib.qos import ssh
from lib.vf import addr, vfs_up
from lib.wait import wait_rdma_listener


@pytest.fixture(scope="module")
def uplink(lab2):
    with vfs_up(lab2):
        up = Uplink(lab2)
        up.reset()
        try:
            yield up
        finally:
            up.reset()


@pytest.fixture
def congested(uplink):
    """h1's uplink at the line rate, the rest of the QoS state at the
    defaults; back to the defaults afterwards, also on failure."""
    uplink.reset()
    uplink.line()
    try:
        yield uplink
    finally:
        uplink.reset()


def short_of_line(got):
    """The flows together sent less than 90% of the line rate less headers."""
    return sum(got) < LINE_MBIT * PER_WIRE * 0.9


def line_full(got):
    """The flows together fill the line rate (less headers: 11.3 of 12
    Mbit/s), so the uplink was congested while they were measured. A
    failure here is pytest.fail, not an AssertionError: a set-up that did
    not congest the line is no measurement of the scheduler."""
    if short_of_line(got) or sum(got) > LINE_MBIT * 1.02:
        pytest.fail(f"the line was not full: {got}")


def full_flows(lab, extra=("", "")):
    """lib.congestion.flows, measured once more when the two flows did not fill
    the line: on a machine whose two cores also run the other lab session
    (`make test`), a CPU-starved host may not offer the line its rate (seen:
    8.77 of 11.3 Mbit/s while that session booted its nested guests). A
    second miss is left to line_full (pytest.fail)."""
    got = flows(lab, extra)
    if short_of_line(got):
        print(f"\nthe line was not full ({got[0]:.2f} + {got[1]:.2f} Mbit/s): measured again")
        got = flows(lab, extra)
    return got


def within(got, want, tol=0.1):
    return want * (1 - tol) <= got <= want * (1 + tol)


def shared_flows(lab, want, extra=("", "")):
    """full_flows for a share of the line, measured once more when VF 0's
    and VF 1's ratio misses `want` by over 10%. The scheduler is work
    conserving: when a host starved of CPU lets the heavier flow's queue
    run empty for a moment, the other flow takes the slot, and the ratio
    falls with no fault of the weights (CI, 2026-11-29: 3:1 came out 2.68
    with the line full, 8.21 + 3.06 Mbit/s, while the other lab session
    booted its hosts; quiet runs give 2.90-3.02). Weights that are wrong
    miss both times; both figures are printed."""
    got = full_flows(lab, extra)
    if not within(got[0] / got[1], want):
        print(f"\nratio {got[0] / got[1]:.2f} ({got[0]:.2f} / {got[1]:.2f} Mbit/s), "
              f"want {want:.2f}: measured again")
        got = full_flows(lab, extra)
    return got


WEIGHTS = (3, 1)
# Classes 1 and 2 get 63% and 27% (70:30), the others small shares. With
# the others at 0% the ratio came out 1.85-2.12 in three runs (want 2.33):
# see docs/status.md, issue 17 (before the class_clock fix in
# vswitch/src/qos_sched.c that setting gave class 1 nearly everything).
ETS_BW = "0:4 1:63 2:27 3:2 4:1 5:1 6:1 7:1"
ETS = (63, 27)
DSCP = (10, 18)     # VF 0's flow -> priority/class 1, VF 1's -> 2


def test_shares_of_a_congested_uplink(congested):
    """With tx_weight 3 and 1 the two VFs get 3:1; then with equal weights
    but their flows in two ETS classes of 63% and 27% (dcb ets, DSCP ->
    priority by the dcb app table, trust dscp), they get 63:27 = 70:30.

    Measured for the weights (5 runs): 8.39/2.87 ... 8.51/2.82 Mbit/s,
    ratios 2.90-3.02, sum 11.2-11.3 Mbit/s = the line rate minus headers.
    ETS 63:27 measured 2.31-2.40. With the other classes at 0% instead
    (tc-bw 0:0 1:70 2:30 ...): ratio 1.85-2.12, not yet explained, so not
    asserted here (docs/status.md)."""
    up, d, n = congested, congested.dl, congested.dev
    up.sh(f"devlink port function rate set {d}/1 tx_weight {WEIGHTS[0]}; "
          f"devlink port function rate set {d}/2 tx_weight {WEIGHTS[1]}")
    weighted = shared_flows(up.lab, WEIGHTS[0] / WEIGHTS[1])
    up.sh(f"devlink port function rate set {d}/1 tx_weight 0; "
          f"devlink port function rate set {d}/2 tx_weight 0; "
          f"dcb ets set dev {n} tc-tsa all:ets tc-bw {ETS_BW} prio-tc all:0 1:1 2:2; "
          f"dcb app add dev {n} dscp-prio {DSCP[0]}:1 {DSCP[1]}:2; "
          f"dcb apptrust set dev {n} order dscp")
    classes = shared_flows(up.lab, ETS[0] / ETS[1], tuple(f"-S {x << 2}" for x in DSCP))
    for what, got, want in (("weights", weighted, WEIGHTS), ("ets", classes, ETS)):
        print(f"\nline rate {LINE_MBIT} Mbit/s, {what} {want}: VF0 {got[0]:.2f}, "
              f"VF1 {got[1]:.2f} Mbit/s, ratio {got[0] / got[1]:.2f}, sum {sum(got):.2f}")
    for got, want in ((weighted, WEIGHTS), (classes, ETS)):
        assert within(got[0] / got[1], want[0] / want[1]), got
        line_full(got)


def test_tx_max_holds_while_another_vf_saturates(congested):
    """VF 0 capped at 4 Mbit/s by its devlink leaf's tx_max, then VF 1 at 3
    Mbit/s by `ip link ... max_tx_rate` (the same leaf): each capped VF gets
    its cap (of frames: 1448 bytes of TCP payload in 1514) within 10%, the
    other VF the rest of the line."""
    up, d = congested, congested.dl
    up.sh(f"devlink port function rate set {d}/1 tx_max 4mbit")
    by_devlink = full_flows(up.lab)
    up.sh(f"devlink port function rate set {d}/1 tx_max 0; "
          f"ip link set {up.dev} vf 1 max_tx_rate 3")
    by_ip_link = full_flows(up.lab)
    for what, got, vf, cap in (("devlink tx_max 4mbit on VF0", by_devlink, 0, 4),
                               ("ip link max_tx_rate 3 on VF1", by_ip_link, 1, 3)):
        print(f"\nline rate {LINE_MBIT} Mbit/s, {what}: VF0 {got[0]:.2f}, VF1 {got[1]:.2f} "
              f"Mbit/s (cap as TCP payload {cap * PER_FRAME:.2f}), sum {sum(got):.2f}")
    line_full(by_devlink)
    line_full(by_ip_link)
    assert within(by_devlink[0], 4 * PER_FRAME), by_devlink
    assert within(by_ip_link[1], 3 * PER_FRAME), by_ip_link


def test_tenant_nodes_share_3_to_1(congested):
    """Two tenants' rate nodes with tx_weight 3 and 1, VF 0 under the
    first, VF 1 under the second, the leaves' own weights the other way
    round (1 and 3): the nodes' weights decide, 3:1 within 10%."""
    up, d = congested, congested.dl
    up.sh(f"devlink port function rate add {d}/tenant1 tx_weight 3; "
          f"devlink port function rate add {d}/tenant2 tx_weight 1; "
          f"devlink port function rate set {d}/1 tx_weight 1 parent tenant1; "
          f"devlink port function rate set {d}/2 tx_weight 3 parent tenant2")
    got = shared_flows(up.lab, 3)
    print(f"\nline rate {LINE_MBIT} Mbit/s, tenant nodes 3:1 (leaves 1:3): VF0 {got[0]:.2f}, "
          f"VF1 {got[1]:.2f} Mbit/s, ratio {got[0] / got[1]:.2f}, sum {sum(got):.2f}")
    assert within(got[0] / got[1], 3), got
    line_full(got)


def test_tx_share_guarantee_while_another_vf_saturates(congested):
    """VF 0 with tx_share 7 Mbit/s and tx_weight 1, VF 1 with tx_weight 1000
    (by weight alone VF 0 would get 12/1001 of the line: 0.0 Mbit/s
    measured): VF 0 gets its guarantee (of frames) within 10%."""
    up, d = congested, congested.dl
    up.sh(f"devlink port function rate set {d}/1 tx_share 7mbit tx_weight 1; "
          f"devlink port function rate set {d}/2 tx_weight 1000")
    got = full_flows(up.lab)
    print(f"\nline rate {LINE_MBIT} Mbit/s, VF0 tx_share 7mbit weight 1, VF1 weight 1000: "
          f"VF0 {got[0]:.2f} (guarantee as TCP payload {7 * PER_FRAME:.2f}), "
          f"VF1 {got[1]:.2f} Mbit/s, sum {sum(got):.2f}")
    assert within(got[0], 7 * PER_FRAME), got
    line_full(got)


EF = 46             # DSCP of the ping, mapped to priority 7 = strict class 7
PINGS = 30


def rtt_summary(r):
    return (f"min {min(r):.2f} median {statistics.median(r):.2f} avg {statistics.mean(r):.2f} "
            f"max {max(r):.2f} ms")


def strict_class_7(up):
    """Class 7 strict, the others ETS (dcb ets); DSCP EF -> priority 7 (dcb
    app, trust dscp)."""
    n = up.dev
    up.sh(f"dcb ets set dev {n} tc-tsa 0:ets 1:ets 2:ets 3:ets 4:ets 5:ets 6:ets 7:strict "
          "tc-bw 0:50 1:10 2:10 3:10 4:10 5:5 6:5 7:0; "
          f"dcb app add dev {n} dscp-prio {EF}:7; dcb apptrust set dev {n} order dscp")


def strict_latency(up, bulk_vfs):
    """With strict_class_7: EF pings from h1 VF 0 idle, then while iperf3 from
    h1's VFs `bulk_vfs` (class 0) fills the line, then best-effort pings
    (class 0) for comparison. Checks that the bulk filled the line and the
    loaded EF pings went out in class 7 (the device's class counters);
    returns the idle and loaded EF round trips (ms)."""
    strict_class_7(up)
    idle = ping_rtts(up.lab, PINGS, tos=EF << 2)
    servers(up.lab, bulk_vfs)
    c0 = up.counters()
    ssh(up.lab, "setsid sh -c '" + " & ".join(
        CLIENT.format(vf=vf, dst=addr("h2", vf), t=14, x="") for vf in bulk_vfs)
        + "; wait' </dev/null >/dev/null 2>&1 &")
    try:
        time.sleep(3)       # iperf3's -O 2 and a second more: the line is full
        loaded = ping_rtts(up.lab, PINGS, tos=EF << 2)
        best_effort = ping_rtts(up.lab, 10, tos=0)
    finally:
        ssh(up.lab, "for i in $(seq 60); do pgrep -x iperf3 >/dev/null || exit 0; sleep 0.5; "
                    "done; pkill -x iperf3", check=False)
    c = delta(c0, up.counters())["tc"]
    bulk = [received(up.lab, vf) for vf in bulk_vfs]
    print(f"\nline rate {LINE_MBIT} Mbit/s, EF ping from VF0 (strict class 7) idle: "
          f"{rtt_summary(idle)}\n  while iperf3 from VF{'+VF'.join(map(str, bulk_vfs))} in "
          f"class 0 gets {'+'.join(f'{b:.2f}' for b in bulk)} Mbit/s: {rtt_summary(loaded)}"
          f"\n  best-effort ping (class 0) then: {rtt_summary(best_effort)}"
          f"\n  frames sent per class: "
          + ", ".join(f"{t}: {v['sent_pkts']}" for t, v in c.items() if v["sent_pkts"]))
    line_full(bulk)
    if c[7]["sent_pkts"] != PINGS:
        pytest.fail(f"the EF pings were not in class 7: {c}")
    return idle, loaded


def measured_twice(up, measure, held, describe):
    """measure() (up's QoS set up by it), and once more from the defaults and the
    line rate when its figures miss held(*figures) or its set-up misses
    (pytest.fail: the line not full, a flow not in its class). Returns the last
    figures, for the caller's assertions; a second set-up miss fails the test.

    Why a second measurement: these are latencies of a TCG host whose one vCPU
    also runs the bulk, and in `make test` the other lab session's hosts share
    the machine's two cores. The CI run of 2026-11-28 measured an EF ping at
    5.18 ms beside bulk against 2.47 idle (quiet: 1.7 against 1.7), and a
    CPU-starved host's bulk RDMA at 10.48 of 10.8 Mbit/s. What the tests guard
    against misses both: with strict priority lost the EF median was 64-79 ms
    against 1.8 idle, and strict sent as ETS 0% loses every EF ping."""
    for attempt in (1, 2):
        if attempt == 2:
            up.reset()
            up.line()
        try:
            got = measure()
        except pytest.fail.Exception as e:
            if attempt == 2:
                raise
            print(f"attempt 1: {e}")
            continue
        if held(*got):
            break
        print(f"attempt {attempt}: {describe(*got)}")
    return got


def strict_held_within_2x(up, bulk_vfs):
    """The loaded EF median within 2x of the idle one (measured_twice)."""
    med = statistics.median
    idle, loaded = measured_twice(
        up, lambda: strict_latency(up, bulk_vfs), lambda i, x: med(x) <= 2 * med(i),
        lambda i, x: f"EF median {med(x):.2f} ms loaded, {med(i):.2f} ms idle")
    assert med(loaded) <= 2 * med(idle), (idle, loaded)


def test_strict_class_latency_while_another_vf_saturates(congested):
    """The median round trip of EF pings (strict class 7) from VF 0 stays
    within 2x of the idle figure while VF 1's iperf3 fills the line."""
    strict_held_within_2x(congested, (1,))


def test_strict_class_latency_with_bulk_of_the_same_vf(congested):
    """The same with iperf3 from VF 0 itself and VF 1 filling the line: the
    VF driver puts the EF pings on its TX ring of their class (hw 2.5, a TX
    ring per class) and the device holds only the bulk's ring while the
    VF's part of class 0 is full. (With one TX ring per VF the ring stopped
    as a whole and the pings waited for the bulk to drain to half: median
    64-79 ms against 1.7-1.9 idle; this test was a strict xfail then.)"""
    strict_held_within_2x(congested, (0, 1))


# The RDMA engine's frames carry 1440 bytes of payload in a 1514-byte
# frame: TCP MSS 1460 (no timestamps), less MPA header 2, DDP/RDMAP tagged
# header 14 and CRC 4 (adapter/src/tcp/tcp_output.c, iwarp/mpa.c).
RDMA_PER_FRAME = 1440 / 1514


def rdma_server(lab, vf, cmd, port):
    """perftest `cmd` as the server on h2's VF `vf`, on `port`; returns when
    its rdma_cm listener is up (a client started before would be refused)."""
    log = f"/tmp/perftest-srv-{port}.log"
    listening = rf"state LISTEN .* src-addr \S+:{port}\b"
    # a server of an earlier run on this port may still be ending: its
    # listener would pass the check below and hold the port (EADDRINUSE)
    tool = next(w for w in cmd.split() if w.startswith("ib_"))
    ssh(lab, f"pkill -x {tool}", host="h2", check=False)
    end = time.time() + 15
    while re.search(listening, ssh(lab, "rdma res show cm_id", host="h2", check=False).stdout):
        if time.time() > end:
            pytest.fail(f"port {port} still listened on")
        time.sleep(0.3)
    ssh(lab, f"rm -f {log}; ip netns exec vf{vf} setsid timeout 120 {cmd} -p {port} "
             f">{log} 2>&1 </dev/null &", host="h2", check=False)
    wait_rdma_listener(lambda c: ssh(lab, c, host="h2", check=False), port, f"cat {log}",
                       what=f"h2 vf{vf}: {tool}")


def test_rdma_write_held_by_tx_max(congested):
    """ib_write_bw -R (rdma_cm) from h1 VF 0 to h2 VF 0 with VF 0's tx_max 4
    Mbit/s while iperf3 from VF 1 fills the rest of the line: the RDMA flow
    gets its cap (of frames) within 10%. The VF's drops by the device's
    meter are printed. (Before the device held the engine's frames over the
    cap in a queue for the shaper, it dropped them and the flow got 15-45%
    of its cap: this test was a strict xfail then.)"""
    up, d = congested, congested.dl
    lab = up.lab
    up.sh(f"devlink port function rate set {d}/1 tx_max 4mbit")

    def run():
        rdma_server(lab, 0, "ib_write_bw -R -F -D 10", PERF_PORT)
        servers(lab, (1,))
        c0 = up.counters()
        ssh(lab, CLIENT.format(vf=1, dst=addr("h2", 1), t=16, x="") + " </dev/null 2>/dev/null &")
        try:
            r = ssh(lab, f"ip netns exec vf0 timeout 120 ib_write_bw -R -F -D 10 {addr('h2', 0)}",
                    check=False)
        finally:
            ssh(lab, "for i in $(seq 60); do pgrep -x iperf3 >/dev/null || exit 0; sleep 0.5; "
                     "done; pkill -x iperf3", check=False)
            ssh(lab, "pkill -x ib_write_bw", host="h2", check=False)
        return (r, c0), r.stderr
    r, c0 = perftest_runs(run, "ib_write_bw -D 10 beside iperf3")
    c = delta(c0, up.counters())["vf"][0]
    m = re.search(r"^\s*65536\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s*$", r.stdout, re.M)
    if r.returncode or not m:
        pytest.fail(r.stdout + r.stderr)
    mbit = float(m.group(3)) * 2 ** 20 * 8 / 1e6      # perftest's MiB/s
    bulk = received(lab, 1)
    print(f"\nline rate {LINE_MBIT} Mbit/s, VF0 tx_max 4mbit: ib_write_bw -R VF0 {mbit:.2f} "
          f"Mbit/s (cap as RDMA payload {4 * RDMA_PER_FRAME:.2f}), iperf3 VF1 {bulk:.2f}; "
          f"VF0 frames sent {c['hw_tx_packets']}, dropped by the meter {c['hw_tx_drop_meter']}")
    assert within(mbit, 4 * RDMA_PER_FRAME), mbit


LAT_ITERS = 300
LAT_PORT = 18520
BULK_PORT = 18521


def write_lat(lab, tos=True):
    """8-byte ib_write_lat -R from h1 VF 0 to h2 VF 0, with --tos (DSCP EF)
    or without (class 0): (typical, average) round trip in usec."""
    cmd = f"ib_write_lat -R -F -s 8 -n {LAT_ITERS}" + (f" --tos {EF << 2}" if tos else "")

    def run():
        rdma_server(lab, 0, cmd, LAT_PORT)
        r = ssh(lab, f"ip netns exec vf0 timeout 120 {cmd} -p {LAT_PORT} {addr('h2', 0)}",
                check=False)
        return r, r.stderr
    r = perftest_runs(run, cmd)
    # #bytes #iterations t_min t_max t_typical t_avg ...
    m = re.search(r"^\s*8\s+\d+\s+[\d.]+\s+[\d.]+\s+([\d.]+)\s+([\d.]+)", r.stdout, re.M)
    if r.returncode or not m:
        pytest.fail(r.stdout + r.stderr)
    return float(m.group(1)), float(m.group(2))


# One full frame on the wire at the line rate (1514 bytes + 24 of wire
# overhead), in usec: the most a strict class can wait on a link that does
# not preempt the frame it is sending, once per congested hop.
FRAME_US = 1538 * 8 / LINE_MBIT

# The RDMA latency test's line rate. A round trip needs both hosts' vCPUs
# running, and with the other lab session's hosts on the same two cores a
# vCPU waits its turn: in the cold run of 2026-12-07 class 7's typical round
# trip beside the bulk was 1,550 and 2,004 usec at 12 Mbit/s (546 on a
# quiet machine, 554 in the lab run before it), over the bound of one frame
# time (1,025) with the class working, and class 0 still a frame time
# above it. At 2 Mbit/s a frame takes 6,152 usec: the class's own wait
# (half a frame on average) and that CPU noise fit inside the bound, which
# stays one frame time, and a class not served first still misses it.
LAT_LINE_MBIT = 2
LAT_FRAME_US = 1538 * 8 / LAT_LINE_MBIT


def rdma_latency_beside_bulk(up):
    """ib_write_lat idle in class 7, then beside the bulk ib_write_bw in class 7
    and in class 0; checks the bulk filled the line and the latency flow was in
    class 7 (pytest.fail otherwise). Returns the three (typical, average)."""
    lab = up.lab
    up.line(LAT_LINE_MBIT)
    strict_class_7(up)
    up.sh(f"devlink port function rate set {up.dl}/2 tx_weight 100")
    idle = write_lat(lab)
    rdma_server(lab, 1, "nice -n 19 ib_write_bw -R -F -D 40", BULK_PORT)
    ssh(lab, f"ip netns exec vf1 setsid nice -n 19 timeout 70 ib_write_bw -R -F -D 40 "
             f"-p {BULK_PORT} {addr('h2', 1)} >/tmp/bulk-c.log 2>&1 </dev/null &")
    try:
        time.sleep(5)          # connected, and the line full behind its cap
        c0, t0 = up.counters(), time.monotonic()
        strict = write_lat(lab)
        c, secs = delta(c0, up.counters())["tc"], time.monotonic() - t0
        best_effort = write_lat(lab, tos=False)
    finally:
        ssh(lab, "pkill -x ib_write_bw", check=False)
        ssh(lab, "pkill -x ib_write_bw", host="h2", check=False)
    bulk_mbit = c[0]["sent_bytes"] * 8 / secs / 1e6
    print(f"\nline rate {LAT_LINE_MBIT} Mbit/s (a frame {LAT_FRAME_US:.0f} usec); ib_write_lat 8 B "
          f"typical/avg usec: idle, class 7: {idle[0]:.1f}/{idle[1]:.1f}; beside ib_write_bw "
          f"from VF1 (class 0, tx_weight 100, {bulk_mbit:.2f} Mbit/s of frames over {secs:.1f} s): "
          f"class 7 {strict[0]:.1f}/{strict[1]:.1f}, class 0 {best_effort[0]:.1f}/"
          f"{best_effort[1]:.1f}; frames sent per class during class 7's run: "
          + ", ".join(f"{t}: {v['sent_pkts']}" for t, v in c.items() if v["sent_pkts"]))
    if bulk_mbit < LAT_LINE_MBIT * 0.9:
        pytest.fail(f"the bulk did not fill the line: {bulk_mbit:.2f} Mbit/s")
    if c[7]["sent_pkts"] < LAT_ITERS:
        pytest.fail(f"the latency flow was not in class 7: {c}")
    return idle, strict, best_effort


def test_rdma_latency_in_a_strict_class_beside_bulk_rdma(congested):
    """ib_write_lat -R --tos 184 (DSCP 46 -> priority 7, strict class 7)
    from h1 VF 0 keeps its latency while ib_write_bw -R from VF 1 (class 0,
    tx_weight 100 against VF 0's 1) fills the line: its typical round trip
    beside the bulk is at most the idle one plus one frame time (6,152 usec
    at this test's 2 Mbit/s, LAT_LINE_MBIT: why not 12 is there). A strict class cannot do better on a link that does not
    preempt: its frame waits for the bulk frame on the wire (half a frame
    time on average), as on any NIC; "within 2x of idle" would need a line
    where a frame takes less than the ~45-usec idle round trip (270 Mbit/s),
    which the bulk cannot fill under TCG (docs/qos.md). The same flow
    without --tos (class 0) beside the same bulk waits behind VF 1's
    weighted share: at least one frame time more than in class 7, which
    shows the class is what holds the latency.

    Checks from the device's class counters that the latency flow went out
    in class 7 and the bulk filled the line in class 0. The bulk client
    and server run at nice 19: each host has one vCPU, and the latency tool
    busy-polls on it. Measured 2026-11-28: idle 43-53 usec typical, class 7
    beside the bulk 545-547, class 0 2,667 (docs/qos.md)."""
    idle, strict, best_effort = measured_twice(
        congested, lambda: rdma_latency_beside_bulk(congested),
        lambda i, st, be: st[0] <= i[0] + LAT_FRAME_US and be[0] >= st[0] + LAT_FRAME_US,
        lambda i, st, be: f"typical usec idle {i[0]:.1f}, class 7 {st[0]:.1f}, class 0 {be[0]:.1f}")
    assert strict[0] <= idle[0] + LAT_FRAME_US, (idle, strict)
    assert best_effort[0] >= strict[0] + LAT_FRAME_US, (strict, best_effort)
