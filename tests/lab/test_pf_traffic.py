"""PF data path: the PF netdev (vfwarp_pf) drives the PF function's own TX/RX
rings (common/kernel/vfw_eth.c, shared with vfwarp_vf) through the adapter's
embedded switch: to the uplink (the lab wire to the other host) and to the
VFs.

Each host of the session's lab2 puts its PF netdev in the root namespace
with an address of 10.78.0.0/24 (h1 .1, h2 .2); a VF, where a test needs
one, goes into namespace vf0 of its host (h2: .22) as in test_vf_traffic.py.
Every test loads the modules and leaves the hosts as it found them, also on
failure.
"""
import contextlib
import json
import re

from lib.pf import PF_ID, VF_KOS, pf_up, require_modules, vf_load
from lib.vf import HOSTS, unload_all
from lib.wait import wait_tcp_listener

BAD_LOG = "WARNING\\|BUG\\|Oops"


def pf_addr(host):
    return f"10.78.0.{int(host[1:])}"


def vf_addr(host):
    return f"10.78.0.{int(host[1:]) * 10 + 2}"


# One VF of an already loaded PF, in namespace vf0 (as test_vf_traffic.py).
VF_UP = r"""
set -eu
PF=$(lspci -D -n -d %(pf)s | awk 'NR==1{print $1}')
D=/sys/bus/pci/devices/$PF
%(vf_load)s
echo 1 > $D/sriov_numvfs
udevadm settle -t 20 || true
vf=$(basename $(readlink $D/virtfn0))
for t in $(seq 100); do [ -d /sys/bus/pci/devices/$vf/net ] && break; sleep 0.1; done
udevadm settle -t 20 || true
nd=$(ls /sys/bus/pci/devices/$vf/net)
ip netns add vf0
ip link set dev $nd netns vf0
ip -n vf0 link set dev $nd name vfeth
ip -n vf0 addr add %(addr)s/24 dev vfeth
ip -n vf0 link set lo up
ip -n vf0 link set vfeth up
for t in $(seq 50); do ip -n vf0 link show vfeth | grep -q LOWER_UP && break; sleep 0.1; done
ip -n vf0 link show vfeth | grep -q LOWER_UP
"""

@contextlib.contextmanager
def pfs_up(lab, hosts=HOSTS, vf_on=()):
    """The PF netdevs of `hosts` up, plus a VF in namespace vf0 on `vf_on`;
    yields {host: PF netdev name}."""
    require_modules("vfwarp_pf.ko", *VF_KOS)
    try:
        for h in hosts:
            lab.ssh(h, "dmesg -C")
        names = {h: pf_up(lab, h, pf_addr(h)) for h in hosts}
        for h in vf_on:
            lab.ssh(h, VF_UP % {"pf": PF_ID, "vf_load": vf_load(), "addr": vf_addr(h)}, timeout=300)
        yield names
    finally:
        unload_all(lab, hosts)


def ping(lab, host, dst, count=5, ns=None):
    """Packets received and the average RTT in ms (None without replies)."""
    pre = f"ip netns exec {ns} " if ns else ""
    r = lab.ssh(host, f"{pre}ping -c {count} -i 0.3 -W 2 {dst}", check=False)
    m = re.search(r"(\d+) received", r.stdout)
    rtt = re.search(r"= [\d.]+/([\d.]+)/", r.stdout)
    return (int(m.group(1)) if m else 0), (float(rtt.group(1)) if rtt else None)


def ethtool_stats(lab, host, dev, ns=None):
    pre = f"ip netns exec {ns} " if ns else ""
    out = lab.ssh(host, f"{pre}ethtool -S {dev}").stdout
    return {k: int(v) for k, v in re.findall(r"^\s+(\w+): (\d+)$", out, re.M)}


def link_stats(lab, host, dev):
    """`ip -s link` counters of `dev`: {'rx': {...}, 'tx': {...}}."""
    return json.loads(lab.ssh(host, f"ip -s -j link show dev {dev}").stdout)[0]["stats64"]


def moved(before, after, keys, at_least):
    return {k: after[k] - before[k] for k in keys if after[k] - before[k] < at_least}


def test_ping_pf_to_pf_across_wire(lab2):
    with pfs_up(lab2) as nd:
        info = lab2.ssh("h1", f"ethtool -i {nd['h1']}").stdout
        assert "driver: vfwarp_pf" in info, info
        assert "Link detected: yes" in lab2.ssh("h1", f"ethtool {nd['h1']}").stdout
        # the permanent MAC of the adapter is what the switch forwards to
        mac = lab2.ssh("h2", f"cat /sys/class/net/{nd['h2']}/address").stdout.strip()
        et0 = {h: ethtool_stats(lab2, h, nd[h]) for h in HOSTS}
        ls0 = {h: link_stats(lab2, h, nd[h]) for h in HOSTS}

        got, rtt = ping(lab2, "h1", pf_addr("h2"), count=5)
        assert got == 5, f"h1 PF -> h2 PF: {got}/5 replies"
        print(f"\nping h1 PF -> h2 PF: 5/5, avg RTT {rtt} ms")
        neigh = lab2.ssh("h1", f"ip neigh show {pf_addr('h2')} dev {nd['h1']}").stdout
        assert mac in neigh, (mac, neigh)

        for h in HOSTS:
            et = ethtool_stats(lab2, h, nd[h])
            assert not moved(et0[h], et, ("tx_packets", "rx_packets", "hw_tx_packets",
                                          "hw_rx_packets", "hw_tx_bytes", "hw_rx_bytes",
                                          "uplink_tx_pkts", "uplink_rx_pkts"), 5), (h, et0[h], et)
            assert et["hw_tx_desc_errors"] == 0 and et["rx_errors"] == 0, (h, et)
            ls = link_stats(lab2, h, nd[h])
            for d in ("rx", "tx"):
                assert ls[d]["packets"] - ls0[h][d]["packets"] >= 5, (h, ls0[h], ls)
                assert ls[d]["bytes"] - ls0[h][d]["bytes"] >= 5 * 98, (h, ls0[h], ls)


def test_ping_pf_to_vf_across_wire(lab2):
    with pfs_up(lab2, vf_on=("h2",)) as nd:
        vf0 = ethtool_stats(lab2, "h2", "vfeth", ns="vf0")
        pf0 = ethtool_stats(lab2, "h1", nd["h1"])
        got, _ = ping(lab2, "h1", vf_addr("h2"))
        assert got == 5, f"h1 PF -> h2 VF0: {got}/5 replies"
        got, _ = ping(lab2, "h2", pf_addr("h1"), ns="vf0")
        assert got == 5, f"h2 VF0 -> h1 PF: {got}/5 replies"
        vf = ethtool_stats(lab2, "h2", "vfeth", ns="vf0")
        assert not moved(vf0, vf, ("hw_rx_packets", "hw_tx_packets"), 10), (vf0, vf)
        pf = ethtool_stats(lab2, "h1", nd["h1"])
        assert not moved(pf0, pf, ("hw_rx_packets", "hw_tx_packets"), 10), (pf0, pf)


def test_iperf3_pf_to_pf(lab2):
    with pfs_up(lab2) as nd:
        before = ethtool_stats(lab2, "h2", nd["h2"])
        lab2.ssh("h2", "setsid timeout 60 iperf3 -s -1 >/tmp/iperf3-pf.log 2>&1 < /dev/null &")
        wait_tcp_listener(lambda c: lab2.ssh("h2", c, check=False), 5201,
                          "cat /tmp/iperf3-pf.log", what="h2: iperf3 -s")
        r = lab2.ssh("h1", f"timeout 60 iperf3 -c {pf_addr('h2')} -t 3 -J", timeout=120)
        res = json.loads(r.stdout)
        bps = res["end"]["sum_received"]["bits_per_second"]
        print(f"\niperf3 h1 PF -> h2 PF: {bps / 1e6:.1f} Mbit/s")
        assert bps > 1e6, res["end"]
        after = ethtool_stats(lab2, "h2", nd["h2"])
        assert after["hw_rx_packets"] - before["hw_rx_packets"] > 1000, (before, after)
        assert after["rx_bytes"] - before["rx_bytes"] >= res["end"]["sum_received"]["bytes"]


def test_pf_reload_is_clean(lab2):
    """rmmod/insmod of vfwarp_pf with the rings up but idle: the netdev comes
    back with a working data path, and neither unload (here and in the
    cleanup) nor the load makes the kernel warn."""
    with pfs_up(lab2):
        assert ping(lab2, "h1", pf_addr("h2"), count=3)[0] == 3
        lab2.ssh("h1", "rmmod vfwarp_pf")
        # the replies came from h1's PF netdev: gone with the module
        assert ping(lab2, "h2", pf_addr("h1"), count=3)[0] == 0
        pf_up(lab2, "h1", pf_addr("h1"))
        assert ping(lab2, "h1", pf_addr("h2"), count=3)[0] == 3
    log = lab2.ssh("h1", "dmesg").stdout
    # the log covers both unloads (a cleared or lost log would hide warnings)
    assert log.count("vfwarp adapter released") == 2, log
    bad = lab2.ssh("h1", f"dmesg | grep '{BAD_LOG}'", check=False).stdout
    assert not bad, bad
