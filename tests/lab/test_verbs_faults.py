"""Faults around live verbs traffic (issue 14): a verbs process killed
mid-transfer, an FLR of a VF with live QPs, the peer host powered off
mid-transfer, and `rmmod vfwarp_vf` with no users.

After each: the surviving processes see their QPs flush and end (they do
not hang), `rdma res` of the VF devices returns to empty, the kernel logged
no WARNING/BUG/Oops, QEMU is alive, and the next rping between the hosts
passes. Traffic is ib_write_bw -R (busy-polling: it ends only if its CQ
reports the flush) from h1 VF0 to h2 VF0.
"""
import re
import time

import pytest

from lib.perftest import PERF_PORT
from lib.verbs import RES_KINDS, bg, ibdev_of, res_counts, rping_pair, wait_listen
from lib.vf import CLEANUP, addr, rdma_counter, setup_host, vfs_up

# tools/lab-tier's `provisioned` session, on bare hosts before site.yml runs:
# it evens the two sessions out (tools/lab-tier says how they were weighed)
pytestmark = pytest.mark.before_site

SPLAT = re.compile(r"WARNING:|BUG:|Oops|Call Trace|general protection|list_del corruption")


@pytest.fixture(scope="module")
def faults(lab2):
    with vfs_up(lab2):
        yield lab2


def start_transfer(lab, secs=120):
    """ib_write_bw -R -D secs h1 VF0 -> h2 VF0; returns once its data moves
    (h1's device sends frames at the rate of the run, not of the set-up:
    perftest first connects and talks over a connection of its own, and a
    fault then is a different case). Each side's log ends with
    'exit=<status>'."""
    for h in ("h1", "h2"):
        lab.ssh(h, "pkill -x ib_write_bw; rm -f /tmp/fault-bw.log", check=False)
    wrap = "bash -c 'timeout {t} ib_write_bw -R -F -D {d} -s 65536 {a}; echo exit=$?'"
    bg(lab, "h2", 0, wrap.format(t=secs + 60, d=secs, a=""), "/tmp/fault-bw.log")
    wait_listen(lab, "h2", 0, PERF_PORT, "/tmp/fault-bw.log")
    bg(lab, "h1", 0, wrap.format(t=secs + 60, d=secs, a=addr("h2", 0)), "/tmp/fault-bw.log")
    end = time.time() + 90
    before = rdma_counter(lab, "h1", 0, "tx_frames")
    while time.time() < end:
        time.sleep(2)
        now = rdma_counter(lab, "h1", 0, "tx_frames")
        if (now - before) % 2**32 >= DATA_FRAMES:
            return
        before = now
    pytest.fail("ib_write_bw never moved data:\n" + "\n".join(
        lab.ssh(h, "cat /tmp/fault-bw.log", check=False).stdout for h in ("h1", "h2")))


# Frames h1's device sends in 2 s once 64 KiB WRITEs flow (hundreds under
# TCG); perftest's set-up sends a few dozen.
DATA_FRAMES = 200


def wait_ended(lab, host, secs):
    """ib_write_bw on `host` ends within `secs`; returns its log."""
    end = time.time() + secs
    while time.time() < end:
        if lab.ssh(host, "pgrep -x ib_write_bw", check=False).returncode:
            break
        time.sleep(1)
    log = lab.ssh(host, "cat /tmp/fault-bw.log", check=False).stdout
    assert lab.ssh(host, "pgrep -x ib_write_bw", check=False).returncode, \
        f"{host}: ib_write_bw still running {secs}s after the fault (QP not flushed):\n{log}" \
        + hang_report(lab, host)
    return log


HANG_REPORT = (
    "for p in $(pgrep -x ib_write_bw); do "
    "echo \"== pid $p: $(ps -o stat=,wchan:32= -p $p)\"; cat /proc/$p/stack; "
    "for t in /proc/$p/task/*; do echo \"task $t: $(cat $t/stat | cut -d' ' -f3) "
    "$(cat $t/wchan)\"; done; done; "
    "echo '== rdma res'; rdma res show qp; rdma res show cm_id; "
    "echo '== hw counters'; rdma statistic show 2>&1; "
    "echo '== dmesg'; dmesg | tail -40")


def hang_report(lab, host):
    """What a hung ib_write_bw is doing (user space busy-polling, or blocked
    in the kernel and where), the host's RDMA objects, the device's counters
    and the kernel's last words: a CI log must tell which side lost the
    flush."""
    return "\n" + lab.ssh(host, HANG_REPORT, check=False, timeout=60).stdout


def assert_clean(lab, host):
    """The host's VF devices hold no RDMA object, and its kernel logged no
    splat since the VFs were set up (lib/vf.py's SETUP clears dmesg)."""
    dev = ibdev_of(lab, host, 0)
    end = time.time() + 20           # iw_cm tears connections down asynchronously
    while time.time() < end and any(res_counts(lab, host, dev)[0][k] for k in RES_KINDS):
        time.sleep(1)
    counts, line = res_counts(lab, host, dev)
    assert not any(counts[k] for k in RES_KINDS), f"{host}: objects left: {line}"
    msgs = lab.ssh(host, "dmesg").stdout
    bad = [ln for ln in msgs.splitlines() if SPLAT.search(ln)]
    assert not bad, f"{host}: kernel splat:\n" + "\n".join(bad[:20])
    assert [h["running"] for h in lab.status() if h["host"] == host] == [True]  # QEMU alive


def exit_status(log):
    m = re.search(r"^exit=(\d+)", log, re.M)
    return int(m.group(1)) if m else None


def test_kill_verbs_process_mid_transfer(faults):
    start_transfer(faults)
    faults.ssh("h1", "pkill -9 -x ib_write_bw")
    # the server's QP flushes on the connection's reset; it reports and ends
    slog = wait_ended(faults, "h2", 60)
    assert exit_status(slog) not in (None, 0), slog
    for h in ("h1", "h2"):
        assert_clean(faults, h)
    rping_pair(faults, ("h2", 0), ("h1", 0))


def test_flr_of_vf_with_live_qps(faults):
    start_transfer(faults)
    vf_pci = faults.ssh("h1", "ip netns exec vf0 readlink -f /sys/class/net/vfeth/device"
                        ).stdout.strip()
    dev_before = ibdev_of(faults, "h1", 0)
    faults.ssh("h1", f"echo 1 > {vf_pci}/reset", timeout=120)
    # the FLR'd side: its QP's WRs complete in error, the program ends
    clog = wait_ended(faults, "h1", 60)
    assert exit_status(clog) not in (None, 0), clog
    # the peer: its connection is reset, its QP flushes
    slog = wait_ended(faults, "h2", 120)
    assert exit_status(slog) not in (None, 0), slog
    # a new ib_device on the same netdev after the reset
    assert ibdev_of(faults, "h1", 0), dev_before
    for h in ("h1", "h2"):
        assert_clean(faults, h)
    rping_pair(faults, ("h2", 0), ("h1", 0))
    rping_pair(faults, ("h1", 0), ("h2", 0))


def test_peer_powered_off_mid_transfer(faults):
    start_transfer(faults, secs=600)
    t0 = time.time()
    faults.power_off("h2")
    try:
        # the engine's TCP gives up after its data retries (8, RTO doubling
        # from 200 ms, at most 60 s each): the QP goes to ERROR and flushes
        clog = wait_ended(faults, "h1", 400)
        gone = time.time() - t0
        assert exit_status(clog) not in (None, 0), clog
        assert_clean(faults, "h1")
        print(f"\nh1's ib_write_bw ended {gone:.0f}s after h2 lost power")
    finally:
        # h2 comes back for the next tests, also when this one failed
        faults.power_on("h2")
        setup_host(faults, "h2")
    rping_pair(faults, ("h2", 0), ("h1", 0))


def test_rmmod_vf_driver_without_users(faults):
    rping_pair(faults, ("h2", 0), ("h1", 0))
    r = faults.ssh("h1", "timeout 120 rmmod vfwarp_vf; echo rc=$?", timeout=180)
    assert "rc=0" in r.stdout, r.stdout + r.stderr
    left = faults.ssh("h1", "for d in /sys/class/infiniband/*; do "
                            "basename $(readlink $d/device/driver); done", check=False).stdout
    assert "vfwarp_vf" not in left, left
    msgs = faults.ssh("h1", "dmesg").stdout
    bad = [ln for ln in msgs.splitlines() if SPLAT.search(ln)]
    assert not bad, "h1: kernel splat:\n" + "\n".join(bad[:20])
    # back to a working host: VFs, netdevs and RDMA from scratch
    faults.ssh("h1", CLEANUP, check=False, timeout=300)
    setup_host(faults, "h1")
    rping_pair(faults, ("h2", 0), ("h1", 0))
