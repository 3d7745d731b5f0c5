"""VF data path through the embedded switch (issue 3): VF netdevs (vfwarp_vf)
with TX/RX rings, MSI-X and NAPI, forwarded by the adapter's switch between
VFs of one host (hairpin) and over the lab wire between hosts.

Each host of the session's lab2 gets 2 VFs; each VF netdev goes into its own
network namespace inside the host (vf0, vf1) with an address of 10.77.0.0/24
(h1: .11 .12, h2: .21 .22): traffic stays between lab hosts. Every test
loads the modules and leaves the hosts as it found them, also on failure.

VF settings through `ip link set PF vf N ...` need the PF netdev and admin
queue of the control path; the tests that need them skip (saying so) while
the PF has no netdev. Anti-spoofing is on by default in the device, so the
spoof test runs without the control path.
"""
import contextlib
import json
import re
import time

import pytest

from vfwarp_lab.paths import guest_share_dir

HOSTS = ("h1", "h2")
NVF = 2
PF_ID = "1234:f0a0"
MODS = "/mnt/vfwarp/modules"
RATE = 20          # Mbit/s for the max_tx_rate test (TCG reaches ~50)


def addr(host, vf):
    return f"10.77.0.{int(host[1:]) * 10 + vf + 1}"


SETUP = r"""
set -eu
H=%(h)d
PF=$(lspci -D -n -d %(pf)s | awk 'NR==1{print $1}')
D=/sys/bus/pci/devices/$PF
dmesg -C
insmod %(mods)s/vfwarp_pf.ko
insmod %(mods)s/vfwarp_vf.ko
echo %(n)d > $D/sriov_numvfs
udevadm settle -t 20 || true   # netdevs get their final names first
for i in $(seq 0 $((%(n)d - 1))); do
  vf=$(basename $(readlink $D/virtfn$i))
  for t in $(seq 100); do [ -d /sys/bus/pci/devices/$vf/net ] && break; sleep 0.1; done
  udevadm settle -t 20 || true
  nd=$(ls /sys/bus/pci/devices/$vf/net)
  ip netns add vf$i
  ip link set dev $nd netns vf$i
  ip -n vf$i link set dev $nd name vfeth
  ip -n vf$i addr add 10.77.0.$((H * 10 + i + 1))/24 dev vfeth
  ip -n vf$i link set lo up
  ip -n vf$i link set vfeth up
done
for i in $(seq 0 $((%(n)d - 1))); do
  for t in $(seq 50); do ip -n vf$i link show vfeth | grep -q LOWER_UP && break; sleep 0.1; done
  echo "vf$i $(ip -n vf$i -br link show vfeth)"
done
"""

CLEANUP = r"""
for i in $(seq 0 7); do ip netns del vf$i 2>/dev/null; done
rmmod vfwarp_vf 2>/dev/null
PF=$(lspci -D -n -d %(pf)s | awk 'NR==1{print $1}')
[ -n "$PF" ] && [ -d /sys/module/vfwarp_pf ] && echo 0 > /sys/bus/pci/devices/$PF/sriov_numvfs
rmmod vfwarp_pf 2>/dev/null
true
""" % {"pf": PF_ID}


@contextlib.contextmanager
def vfs_up(lab, hosts=HOSTS):
    for m in ("vfwarp_pf.ko", "vfwarp_vf.ko"):
        assert (guest_share_dir() / "modules" / m).exists(), "run 'make modules' first"
    try:
        for h in hosts:
            out = lab.ssh(h, SETUP % {"h": int(h[1:]), "pf": PF_ID, "mods": MODS, "n": NVF},
                          timeout=300).stdout
            assert out.count("LOWER_UP") == NVF, f"{h}: VF links not up:\n{out}"
        yield
    finally:
        for h in hosts:
            lab.ssh(h, CLEANUP, check=False, timeout=300)
        for h in hosts:
            mods = lab.ssh(h, "lsmod").stdout
            assert "vfwarp_pf" not in mods and "vfwarp_vf" not in mods


def nsx(lab, host, vf, cmd, check=True, timeout=120):
    return lab.ssh(host, f"ip netns exec vf{vf} {cmd}", check=check, timeout=timeout)


def ping(lab, host, vf, dst, count=3, check=False):
    r = nsx(lab, host, vf, f"ping -c {count} -i 0.3 -W 2 {dst}", check=check)
    m = re.search(r"(\d+) received", r.stdout)
    return int(m.group(1)) if m else 0


def stats(lab, host, vf):
    out = nsx(lab, host, vf, "ethtool -S vfeth").stdout
    return {k: int(v) for k, v in re.findall(r"^\s+(\w+): (\d+)$", out, re.M)}


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
        time.sleep(1)
        r = nsx(lab2, "h1", 0, f"timeout 60 iperf3 -c {addr('h2', 0)} -t 3 -J", timeout=120)
        res = json.loads(r.stdout)
        bps = res["end"]["sum_received"]["bits_per_second"]
        print(f"\niperf3 h1 VF0 -> h2 VF0: {bps / 1e6:.1f} Mbit/s")
        assert bps > 1e6, res["end"]
        s = stats(lab2, "h2", 0)
        assert s["hw_rx_packets"] > 1000, s


def test_spoofed_source_mac_dropped_and_counted(lab2):
    with vfs_up(lab2, hosts=("h1",)):
        assert ping(lab2, "h1", 0, addr("h1", 1)) == 3
        mac = nsx(lab2, "h1", 0, "cat /sys/class/net/vfeth/address").stdout.strip()
        before = stats(lab2, "h1", 0)["hw_tx_drop_spoof"]
        nsx(lab2, "h1", 0, "ip link set dev vfeth address 02:de:ad:be:ef:01")
        nsx(lab2, "h1", 0, "ip neigh flush dev vfeth")
        assert ping(lab2, "h1", 0, addr("h1", 1)) == 0
        after = stats(lab2, "h1", 0)["hw_tx_drop_spoof"]
        assert after - before >= 2, (before, after)
        # nothing of it reached VF1
        assert stats(lab2, "h1", 1)["hw_rx_packets"] < 20
        # the device's MAC again: traffic flows
        nsx(lab2, "h1", 0, f"ip link set dev vfeth address {mac}")
        assert ping(lab2, "h1", 0, addr("h1", 1)) == 3


def pf_netdev(lab, host):
    return lab.ssh(host, f"ls /sys/bus/pci/devices/$(lspci -D -n -d {PF_ID} | awk 'NR==1{{print $1}}')/net "
                         "2>/dev/null", check=False).stdout.strip()


def test_vf_settings_from_the_pf(lab2):
    """VLAN isolation, link-state disable and max_tx_rate through
    `ip link set PF vf N ...` (needs the PF netdev of the control path)."""
    with vfs_up(lab2, hosts=("h1",)):
        pf = pf_netdev(lab2, "h1")
        if not pf:
            pytest.skip("the PF has no netdev yet: ip link set PF vf N vlan/state/max_tx_rate "
                        "cannot be issued (control path not merged)")
        r = lab2.ssh("h1", f"ip link set {pf} vf 0 vlan 10 && ip link set {pf} vf 1 vlan 20",
                     check=False)
        if r.returncode:
            pytest.skip(f"ip link set {pf} vf N vlan: {r.stderr.strip()}")
        # different VLANs cannot reach each other
        assert ping(lab2, "h1", 0, addr("h1", 1)) == 0
        lab2.ssh("h1", f"ip link set {pf} vf 1 vlan 10")
        assert ping(lab2, "h1", 0, addr("h1", 1)) == 3
        lab2.ssh("h1", f"ip link set {pf} vf 0 vlan 0 && ip link set {pf} vf 1 vlan 0")
        # link-state disable stops traffic; enable brings it back
        lab2.ssh("h1", f"ip link set {pf} vf 1 state disable")
        time.sleep(1)
        assert "NO-CARRIER" in nsx(lab2, "h1", 1, "ip link show vfeth").stdout
        assert ping(lab2, "h1", 0, addr("h1", 1)) == 0
        lab2.ssh("h1", f"ip link set {pf} vf 1 state auto")
        time.sleep(1)
        assert "NO-CARRIER" not in nsx(lab2, "h1", 1, "ip link show vfeth").stdout
        assert ping(lab2, "h1", 0, addr("h1", 1), count=5) >= 3
        # max_tx_rate: VF0 -> VF1 TCP goodput within 10% of the limit
        # (goodput is ~95% of the L2 rate the device shapes)
        lab2.ssh("h1", f"ip link set {pf} vf 0 max_tx_rate {RATE}")
        lab2.ssh("h1", "ip netns exec vf1 setsid timeout 60 iperf3 -s -1 "
                       ">/tmp/iperf3-s.log 2>&1 < /dev/null &")
        time.sleep(1)
        r = nsx(lab2, "h1", 0, f"timeout 60 iperf3 -c {addr('h1', 1)} -t 3 -O 1 -J",
                timeout=120)
        bps = json.loads(r.stdout)["end"]["sum_received"]["bits_per_second"]
        print(f"\nmax_tx_rate {RATE} Mbit/s: iperf3 goodput {bps / 1e6:.1f} Mbit/s")
        lab2.ssh("h1", f"ip link set {pf} vf 0 max_tx_rate 0")
        assert RATE * 0.9e6 <= bps <= RATE * 1.1e6, bps
