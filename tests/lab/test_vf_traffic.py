"""VF data path through the embedded switch (issue 3): VF netdevs (vfwarp_vf)
with TX/RX rings, MSI-X and NAPI, forwarded by the adapter's switch between
VFs of one host (hairpin) and over the lab wire between hosts.

Each host of the session's lab2 gets 2 VFs, each VF netdev in its own
network namespace (lib/vf.py). Every test loads the modules and leaves the
hosts as it found them, also on failure.
"""
import json

from lib.perftest import RPING_PORT
from lib.vf import addr, mac_of, nsx, pf_netdev, ping, raw_send, stats, vfs_up
from lib.wait import eventually, wait_rdma_listener, wait_tcp_listener

# Mbit/s for the max_tx_rate test. TCG reaches ~50 on a quiet machine; the
# shaper's burst (16 KiB, vswitch/src/sched.c) covers 13 ms of stall at this
# rate: at 20 Mbit/s (6.5 ms) the CI run of stop 30, both lab sessions on 2
# cores, delivered 16.8 Mbit/s, under the 10% tolerance.
RATE = 10


def test_ping_vf_to_vf_same_host_and_across_wire(lab2):
    with vfs_up(lab2):
        # hairpin in h1's switch
        assert ping(lab2, "h1", 0, addr("h1", 1)) == 3
        # h1 VF0 -> wire -> h2 VF0 and VF1
        assert ping(lab2, "h1", 0, addr("h2", 0)) == 3
        assert ping(lab2, "h2", 1, addr("h1", 1)) == 3
        s = stats(lab2, "h1", 0)
        assert s["hw_tx_packets"] >= 6 and s["hw_rx_packets"] >= 6, s
        assert s["rx_packets"] >= 6 and s["hw_tx_desc_errors"] == 0, s
        # the device's MAC is the VF's: 02:00:00:<host>:<vf>:01 by default
        mac = nsx(lab2, "h2", 1, "cat /sys/class/net/vfeth/address").stdout.strip()
        assert mac.startswith("02:00:00:") and mac.endswith(":01:01"), mac
        # driver/ethtool basics
        info = nsx(lab2, "h1", 0, "ethtool -i vfeth").stdout
        assert "driver: vfwarp_vf" in info, info
        assert "Link detected: yes" in nsx(lab2, "h1", 0, "ethtool vfeth").stdout


def test_iperf3_vf_to_vf_across_hosts(lab2):
    with vfs_up(lab2):
        lab2.ssh("h2", "ip netns exec vf0 setsid timeout 60 iperf3 -s -1 "
                       ">/tmp/iperf3-s.log 2>&1 < /dev/null &")
        wait_tcp_listener(lambda c: nsx(lab2, "h2", 0, c, check=False), 5201,
                          "cat /tmp/iperf3-s.log", what="h2 vf0: iperf3 -s")
        r = nsx(lab2, "h1", 0, f"timeout 60 iperf3 -c {addr('h2', 0)} -t 3 -J", timeout=120)
        res = json.loads(r.stdout)
        bps = res["end"]["sum_received"]["bits_per_second"]
        print(f"\niperf3 h1 VF0 -> h2 VF0: {bps / 1e6:.1f} Mbit/s")
        assert bps > 1e6, res["end"]
        s = stats(lab2, "h2", 0)
        assert s["hw_rx_packets"] > 1000, s


def test_spoofed_source_mac_dropped_and_counted(lab2):
    """Frames whose source MAC is not the VF's are dropped by the switch
    and counted (raw frames: the VF's own MAC is left alone)."""
    with vfs_up(lab2, hosts=("h1",)):
        assert ping(lab2, "h1", 0, addr("h1", 1)) == 3
        dst = mac_of(lab2, "h1", 1)
        before0, before1 = stats(lab2, "h1", 0), stats(lab2, "h1", 1)
        raw_send(lab2, "h1", 0, dst, "02:de:ad:be:ef:01", 20)
        after0, after1 = stats(lab2, "h1", 0), stats(lab2, "h1", 1)
        assert after0["hw_tx_drop_spoof"] - before0["hw_tx_drop_spoof"] == 20, (before0, after0)
        # nothing of it reached VF1 (a few ARP/ND frames at most)
        assert after1["hw_rx_packets"] - before1["hw_rx_packets"] < 5, (before1, after1)
        # the same frames with the VF's own MAC pass
        raw_send(lab2, "h1", 0, dst, mac_of(lab2, "h1", 0), 20)
        final1 = stats(lab2, "h1", 1)
        assert final1["hw_rx_packets"] - after1["hw_rx_packets"] >= 20, (after1, final1)
        assert stats(lab2, "h1", 0)["hw_tx_drop_spoof"] == after0["hw_tx_drop_spoof"]


def test_vf_settings_from_the_pf(lab2):
    """VLAN isolation, link-state disable and max_tx_rate through
    `ip link set PF vf N ...` (needs the PF netdev of the control path)."""
    with vfs_up(lab2, hosts=("h1",)):
        pf = pf_netdev(lab2, "h1")
        assert pf, "the PF has no netdev"
        lab2.ssh("h1", f"ip link set {pf} vf 0 vlan 10 && ip link set {pf} vf 1 vlan 20")
        # different VLANs cannot reach each other
        assert ping(lab2, "h1", 0, addr("h1", 1)) == 0
        lab2.ssh("h1", f"ip link set {pf} vf 1 vlan 10")
        assert ping(lab2, "h1", 0, addr("h1", 1)) == 3
        lab2.ssh("h1", f"ip link set {pf} vf 0 vlan 0 && ip link set {pf} vf 1 vlan 0")
        # link-state disable stops traffic; enable brings it back
        def carrier():
            return "NO-CARRIER" not in nsx(lab2, "h1", 1, "ip link show vfeth").stdout
        lab2.ssh("h1", f"ip link set {pf} vf 1 state disable")
        assert eventually(lambda: not carrier())
        assert ping(lab2, "h1", 0, addr("h1", 1)) == 0
        lab2.ssh("h1", f"ip link set {pf} vf 1 state auto")
        assert eventually(carrier)
        assert ping(lab2, "h1", 0, addr("h1", 1), count=5) >= 3
        # max_tx_rate: VF0 -> VF1 TCP goodput within 10% of the limit
        # (goodput is ~95% of the L2 rate the device shapes)
        lab2.ssh("h1", f"ip link set {pf} vf 0 max_tx_rate {RATE}")
        try:
            bps = shaped_goodput(lab2)
        finally:
            lab2.ssh("h1", f"ip link set {pf} vf 0 max_tx_rate 0")
        assert within_rate(bps), bps


def within_rate(bps):
    return RATE * 0.9e6 <= bps <= RATE * 1.1e6


def iperf3_h1_vf0_to_vf1(lab, secs):
    """TCP goodput in bit/s from h1's VF 0 to its VF 1 over `secs` seconds
    (the first second omitted: slow start)."""
    lab.ssh("h1", "ip netns exec vf1 setsid timeout 60 iperf3 -s -1 "
                  ">/tmp/iperf3-s.log 2>&1 < /dev/null &")
    wait_tcp_listener(lambda c: nsx(lab, "h1", 1, c, check=False), 5201,
                      "cat /tmp/iperf3-s.log", what="h1 vf1: iperf3 -s")
    r = nsx(lab, "h1", 0, f"timeout 60 iperf3 -c {addr('h1', 1)} -t {secs} -O 1 -J",
            timeout=120)
    return json.loads(r.stdout)["end"]["sum_received"]["bits_per_second"]


def shaped_goodput(lab):
    """VF 0's goodput under max_tx_rate RATE, measured once more (and longer)
    when it misses the 10% band. A host starved of CPU sends less than the
    shaper allows, with no fault of the shaper (CI, 2026-11-29: 8.98 Mbit/s
    at 10 while the other lab session ran its tenants); a shaper that lets too
    much or too little through misses both times. Both figures are printed."""
    bps = iperf3_h1_vf0_to_vf1(lab, 3)
    print(f"\nmax_tx_rate {RATE} Mbit/s: iperf3 goodput {bps / 1e6:.2f} Mbit/s")
    if not within_rate(bps):
        bps = iperf3_h1_vf0_to_vf1(lab, 6)
        print(f"out of the 10% band: measured again over 6 s: {bps / 1e6:.2f} Mbit/s")
    return bps


def test_jumbo_frames_on_vf_netdevs_and_rdma_follows(lab2):
    """A 9000 MTU on the VF netdevs: 8972-byte pings with DF set pass across
    the wire and through the hairpin (RX buffers re-made for the MTU while the
    netdev runs), a frame above the peer's MTU does not, and the RDMA engine
    takes the new MTU (SET_ADDR) with rping still passing."""
    with vfs_up(lab2):
        for h in ("h1", "h2"):
            for vf in (0, 1):
                nsx(lab2, h, vf, "ip link set vfeth mtu 9000")
            assert "mtu 9000" in nsx(lab2, h, 0, "ip link show vfeth").stdout
            assert "maxmtu 9000" in nsx(lab2, h, 0, "ip -d link show vfeth").stdout
        big = "-M do -s 8972"
        r = nsx(lab2, "h1", 0, f"ping -c 3 -W 3 {big} {addr('h2', 0)}", check=False, timeout=60)
        assert " 3 received" in r.stdout, r.stdout
        r = nsx(lab2, "h1", 0, f"ping -c 3 -W 3 {big} {addr('h1', 1)}", check=False, timeout=60)
        assert " 3 received" in r.stdout, r.stdout
        # the peer back at 1500: its 2 KiB RX buffers cannot take the frame
        nsx(lab2, "h2", 1, "ip link set vfeth mtu 1500")
        r = nsx(lab2, "h1", 0, f"ping -c 2 -W 2 {big} {addr('h2', 1)}", check=False, timeout=60)
        assert " 0 received" in r.stdout, r.stdout
        assert ping(lab2, "h1", 0, addr("h2", 1)) == 3       # small frames still pass
        for h in ("h1", "h2"):
            dm = lab2.ssh(h, f"dmesg | grep 'RDMA local address {addr(h, 0)},' | tail -1").stdout
            assert dm.rstrip().endswith("MTU 9000"), dm
        lab2.ssh("h2", "ip netns exec vf0 setsid timeout 60 rping -s -a "
                       f"{addr('h2', 0)} -C 20 -V >/tmp/rping-s.log 2>&1 < /dev/null &")
        wait_rdma_listener(lambda c: lab2.ssh("h2", c, check=False), RPING_PORT,
                           "cat /tmp/rping-s.log", ip=addr("h2", 0), what="h2 vf0: rping -s")
        r = nsx(lab2, "h1", 0, f"timeout 60 rping -c -a {addr('h2', 0)} -C 20 -S 8000 -V",
                check=False, timeout=120)
        assert r.returncode == 0, r.stdout + r.stderr
        assert "WARNING" not in lab2.ssh("h1", "dmesg").stdout
