"""The VF-to-PF mailbox (issue 3): a VF driver asks the PF driver to change
its MAC, join VLANs and receive multicast; the PF decides (trust, the
administrator's settings, limits) and programs the adapter's switch, and the
answer shows in the VM as the standard tools' result: `ip link set vfeth
address ...` fails with "Operation not permitted" when the host pinned the
MAC, `ip link add ... type vlan` fails while a port VLAN is set, and a VF
only receives the multicast groups it joined unless it is trusted and asks
for all of them.

The VF netdevs live in namespaces vf0/vf1 on h1 (lib/vf.py).
"""
import re
import time

from lib.vf import addr, mac_of, nsx, pf_netdev, ping, raw_send, stats, vfs_up
from lib.wait import eventually

PF_DBG = "/sys/kernel/debug/vfwarp_pf"


def dev_view(lab, pf):
    """{vf: {field: value}}: the device's view of each VF (GET_VF_CONFIG)."""
    lab.ssh("h1", "mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug")
    pci = lab.ssh("h1", f"basename $(readlink /sys/class/net/{pf}/device)").stdout.strip()
    view = {}
    for ln in lab.ssh("h1", f"cat {PF_DBG}/{pci}/vf_config").stdout.splitlines():
        f = ln.split()
        view[int(f[1])] = dict(zip(f[2::2], f[3::2]))
    return view


def vf_mac_in_ip_link(lab, pf, vf):
    out = lab.ssh("h1", f"ip link show {pf}").stdout
    m = re.search(rf"^\s*vf {vf}\b.*?link/ether ([0-9a-f:]+)", out, re.M)
    return m.group(1) if m else None


def forget_neighbours(lab):
    """VF0 changed its MAC: VF1 must not answer to the old one (Linux sends
    no gratuitous ARP on a MAC change unless arp_notify is set)."""
    for vf in (0, 1):
        nsx(lab, "h1", vf, "ip neigh flush dev vfeth")


def test_vf_mac_change_decided_by_the_pf(lab2):
    with vfs_up(lab2, hosts=("h1",)):
        pf = pf_netdev(lab2, "h1")
        # no administrator MAC: the VF may choose its own; the switch follows
        r = nsx(lab2, "h1", 0, "ip link set dev vfeth address 02:aa:00:00:00:01", check=False)
        assert r.returncode == 0, r.stderr
        assert vf_mac_in_ip_link(lab2, pf, 0) == "02:aa:00:00:00:01"
        assert dev_view(lab2, pf)[0]["admin_mac"] == "0"
        assert ping(lab2, "h1", 0, addr("h1", 1)) == 3       # spoof check follows
        # the administrator pins a MAC: the VF is refused, nothing changes
        lab2.ssh("h1", f"ip link set {pf} vf 0 mac 02:bb:00:00:00:01")
        r = nsx(lab2, "h1", 0, "ip link set dev vfeth address 02:cc:00:00:00:01", check=False)
        assert r.returncode != 0 and "Operation not permitted" in r.stderr, (r.returncode, r.stderr)
        assert vf_mac_in_ip_link(lab2, pf, 0) == "02:bb:00:00:00:01"
        # the VF's netdev took on the administrator's MAC (device event) and
        # keeps passing traffic under the spoof check
        for _ in range(50):
            if mac_of(lab2, "h1", 0) == "02:bb:00:00:00:01":
                break
            time.sleep(0.1)
        assert mac_of(lab2, "h1", 0) == "02:bb:00:00:00:01"
        forget_neighbours(lab2)
        assert ping(lab2, "h1", 0, addr("h1", 1)) == 3
        assert "MAC change to 02:cc:00:00:00:01 refused" in lab2.ssh("h1", "dmesg").stdout
        # trusted: the VF may change it again
        lab2.ssh("h1", f"ip link set {pf} vf 0 trust on")
        r = nsx(lab2, "h1", 0, "ip link set dev vfeth address 02:cc:00:00:00:01", check=False)
        assert r.returncode == 0, r.stderr
        assert vf_mac_in_ip_link(lab2, pf, 0) == "02:cc:00:00:00:01"
        forget_neighbours(lab2)
        assert ping(lab2, "h1", 0, addr("h1", 1)) == 3
        # a multicast MAC never gets that far (the kernel refuses it)
        r = nsx(lab2, "h1", 0, "ip link set dev vfeth address 01:00:5e:00:00:01", check=False)
        assert r.returncode != 0


VLAN_UP = ("ip link add link vfeth name vfeth.{vid} type vlan id {vid} && "
           "ip addr add 10.78.{vid}.{host}/24 dev vfeth.{vid} && ip link set vfeth.{vid} up")


def test_vf_vlans_granted_limited_and_refused_under_a_port_vlan(lab2):
    with vfs_up(lab2, hosts=("h1",)):
        pf = pf_netdev(lab2, "h1")
        for vf in (0, 1):
            nsx(lab2, "h1", vf, "sh -c '" + VLAN_UP.format(vid=100, host=vf + 1) + "'")
        view = dev_view(lab2, pf)
        assert view[0]["vlan_filters"] == "1" and view[1]["vlan_filters"] == "1", view
        # tagged traffic in VLAN 100 between the two VFs
        r = nsx(lab2, "h1", 0, "ping -c 3 -i 0.3 -W 2 10.78.100.2", check=False)
        assert " 3 received" in r.stdout, r.stdout
        # a VLAN the PF did not grant to VF0: its tagged frames are dropped
        drops = stats(lab2, "h1", 0)["hw_tx_drop_vlan"]
        raw_send(lab2, "h1", 0, mac_of(lab2, "h1", 1), mac_of(lab2, "h1", 0), 5, vid=200)
        assert stats(lab2, "h1", 0)["hw_tx_drop_vlan"] - drops == 5
        # an untrusted VF may join 16 VLANs; the 17th is refused
        for vid in range(101, 116):
            nsx(lab2, "h1", 1, f"ip link add link vfeth name v{vid} type vlan id {vid}")
        assert dev_view(lab2, pf)[1]["vlan_filters"] == "16"
        r = nsx(lab2, "h1", 1, "ip link add link vfeth name v116 type vlan id 116", check=False)
        assert r.returncode != 0 and "No space left on device" in r.stderr, r.stderr
        # leaving a VLAN gives the filter back
        nsx(lab2, "h1", 1, "ip link del v115")
        assert dev_view(lab2, pf)[1]["vlan_filters"] == "15"
        # under a port VLAN the VF may not tag at all
        lab2.ssh("h1", f"ip link set {pf} vf 0 vlan 5")
        r = nsx(lab2, "h1", 0, "ip link add link vfeth name vfeth.200 type vlan id 200",
                check=False)
        assert r.returncode != 0 and "Operation not permitted" in r.stderr, r.stderr
        assert "port VLAN 5 is set" in lab2.ssh("h1", "dmesg").stdout


def group_frames(lab, vf_from, group, count):
    """Send `count` frames to multicast MAC `group` from VF `vf_from`."""
    raw_send(lab, "h1", vf_from, group, mac_of(lab, "h1", vf_from), count)


def test_vf_multicast_filter_allmulti_needs_trust(lab2):
    g1, g2 = "01:00:5e:01:02:03", "01:00:5e:01:02:04"
    with vfs_up(lab2, hosts=("h1",)):
        pf = pf_netdev(lab2, "h1")
        base = int(dev_view(lab2, pf)[1]["mc_count"])   # IPv4/IPv6 groups of the stack
        assert base >= 1
        nsx(lab2, "h1", 1, f"ip maddr add {g1} dev vfeth")
        for _ in range(50):             # the request goes from a work item
            if int(dev_view(lab2, pf)[1]["mc_count"]) == base + 1:
                break
            time.sleep(0.1)
        assert int(dev_view(lab2, pf)[1]["mc_count"]) == base + 1
        # (other multicast of the stacks, MLD and the like, may add to the
        # counters: hence lower bounds, and the other count stays below 10)
        s0 = stats(lab2, "h1", 1)
        group_frames(lab2, 0, g1, 10)   # joined: delivered
        s1 = stats(lab2, "h1", 1)
        assert s1["hw_rx_packets"] - s0["hw_rx_packets"] >= 10, (s0, s1)
        assert s1["hw_rx_filtered"] - s0["hw_rx_filtered"] < 10, (s0, s1)
        group_frames(lab2, 0, g2, 10)   # not joined: filtered by the adapter
        s1b = stats(lab2, "h1", 1)
        assert s1b["hw_rx_filtered"] - s1["hw_rx_filtered"] >= 10, (s1, s1b)
        assert s1b["hw_rx_packets"] - s1["hw_rx_packets"] < 10, (s1, s1b)
        s1 = s1b
        # all-multicast from an untrusted VF: refused, still filtered
        nsx(lab2, "h1", 1, "ip link set vfeth allmulticast on")
        assert eventually(lambda: "all-multicast refused: VF not trusted"
                          in lab2.ssh("h1", "dmesg").stdout)
        assert dev_view(lab2, pf)[1]["rx_mode"] == "0"
        group_frames(lab2, 0, g2, 10)
        s2 = stats(lab2, "h1", 1)
        assert s2["hw_rx_filtered"] - s1["hw_rx_filtered"] >= 10, (s1, s2)
        # trusted: granted on the next request; revoking trust revokes it
        lab2.ssh("h1", f"ip link set {pf} vf 1 trust on")
        nsx(lab2, "h1", 1, "sh -c 'ip link set vfeth allmulticast off; "
                           "ip link set vfeth allmulticast on'")
        assert eventually(lambda: dev_view(lab2, pf)[1]["rx_mode"] == "1")
        s2 = stats(lab2, "h1", 1)
        group_frames(lab2, 0, g2, 10)
        s3 = stats(lab2, "h1", 1)
        assert s3["hw_rx_filtered"] == s2["hw_rx_filtered"], (s2, s3)
        assert s3["hw_rx_packets"] - s2["hw_rx_packets"] >= 10, (s2, s3)
        lab2.ssh("h1", f"ip link set {pf} vf 1 trust off")
        time.sleep(0.5)
        group_frames(lab2, 0, g2, 10)
        s4 = stats(lab2, "h1", 1)
        assert s4["hw_rx_filtered"] - s3["hw_rx_filtered"] >= 10, (s3, s4)
        # the PF counted the requests it answered and refused
        pci = lab2.ssh("h1", f"basename $(readlink /sys/class/net/{pf}/device)").stdout.strip()
        mbx = lab2.ssh("h1", f"cat {PF_DBG}/{pci}/mbox").stdout
        served, refused = map(int, re.search(r"served (\d+) refused (\d+)", mbx).groups())
        assert served >= 4 and refused == 0, mbx
