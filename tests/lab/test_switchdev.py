"""Switchdev mode of the adapter's eswitch (issue 16, docs/switchdev.md):
`devlink dev eswitch set ... mode switchdev` gives every VF a representor
netdev (named by udev from its devlink port: enp1s0rN), the VFs'
traffic that nothing offloaded forwards goes through the representors
(the slow path), and a Linux bridge of representors and the uplink then
forwards VF-to-VF and VF-to-wire traffic, and programs what it learned into
the adapter's FDB (bridge offload) so that later frames bypass the host. tc
flower filters with skip_sw on a representor become rules in the adapter.
Legacy mode forwards in the adapter as before once switched back.

Modelled on the kernel's netdevsim switchdev selftests: mode on and off
with VFs present, representors following the VFs, traffic through them.
Runs on the session's lab2; h2 stays in legacy mode as the remote peer.
Every test leaves the hosts without the modules, also on failure.
"""
import json
import re
import time

import pytest

from lib.perftest import RPING_PORT
from lib.switchdev import (BRIDGE, UDP_RECV, UDP_SEND, filters, hw_packets, mode, pf_dev, reprs,
                            set_mode)
from lib.vf import addr, nsx, ping, vfs_up
from lib.wait import wait_rdma_listener, wait_tcp_listener


def test_switchdev_on_and_off_representors_follow_vfs(lab2):
    with vfs_up(lab2, hosts=("h1",)):
        bdf, pf = pf_dev(lab2)
        assert mode(lab2, bdf) == "legacy"
        assert reprs(lab2) == {}

        set_mode(lab2, bdf, "switchdev")
        assert mode(lab2, bdf) == "switchdev"
        r = reprs(lab2)
        assert sorted(r) == ["pf0vf0", "pf0vf1"], list(r)
        names = {p: l["ifname"] for p, l in r.items()}
        # udev's predictable names, from the PF's path and the port
        # (systemd 257 on the hosts: enp1s0r0 for VF 0's representor)
        for p, name in names.items():
            udev = lab2.ssh("h1", f"udevadm info -q property /sys/class/net/{name}").stdout
            assert f"ID_NET_NAME_PATH={name}\n" in udev, udev
            assert name.startswith(pf) and name.endswith(p[len("pf0vf"):]), names
        # one switch: every representor reports the same switch ID
        assert len({l["phys_switch_id"] for l in r.values()}) == 1, r
        info = lab2.ssh("h1", f"devlink -j port show pci/{bdf}/1").stdout
        port = json.loads(info)["port"][f"pci/{bdf}/1"]
        assert port["netdev"] == names["pf0vf0"] and port["flavour"] == "pcivf", port
        # ethtool: the representor's driver and counters, the VF's port too
        et = lab2.ssh("h1", f"ethtool -i {names['pf0vf0']}; ethtool -S {names['pf0vf0']}").stdout
        assert "driver: vfwarp_pf" in et and "vf_tx_packets:" in et, et
        # setting the mode in force again changes nothing
        set_mode(lab2, bdf, "switchdev")
        assert {p: l["ifname"] for p, l in reprs(lab2).items()} == names

        # back to legacy: the representors go; on again: the same names
        set_mode(lab2, bdf, "legacy")
        assert mode(lab2, bdf) == "legacy" and reprs(lab2) == {}
        set_mode(lab2, bdf, "switchdev")
        assert {p: l["ifname"] for p, l in reprs(lab2).items()} == names

        # VFs removed and created in switchdev mode: representors follow
        lab2.ssh("h1", f"echo 0 > /sys/bus/pci/devices/{bdf}/sriov_numvfs && udevadm settle -t 20")
        assert reprs(lab2) == {}
        lab2.ssh("h1", f"echo 3 > /sys/bus/pci/devices/{bdf}/sriov_numvfs && udevadm settle -t 20")
        assert sorted(reprs(lab2)) == ["pf0vf0", "pf0vf1", "pf0vf2"]
        assert mode(lab2, bdf) == "switchdev"
        # vfs_up's clean-up unloads the driver in switchdev mode: removal
        # puts the device back to legacy and takes the representors along
        dmesg = lab2.ssh("h1", "dmesg").stdout
        assert "WARNING" not in dmesg and "BUG" not in dmesg, dmesg[-3000:]


def test_slow_path_through_representors_and_a_bridge(lab2):
    with vfs_up(lab2):
        bdf, pf = pf_dev(lab2)
        # legacy: the adapter forwards VF0 -> VF1 itself
        assert ping(lab2, "h1", 0, addr("h1", 1)) == 3
        set_mode(lab2, bdf, "switchdev")
        r = reprs(lab2)
        names = [r["pf0vf0"]["ifname"], r["pf0vf1"]["ifname"]]
        try:
            # switchdev, nothing offloaded, representors not bridged: the
            # VFs' frames end at their representors, nothing passes
            # (the representors share the PF netdev's rings: it must be up)
            lab2.ssh("h1", f"ip link set {pf} up; ip link set {names[0]} up; "
                           f"ip link set {names[1]} up")
            before = reprs(lab2)["pf0vf0"]["stats64"]["rx"]["packets"]
            assert ping(lab2, "h1", 0, addr("h1", 1), count=2) == 0
            assert reprs(lab2)["pf0vf0"]["stats64"]["rx"]["packets"] > before

            # a bridge of the representors and the uplink (the PF netdev)
            lab2.ssh("h1", BRIDGE % {"ports": " ".join(names + [pf])})
            assert ping(lab2, "h1", 0, addr("h1", 1)) == 3          # VF -> VF
            assert ping(lab2, "h1", 0, addr("h2", 0)) == 3          # VF -> wire
            assert ping(lab2, "h2", 1, addr("h1", 1)) == 3          # wire -> VF
            st = reprs(lab2)
            for p in ("pf0vf0", "pf0vf1"):
                s = st[p]["stats64"]
                # the first frames went through the host: slow path (how
                # many before the bridge's learned entries reach the
                # adapter depends on timing: at least one each way)
                assert s["rx"]["packets"] >= 1 and s["tx"]["packets"] >= 1, (p, s)
            # bridge offload: the MACs the bridge learned on representors
            # and on the uplink are in the adapter's FDB ("offload"), so
            # from now on VF traffic no longer reaches the representors
            # (the remote VF's MAC, learned on the uplink, too: until its
            # entry is in the adapter, frames to it still take the slow
            # path; the entries reach the adapter from a work queue)
            want = [vf_mac(lab2, "h1", 0), vf_mac(lab2, "h1", 1), vf_mac(lab2, "h2", 0)]
            wait_offloaded(lab2, want)
            assert ping(lab2, "h1", 0, addr("h1", 1), count=10) == 10
            assert ping(lab2, "h1", 0, addr("h2", 0), count=10) == 10
            after = reprs(lab2)
            for p in ("pf0vf0", "pf0vf1"):
                grew = after[p]["stats64"]["rx"]["packets"] - st[p]["stats64"]["rx"]["packets"]
                print(f"\n{p}: RX grew by {grew} during 40 forwarded frames")
                assert grew < 5, (p, st[p]["stats64"], after[p]["stats64"])
        finally:
            lab2.ssh("h1", "ip link del br0", check=False)
        # legacy again: the adapter forwards, no representor left
        set_mode(lab2, bdf, "legacy")
        assert reprs(lab2) == {}
        assert ping(lab2, "h1", 0, addr("h1", 1)) == 3
        assert ping(lab2, "h1", 0, addr("h2", 0)) == 3


def test_teardown_with_rules_and_a_bridge(lab2):
    """Fault cases: switchdev -> legacy with offloaded rules present (the
    device drops them: legacy forwarding is unaffected), VFs removed while
    rules are on their representors, and the driver unloaded while its PF
    netdev is in a bridge: no WARN/BUG, the host alive."""
    with vfs_up(lab2, hosts=("h1",)):
        bdf, pf = pf_dev(lab2)
        drop_icmp = ("tc qdisc add dev {r} clsact; tc filter add dev {r} ingress protocol ip "
                     "pref 10 flower skip_sw ip_proto icmp action drop")
        set_mode(lab2, bdf, "switchdev")
        r = reprs(lab2)
        r0, r1 = r["pf0vf0"]["ifname"], r["pf0vf1"]["ifname"]
        lab2.ssh("h1", BRIDGE % {"ports": f"{r0} {r1} {pf}"})
        lab2.ssh("h1", drop_icmp.format(r=r0) + f"; tc qdisc add dev {r1} clsact; "
                       f"tc filter add dev {r1} ingress pref 20 flower skip_sw action mirred "
                       f"egress redirect dev {r0}")
        assert ping(lab2, "h1", 0, addr("h1", 1), count=2) == 0
        # to legacy with the rules in place: they are gone with the mode
        set_mode(lab2, bdf, "legacy")
        assert reprs(lab2) == {}
        assert ping(lab2, "h1", 0, addr("h1", 1)) == 3
        # switchdev again, a rule, then the VFs removed under it
        set_mode(lab2, bdf, "switchdev")
        r0 = reprs(lab2)["pf0vf0"]["ifname"]
        lab2.ssh("h1", drop_icmp.format(r=r0))
        lab2.ssh("h1", f"echo 0 > /sys/bus/pci/devices/{bdf}/sriov_numvfs && udevadm settle -t 20")
        assert reprs(lab2) == {}
        lab2.ssh("h1", f"echo 2 > /sys/bus/pci/devices/{bdf}/sriov_numvfs && udevadm settle -t 20")
        assert sorted(reprs(lab2)) == ["pf0vf0", "pf0vf1"]
        # unload with the PF netdev still in br0
        lab2.ssh("h1", "rmmod vfwarp_rdma vfwarp_vf; rmmod vfwarp_pf", timeout=300)
        out = lab2.ssh("h1", "ip -j link show master br0; dmesg").stdout
        assert "WARNING" not in out and "BUG" not in out, out[-3000:]
        lab2.ssh("h1", "ip link del br0")


def vf_mac(lab, host, vf):
    return lab.ssh(host, f"ip netns exec vf{vf} cat /sys/class/net/vfeth/address").stdout.strip()


def wait_offloaded(lab, want, vlan=None, timeout=15):
    """Waits until br0 on h1 shows each MAC of `want` (in `vlan` if given)
    as offloaded. Entries reach the adapter from a work queue, and the
    remote VF's MAC is only learned on the uplink when its first reply
    arrives, so a check right after the pings can come too early."""
    deadline = time.monotonic() + timeout
    while True:
        fdb = json.loads(lab.ssh("h1", "bridge -j fdb show br br0").stdout)
        got = {f["mac"] for f in fdb if "offload" in f.get("flags", [])
               and (vlan is None or f.get("vlan") == vlan)}
        if all(m in got for m in want) or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    for mac in want:
        assert mac in got, (mac, vlan, fdb)


def test_vlan_aware_bridge_offload(lab2):
    """A VLAN-aware bridge (vlan_filtering 1): the ports' VLANs go into the
    adapter, so FDB entries learned in the bridge's VLAN match the VFs'
    untagged frames there and forward in the adapter; moving both VFs'
    representors to VLAN 10 keeps them talking (in VLAN 10) and cuts them
    off the wire, whose port stays in VLAN 1."""
    with vfs_up(lab2):
        bdf, pf = pf_dev(lab2)
        set_mode(lab2, bdf, "switchdev")
        r = reprs(lab2)
        r0, r1 = r["pf0vf0"]["ifname"], r["pf0vf1"]["ifname"]
        try:
            lab2.ssh("h1", (BRIDGE % {"ports": f"{r0} {r1} {pf}"}).replace(
                "type bridge\n", "type bridge vlan_filtering 1\n"))
            assert ping(lab2, "h1", 0, addr("h1", 1)) == 3
            assert ping(lab2, "h1", 0, addr("h2", 0)) == 3
            # both VFs and h2's VF0, in the bridge's VLAN 1
            wait_offloaded(lab2, [vf_mac(lab2, "h1", 0), vf_mac(lab2, "h1", 1),
                                  vf_mac(lab2, "h2", 0)], vlan=1)
            st = reprs(lab2)
            assert ping(lab2, "h1", 0, addr("h1", 1), count=10) == 10
            after = reprs(lab2)
            grew = [after[p]["stats64"]["rx"]["packets"] - st[p]["stats64"]["rx"]["packets"]
                    for p in ("pf0vf0", "pf0vf1")]
            print(f"\nVLAN-aware bridge: representor RX grew by {grew} during 20 frames")
            assert max(grew) < 5, (st, after)
            # both VFs to VLAN 10 (PVID, untagged); the uplink stays in VLAN 1
            lab2.ssh("h1", "; ".join(f"bridge vlan add dev {x} vid 10 pvid untagged; "
                                     f"bridge vlan del dev {x} vid 1" for x in (r0, r1)))
            assert ping(lab2, "h1", 0, addr("h1", 1)) == 3
            assert ping(lab2, "h1", 0, addr("h2", 0), count=2) == 0
        finally:
            lab2.ssh("h1", "ip link del br0", check=False)
        set_mode(lab2, bdf, "legacy")
        dmesg = lab2.ssh("h1", "dmesg").stdout
        assert "WARNING" not in dmesg and "BUG" not in dmesg, dmesg[-3000:]

# --- tc flower offload (hw 2.3 rules) ------------------------------------

def udp_count(lab, host, rx_vf, tx_vf, dst, port, n=20):
    """Datagrams VF rx_vf receives on `port` of the `n` VF tx_vf sends to dst."""
    lab.ssh(host, f"cat > /tmp/urecv.py <<'EOF'\n{UDP_RECV}\nEOF\n"
                  f"cat > /tmp/usend.py <<'EOF'\n{UDP_SEND}\nEOF")
    lab.ssh(host, f"ip netns exec vf{rx_vf} setsid python3 /tmp/urecv.py {port} 6 "
                  f">/tmp/urecv.out 2>&1 < /dev/null &")
    lab.ssh(host, "sleep 1")
    lab.ssh(host, f"ip netns exec vf{tx_vf} python3 /tmp/usend.py {dst} {port} {n}")
    lab.ssh(host, "for i in $(seq 80); do pgrep -f urecv.py >/dev/null || break; sleep 0.1; done")
    return int(lab.ssh(host, "cat /tmp/urecv.out").stdout.strip() or -1)


def tc_class_sent(lab, host="h1"):
    """{class: frames sent} at the uplink (the PF driver's debugfs)."""
    out = lab.ssh(host, "cat /sys/kernel/debug/vfwarp_pf/*/qos_tc_stats").stdout
    return {int(m.group(1)): int(m.group(2))
            for m in re.finditer(r"^tc (\d+) .*sent_pkts (\d+)", out, re.M)}


# The module's last tests share one bridged h1 (set up once, torn down at
# the end of the module): tests with their own vfs_up() must come before.
class Bridged:
    """h1 in switchdev mode with its representors and uplink bridged."""

    def __init__(self, lab, bdf, pf, r0, r1):
        self.lab, self.bdf, self.pf, self.r0, self.r1 = lab, bdf, pf, r0, r1


@pytest.fixture(scope="module")
def bridged(lab2):
    """VFs on both hosts (h2 in legacy mode, the remote peer), h1 in
    switchdev mode with br0 = its two representors + the uplink; back to
    legacy and no modules afterwards, also on failure."""
    with vfs_up(lab2):
        bdf, pf = pf_dev(lab2)
        set_mode(lab2, bdf, "switchdev")
        r = reprs(lab2)
        b = Bridged(lab2, bdf, pf, r["pf0vf0"]["ifname"], r["pf0vf1"]["ifname"])
        try:
            lab2.ssh("h1", BRIDGE % {"ports": f"{b.r0} {b.r1} {pf}"})
            yield b
        finally:
            lab2.ssh("h1", "ip link del br0", check=False, timeout=900)
            set_mode(lab2, bdf, "legacy", check=False)
        dmesg = lab2.ssh("h1", "dmesg").stdout
        assert "WARNING" not in dmesg and "BUG" not in dmesg, dmesg[-3000:]


def test_tc_flower_offload(bridged):
    lab2, bdf, r0, r1 = bridged.lab, bridged.bdf, bridged.r0, bridged.r1
    try:
        lab2.ssh("h1", f"tc qdisc add dev {r0} clsact")
        assert ping(lab2, "h1", 0, addr("h1", 1)) == 3

        # 1. drop VF0's UDP to ports 5000-5999, in the adapter only
        lab2.ssh("h1", f"tc filter add dev {r0} ingress protocol ip pref 10 flower "
                       "skip_sw ip_proto udp dst_port 5000-5999 action drop")
        assert udp_count(lab2, "h1", 1, 0, addr("h1", 1), 5500) == 0
        assert udp_count(lab2, "h1", 1, 0, addr("h1", 1), 7000) == 20
        f = filters(lab2, r0)
        assert len(f) == 1 and f[0]["options"].get("in_hw") and f[0]["options"].get("skip_sw"), f
        assert hw_packets(f[0]) == 20, f

        # 2. VF0 may reach one peer subnet only: h2's VF0 (/32), the
        # rest of IPv4 is dropped (ARP still passes)
        lab2.ssh("h1", f"tc filter add dev {r0} ingress protocol ip pref 20 flower skip_sw "
                       f"dst_ip {addr('h2', 0)}/32 action pass; "
                       f"tc filter add dev {r0} ingress protocol ip pref 30 flower skip_sw "
                       "action drop")
        assert ping(lab2, "h1", 0, addr("h2", 0)) == 3
        assert ping(lab2, "h1", 0, addr("h1", 1), count=2) == 0
        assert ping(lab2, "h1", 0, addr("h2", 1), count=2) == 0
        lab2.ssh("h1", f"tc filter del dev {r0} ingress pref 30")
        assert ping(lab2, "h1", 0, addr("h1", 1)) == 3

        # 3. mirror: VF0's pings to h2's VF1 reach h2 and a copy VF1
        mac1 = lab2.ssh("h1", "ip netns exec vf1 cat /sys/class/net/vfeth/address").stdout.strip()
        rx1 = int(lab2.ssh("h1", "ip netns exec vf1 ethtool -S vfeth | "
                                 "awk '/hw_rx_packets/{print $2}'").stdout)
        lab2.ssh("h1", f"tc filter add dev {r0} ingress protocol ip pref 6 flower skip_sw "
                       f"dst_ip {addr('h2', 1)}/32 action mirred egress mirror dev {r1}")
        assert ping(lab2, "h1", 0, addr("h2", 1), count=5) == 5
        rx1b = int(lab2.ssh("h1", "ip netns exec vf1 ethtool -S vfeth | "
                                  "awk '/hw_rx_packets/{print $2}'").stdout)
        assert rx1b - rx1 >= 5, (rx1, rx1b, mac1)
        lab2.ssh("h1", f"tc filter del dev {r0} ingress pref 6")

        # 5. set a class: VF0's traffic to h2's VF0 in class 5 (skbedit
        # priority 5 -> prio-tc), counted at the uplink (a line rate that
        # schedules without limiting)
        lab2.ssh("h1", f"devlink dev param set pci/{bdf} name line_rate_kbps value 1000000 "
                       "cmode runtime")
        before = tc_class_sent(lab2)
        lab2.ssh("h1", f"tc filter add dev {r0} ingress protocol ip pref 7 flower skip_sw "
                       f"dst_ip {addr('h2', 0)}/32 action skbedit priority 5")
        assert ping(lab2, "h1", 0, addr("h2", 0), count=10) == 10
        after = tc_class_sent(lab2)
        assert after[5] - before[5] >= 10, (before, after)
        lab2.ssh("h1", f"tc filter del dev {r0} ingress pref 7")

        # 4. police VF0 to h2 at 2 Mbit/s: iperf3 UDP offered at 6 Mbit/s
        # arrives at 2 Mbit/s +-10% (payload 1400 of 1442 frame bytes)
        lab2.ssh("h1", f"tc filter add dev {r0} ingress protocol ip pref 8 flower skip_sw "
                       f"dst_ip {addr('h2', 0)}/32 ip_proto udp action police rate 2mbit "
                       "burst 16k conform-exceed drop/pipe")
        lab2.ssh("h2", "ip netns exec vf0 setsid timeout 60 iperf3 -s -1 "
                       ">/tmp/iperf3-pol.log 2>&1 < /dev/null &")
        wait_tcp_listener(lambda c: nsx(lab2, "h2", 0, c, check=False), 5201,
                          "cat /tmp/iperf3-pol.log", what="h2 vf0: iperf3 -s")
        out = nsx(lab2, "h1", 0, f"timeout 60 iperf3 -u -b 6M -l 1400 -t 6 -J "
                                 f"-c {addr('h2', 0)}", timeout=120).stdout
        rcv = json.loads(out)["end"]["sum_received"]   # the server's report
        got = rcv["bits_per_second"] / 1e6
        print(f"\npoliced at 2 Mbit/s: {got:.2f} Mbit/s received of 6 offered")
        assert 1.8 <= got <= 2.2, rcv
        lab2.ssh("h1", f"tc filter del dev {r0} ingress pref 8; devlink dev param set "
                       f"pci/{bdf} name line_rate_kbps value 0 cmode runtime")

        # 7. what the switch cannot match is refused, nothing changes
        before = filters(lab2, r0)
        res = lab2.ssh("h1", f"tc filter add dev {r0} ingress protocol ip pref 40 flower "
                             "skip_sw ip_ttl 5 action drop", check=False)
        assert res.returncode != 0
        assert "TTL and ECN cannot be matched" in res.stderr, res.stderr
        res = lab2.ssh("h1", f"tc filter add dev {r0} ingress protocol ip pref 40 chain 3 "
                             "flower skip_sw action drop", check=False)
        assert res.returncode != 0 and "chain 0" in res.stderr, res.stderr
        shape = lambda fs: [(x.get("pref"), x["options"]["handle"], x["options"].get("keys"),
                             [a["kind"] for a in x["options"]["actions"]]) for x in fs]
        assert shape(filters(lab2, r0)) == shape(before)
        assert ping(lab2, "h1", 0, addr("h2", 0)) == 3

        # 6. 4096 rules on one representor install and take effect
        lab2.ssh("h1", f"tc filter del dev {r0} ingress; "
                       f"for p in $(seq 0 4095); do echo filter add dev {r0} ingress "
                       "protocol ip pref 100 flower skip_sw ip_proto udp "
                       "dst_port $((20000 + p)) action drop; done > /tmp/rules.tc")
        t = lab2.ssh("h1", "s=$(date +%s.%N); tc -batch /tmp/rules.tc; e=$(date +%s.%N); "
                           "awk \"BEGIN{print $e - $s}\"", timeout=900).stdout.strip()
        print(f"\n4096 flower rules installed in {float(t):.1f} s")
        n = lab2.ssh("h1", f"tc filter show dev {r0} ingress | grep -c in_hw").stdout.strip()
        assert int(n) == 4096
        assert udp_count(lab2, "h1", 1, 0, addr("h1", 1), 24095) == 0
        assert udp_count(lab2, "h1", 1, 0, addr("h1", 1), 19999) == 20
    finally:
        lab2.ssh("h1", f"tc qdisc del dev {r0} clsact", check=False, timeout=900)


def rping(lab, count=5, secs=40):
    """rping h1 VF0 (client) -> h2 VF0 (server); the client's exit status
    and output. Both sides bounded by timeout."""
    ip = addr("h2", 0)
    lab.ssh("h2", "pkill -x rping; rm -f /tmp/rping-sd.log", check=False)
    lab.ssh("h2", f"ip netns exec vf0 setsid timeout {secs + 10} rping -s -a {ip} -C {count} "
                  "-v >/tmp/rping-sd.log 2>&1 < /dev/null &")
    wait_rdma_listener(lambda c: lab.ssh("h2", c, check=False), RPING_PORT,
                       "cat /tmp/rping-sd.log", ip=ip, what="h2 vf0: rping -s")
    r = nsx(lab, "h1", 0, f"timeout {secs} rping -c -a {ip} -C {count} -v -V", check=False,
            timeout=secs + 30)
    lab.ssh("h2", "pkill -x rping", check=False)
    return r.returncode, r.stdout + r.stderr


def test_flower_rule_binds_the_adapters_rdma_traffic(bridged):
    """The VF's iWARP connections are the adapter's own TCP, not the guest's,
    but they enter the switch as the VF's frames: a drop rule on rping's
    port on the VF's representor stops an rping, removing it lets the next
    one pass."""
    lab2, r0 = bridged.lab, bridged.r0
    try:
        assert ping(lab2, "h1", 0, addr("h2", 0)) == 3
        rc, out = rping(lab2)
        assert rc == 0, out
        lab2.ssh("h1", f"tc qdisc add dev {r0} clsact; tc filter add dev {r0} ingress "
                       "protocol ip pref 10 flower skip_sw ip_proto tcp dst_port 7174 "
                       "action drop")
        rc, out = rping(lab2, secs=25)
        assert rc != 0, out
        f = filters(lab2, r0)
        assert hw_packets(f[0]) >= 1, f          # the SYN(s) dropped
        lab2.ssh("h1", f"tc qdisc del dev {r0} clsact")
        rc, out = rping(lab2)
        assert rc == 0, out
    finally:
        lab2.ssh("h1", f"tc qdisc del dev {r0} clsact", check=False)


def test_flower_vlan_push_and_pop(bridged):
    """tc vlan push on VF0's representor and vlan pop on the uplink, both
    skip_sw (hardware interface 2.4): h1's VF0 talks untagged in 10.78.0.0/24,
    h2's VF0 answers only on a VLAN 10 subinterface (arp_ignore on its
    untagged netdev, so untagged frames get no answer). VF0's frames leave
    h1 tagged 10 (push) and the tagged answers reach VF0 untagged (pop):
    the ping passes only with both; 802.1ad push is refused with a message."""
    lab2, r0, pf = bridged.lab, bridged.r0, bridged.pf
    mine, peer = "10.78.0.11", "10.78.0.21"
    try:
        nsx(lab2, "h1", 0, f"ip addr add {mine}/24 dev vfeth")
        nsx(lab2, "h2", 0, f"sh -c 'sysctl -qw net.ipv4.conf.vfeth.arp_ignore=1 && "
                           f"ip link add link vfeth name vfeth.10 type vlan id 10 && "
                           f"ip addr add {peer}/24 dev vfeth.10 && ip link set vfeth.10 up'")
        lab2.ssh("h1", f"tc qdisc add dev {r0} clsact; tc qdisc add dev {pf} clsact")
        assert ping(lab2, "h1", 0, peer, count=1) == 0      # untagged: no answer

        res = lab2.ssh("h1", f"tc filter add dev {r0} ingress protocol all pref 10 flower "
                             "skip_sw action vlan push id 10 protocol 802.1ad", check=False)
        assert res.returncode != 0 and "802.1Q" in res.stderr, res.stderr
        assert filters(lab2, r0) == []
        lab2.ssh("h1", f"tc filter add dev {r0} ingress protocol all pref 10 flower skip_sw "
                       "action vlan push id 10 priority 3; "
                       f"tc filter add dev {pf} ingress protocol 802.1Q pref 10 flower skip_sw "
                       "vlan_id 10 action vlan pop")
        assert ping(lab2, "h1", 0, peer, count=3) == 3
        push, pop = filters(lab2, r0), filters(lab2, pf)
        assert push[0]["options"].get("in_hw") and pop[0]["options"].get("in_hw"), (push, pop)
        assert hw_packets(push[0]) >= 3 and hw_packets(pop[0]) >= 3, (push, pop)
        # h2's VLAN 10 device is what received them: its RX counted them
        rx = json.loads(nsx(lab2, "h2", 0, "ip -j -s link show vfeth.10").stdout)
        assert rx[0]["stats64"]["rx"]["packets"] >= 3, rx
    finally:
        lab2.ssh("h1", f"tc qdisc del dev {r0} clsact; tc qdisc del dev {pf} clsact", check=False)
        nsx(lab2, "h1", 0, f"ip addr del {mine}/24 dev vfeth", check=False)
        nsx(lab2, "h2", 0, "sh -c 'ip link del vfeth.10; "
                           "sysctl -qw net.ipv4.conf.vfeth.arp_ignore=0'", check=False)
