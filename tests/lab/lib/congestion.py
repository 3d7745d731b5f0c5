"""Shared by the congestion lab tests (test_congestion.py): h1's uplink
with a line rate its VFs' iperf3 flows can fill, and the flows, pings and
counters measured through it. The VFs are those of lib.vf.vfs_up (h1 VF n
sends to h2 VF n: 10.77.0.1(n+1) -> 10.77.0.2(n+1)).

Why 12 Mbit/s: one VF-to-VF TCP flow under TCG reached 20-30 Mbit/s with no
line rate (docs/qos.md), so every flow can send more than its share and the
uplink stays congested.
"""
import json
import re

import pytest

from .pf import PF_ID
from .qos import RESET, ssh
from .vf import addr
from .wait import wait_tcp_listener

LINE_MBIT = 12
# TCP payload per byte the device counts: a full segment is 1448 bytes of
# payload (timestamps on) in a 1514-byte frame; the line rate also counts
# the wire's 24 bytes per frame (preamble, gap, FCS), a VF's tx_max and
# tx_share count the frame only (vswitch/src/qos_sched.c, adapter/src/
# dataplane.c shaper_take).
PER_WIRE = 1448 / 1538
PER_FRAME = 1448 / 1514
# Rate nodes the tests create: removed by reset() whatever happened.
NODES = ("tenant1", "tenant2")


class Uplink:
    """h1's PF (devlink instance dl, netdev dev) with VFs up."""

    def __init__(self, lab):
        self.lab = lab
        self.bdf = ssh(lab, f"lspci -D -n -d {PF_ID}").stdout.split()[0]
        self.dl = f"pci/{self.bdf}"
        self.dev = ssh(lab, f"ls /sys/bus/pci/devices/{self.bdf}/net").stdout.strip()
        self.dbg = f"/sys/kernel/debug/vfwarp_pf/{self.bdf}"

    def sh(self, cmd, host="h1", check=True):
        return ssh(self.lab, cmd, host=host, check=check)

    def reset(self):
        """The device's QoS defaults: no line rate, classes, app table and
        trust as after a PF reset (lib.qos.RESET), the VF leaves without
        rates under the root, no nodes; checked in the device."""
        d = self.dl
        leaves = "; ".join(f"devlink port function rate set {d}/{i} noparent; "
                           f"devlink port function rate set {d}/{i} tx_share 0 tx_max 0 "
                           "tx_priority 0 tx_weight 0" for i in (1, 2))
        nodes = "; ".join(f"devlink port function rate del {d}/{n} 2>/dev/null"
                          for n in NODES)
        out = self.sh(f"{leaves}; {nodes}\n{RESET % {'bdf': self.bdf}}\ncat {self.dbg}/qos").stdout
        assert "node " not in out, out
        for i in (1, 2):
            assert f"leaf {i} tx_share 0 tx_max 0 tx_priority 0 tx_weight 1 parent 0" in out, out

    def line(self, mbit=LINE_MBIT):
        self.sh(f"devlink dev param set {self.dl} name line_rate_kbps value {mbit * 1000} "
                "cmode runtime")

    def counters(self):
        """The device's counters: per class (debugfs qos_tc_stats) and per
        VF (the VF netdev's ethtool -S hw_* counters)."""
        out = self.sh(f"cat {self.dbg}/qos_tc_stats; for i in 0 1; do echo @@vf$i; "
                      "ip netns exec vf$i ethtool -S vfeth; done").stdout
        tcs, *vfs = out.split("@@vf")
        c = {"tc": {}, "vf": {}}
        for ln in tcs.strip().splitlines():
            f = ln.split()
            c["tc"][int(f[1])] = {k: int(v) for k, v in zip(f[2::2], f[3::2])}
        for v in vfs:
            c["vf"][int(v[0])] = {k: int(n) for k, n in
                                  re.findall(r"^\s+(hw_\w+): (\d+)$", v, re.M)}
        return c


def delta(a, b):
    """Counters b - a (nested dicts of ints)."""
    return {k: delta(a[k], v) if isinstance(v, dict) else v - a[k] for k, v in b.items()}


def servers(lab, vfs, secs=60):
    """One-shot iperf3 servers on h2's VFs `vfs`."""
    for vf in vfs:
        ssh(lab, f"ip netns exec vf{vf} setsid timeout {secs} iperf3 -s -1 "
                 f">/tmp/iperf3-s{vf}.log 2>&1 < /dev/null &", host="h2")
    for vf in vfs:
        wait_tcp_listener(lambda c: ssh(lab, f"ip netns exec vf{vf} {c}", host="h2", check=False),
                          5201, f"cat /tmp/iperf3-s{vf}.log", what=f"h2 vf{vf}: iperf3 -s")


CLIENT = "ip netns exec vf{vf} iperf3 -c {dst} -t {t} -O 2 {x} -J > /tmp/iperf3-c{vf}.json"


def received(lab, vf):
    res = json.loads(ssh(lab, f"cat /tmp/iperf3-c{vf}.json").stdout)
    return res["end"]["sum_received"]["bits_per_second"] / 1e6


def flows(lab, extra=("", ""), t=10):
    """iperf3 from VF 0 and VF 1 of h1 to VF 0 and VF 1 of h2 at once, t s
    after 2 s of warm-up (-O 2); Mbit/s received of each."""
    servers(lab, (0, 1))
    ssh(lab, " & ".join(CLIENT.format(vf=vf, dst=addr("h2", vf), t=t, x=extra[vf])
                        for vf in (0, 1)) + "; wait")
    return [received(lab, vf) for vf in (0, 1)]


PING_RTT = re.compile(r"icmp_seq=(\d+) ttl=\d+ time=([\d.]+) ms")


def ping_rtts(lab, count, tos=0, vf=0):
    """`count` pings from h1 VF vf to h2 VF vf, 0.2 s apart, with ToS byte
    `tos`; the round-trip times in ms (every ping must come back)."""
    out = ssh(lab, f"ip netns exec vf{vf} ping -n -c {count} -i 0.2 -W 5 -Q {tos} "
                   f"{addr('h2', vf)}", check=False).stdout
    rtts = [float(t) for _, t in PING_RTT.findall(out)]
    if len(rtts) != count:      # pytest.fail: not the xfail tests' finding
        pytest.fail(f"{count - len(rtts)} of {count} pings lost:\n{out}")
    return rtts
