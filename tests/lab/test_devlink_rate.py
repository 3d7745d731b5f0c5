"""devlink on the PF (issue 17, and the instance/ports issue 16 builds on):
the devlink instance and its ports as VFs come and go, the legacy-only
eswitch, devlink rate leaves and nodes (docs/qos.md) set, read back and
refused, `ip link` and devlink agreeing on a VF's rates, the uplink's line
rate (devlink param line_rate_kbps), and one congestion test: two VFs with
3:1 weights share a line rate iperf3 can fill under TCG.

"Nothing changed" is checked on both sides: devlink's view
(`devlink -j port function rate show`, the line rate param, `ip -j link`)
and the device's, read with the QoS GET admin commands through the
driver's debugfs file `qos`.

Runs on h1 of the session's lab2 (the congestion test also on h2); every
test leaves the hosts without the modules, also on failure.
"""
import contextlib
import json
import re
import time

from vfwarp_lab.paths import guest_share_dir

from vf_env import addr, require_modules, vfs_up

PF_ID = "1234:f0a0"
HOST = "h1"
MOD = "/mnt/vfwarp/modules/vfwarp_pf.ko"
UPLINK = 65535
MBIT = 125000  # bytes/s: devlink rates are bytes/s, ip link's Mbit/s


def ssh(lab, cmd, check=True, host=HOST):
    return lab.ssh(host, cmd, check=check, timeout=600)


class Pf:
    def __init__(self, lab, bdf, dev):
        self.lab, self.bdf, self.dev = lab, bdf, dev
        self.dl = f"pci/{bdf}"
        self.last = None    # the state after the last command run

    def sh(self, cmd, check=True):
        return ssh(self.lab, cmd, check=check)

    def numvfs(self, n):
        """Set NumVFs (through 0); the state then."""
        return self.ok(f"echo 0 > /sys/bus/pci/devices/{self.bdf}/sriov_numvfs && "
                       f"{{ [ {n} = 0 ] || echo {n} > /sys/bus/pci/devices/{self.bdf}/sriov_numvfs; }}")

    # After each command, in the same ssh session (one costs 2-3 s on a
    # loaded machine): its status and stderr, then every view of the QoS
    # state: devlink's, ip link's and the device's.
    STEP = r"""
%(cmd)s 2>/tmp/dlerr; rc=$?
echo "@@step"; echo "@@rc $rc"; echo "@@err"; cat /tmp/dlerr
echo "@@rates"; devlink -j port function rate show
echo "@@line"; devlink -j dev param show %(dl)s name line_rate_kbps
echo "@@vfs"; ip -j link show %(dev)s
echo "@@qos"; cat /sys/kernel/debug/vfwarp_pf/%(bdf)s/qos
echo "@@ports"; devlink -j port show %(dl)s
"""

    def run_many(self, cmds):
        """Run each command; for each, (rc, stderr, state) with state the QoS
        state after it."""
        out = self.sh("".join(self.STEP % {"cmd": c, "dl": self.dl, "dev": self.dev,
                                           "bdf": self.bdf} for c in cmds)).stdout
        res = []
        for step in out.split("@@step\n")[1:]:
            parts = dict(re.findall(r"^@@(\w+)(.*?)(?=^@@|\Z)", step, re.M | re.S))
            rates = {k.rsplit("/", 1)[1]: v for k, v in
                     json.loads(parts["rates"])["rate"].items()}
            line = json.loads(parts["line"])["param"][self.dl][0]["values"][0]["value"]
            vfs = {v["vf"]: (v["rate"]["min_tx"], v["rate"]["max_tx"])
                   for v in json.loads(parts["vfs"])[0].get("vfinfo_list", [])}
            ports = {int(k.rsplit("/", 1)[1]): v for k, v in
                     json.loads(parts["ports"])["port"].items()}
            res.append((int(parts["rc"]), parts["err"].strip(),
                        {"rates": rates, "line_kbps": line, "vfs": vfs,
                         "device": parse_qos(parts["qos"]), "ports": ports}))
        assert len(res) == len(cmds), out
        self.last = res[-1][2]
        return res

    def state(self):
        return self.run_many([":"])[0][2]

    def ok(self, *cmds):
        """Each command succeeds; the state after the last."""
        for c, (rc, err, _) in zip(cmds, self.run_many(cmds)):
            assert rc == 0, f"{c}: {err}"
        return self.last

    def refused(self, *cases):
        """Each (command, message): fails with `message` in its stderr and
        changes nothing, in devlink, ip link or the device."""
        before = self.last or self.state()
        for (c, msg), (rc, err, after) in zip(cases, self.run_many([c for c, _ in cases])):
            assert rc != 0, f"{c}: accepted"
            assert msg in err, f"{c}: {err!r}"
            assert after == before, f"{c} changed the state:\n{before}\n{after}"


def parse_qos(text):
    """The driver's debugfs qos: line rate, leaves and nodes from the device."""
    st = {"line_bps": None, "leaf": {}, "node": {}}
    for ln in text.strip().splitlines():
        f = ln.split()
        if f[0] == "line_rate_bps":
            st["line_bps"] = int(f[1])
        else:
            assert f[2] != "error", ln
            st[f[0]][int(f[1])] = {k: int(v) for k, v in zip(f[2::2], f[3::2])}
    return st


# The device keeps the line rate and the PF's leaf across driver loads (only
# a PF reset restores them): every test starts and ends with neither set, so
# no other lab test runs behind a line rate.
RESET = ("devlink dev param set %(dl)s name line_rate_kbps value 0 cmode runtime; "
         "devlink port function rate set %(dl)s/0 tx_share 0 tx_max 0 tx_priority 0 "
         "tx_weight 0")


@contextlib.contextmanager
def pf_loaded(lab, num_vfs=2):
    assert (guest_share_dir() / "modules" / "vfwarp_pf.ko").exists(), "run 'make modules' first"
    try:
        # udev renames the netdev (eth0 -> enp1s0): settle before naming it.
        out = ssh(lab, f"""set -e; dmesg -C; insmod {MOD}; udevadm settle -t 20 || true
mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
B=$(lspci -D -n -d {PF_ID} | awk 'NR==1{{print $1}}')
{RESET % {"dl": "pci/$B"}}
[ {num_vfs} = 0 ] || echo {num_vfs} > /sys/bus/pci/devices/$B/sriov_numvfs
echo $B $(ls /sys/bus/pci/devices/$B/net)""").stdout.split()
        yield Pf(lab, out[-2], out[-1])
    finally:
        log = ssh(lab, f"""
D=/sys/bus/pci/devices/$(lspci -D -n -d {PF_ID} | awk 'NR==1{{print $1}}')
[ -d /sys/module/vfwarp_pf ] && {RESET % {"dl": "pci/$(basename $D)"}}
[ -d /sys/module/vfwarp_pf ] && echo 0 > $D/sriov_numvfs
rmmod vfwarp_pf 2>/dev/null; dmesg; echo @@lsmod; lsmod""", check=False).stdout
    log, mods = log.split("@@lsmod")
    assert not re.search(r"^vfwarp_pf\s", mods, re.M), mods
    # Every test unloads the driver with its tree in place: no splat.
    assert not re.search(r"WARNING:|BUG:|Oops|refcount_t|rate nodes left", log), log


def test_devlink_instance_info_and_ports_follow_vfs(lab2):
    with pf_loaded(lab2, num_vfs=0) as pf:
        out = pf.sh(f"devlink -j dev info {pf.dl}; echo; dmesg").stdout
        info = json.loads(out.split("\n", 1)[0])["info"][pf.dl]
        hw = re.search(r"hw interface v(\d+\.\d+)", out).group(1)
        assert info["driver"] == "vfwarp_pf"
        assert info["versions"]["running"]["fw.mgmt.api"] == hw
        assert info["versions"]["fixed"]["asic.id"] == "1234:f0a0"

        st = pf.numvfs(0)
        ports = st["ports"]
        assert sorted(ports) == [0, UPLINK]
        assert ports[UPLINK]["flavour"] == "physical" and ports[UPLINK]["port"] == 0
        assert ports[0]["flavour"] == "pcipf" and ports[0]["pfnum"] == 0
        assert set(st["rates"]) == {"0"}          # the PF's leaf

        st = pf.numvfs(3)
        ports = st["ports"]
        assert sorted(ports) == [0, 1, 2, 3, UPLINK]
        for n in range(3):
            p = ports[1 + n]
            assert (p["flavour"], p["pfnum"], p["vfnum"]) == ("pcivf", 0, n), p
        assert set(st["rates"]) == {"0", "1", "2", "3"}
        assert all(r["type"] == "leaf" for r in st["rates"].values())
        assert sorted(st["device"]["leaf"]) == [0, 1, 2, 3]

        st = pf.numvfs(0)
        assert sorted(st["ports"]) == [0, UPLINK] and set(st["rates"]) == {"0"}
        assert sorted(pf.numvfs(1)["ports"]) == [0, 1, UPLINK]


def test_eswitch_legacy_and_switchdev_refused(lab2):
    with pf_loaded(lab2) as pf:
        show = f"devlink -j dev eswitch show {pf.dl}"
        (rc0, _, st0), (rc1, err, st1), (rc2, mode, st2), (rc3, _, _) = pf.run_many([
            ":", f"devlink dev eswitch set {pf.dl} mode switchdev",
            f"sh -c '{show} 1>&2'", f"devlink dev eswitch set {pf.dl} mode legacy"])
        assert rc1 != 0 and (rc0, rc2, rc3) == (0, 0, 0)
        assert "switchdev mode is not supported yet (no VF representors)" in err, err
        assert json.loads(mode)["dev"][pf.dl]["mode"] == "legacy"
        assert st0 == st1 == st2 and sorted(st0["ports"]) == [0, 1, 2, UPLINK]


def test_rate_leaves_and_nodes_set_and_read_back(lab2):
    with pf_loaded(lab2) as pf:
        d = pf.dl
        st = pf.ok(f"devlink port function rate set {d}/1 tx_share 10mbit tx_max 50mbit "
                   "tx_priority 3 tx_weight 7")
        assert st["rates"]["1"] == {"type": "leaf", "tx_share": 10 * MBIT, "tx_max": 50 * MBIT,
                                    "tx_priority": 3, "tx_weight": 7}
        assert st["device"]["leaf"][1] == {"tx_share": 10 * MBIT, "tx_max": 50 * MBIT,
                                           "tx_priority": 3, "tx_weight": 7, "parent": 0}
        # Nodes: a tenant t1 and a nested t2, a VF and the PF under them.
        st = pf.ok(f"devlink port function rate add {d}/t1 tx_share 30mbit tx_max 80mbit "
                   "tx_priority 2 tx_weight 3",
                   f"devlink port function rate add {d}/t2 tx_share 12mbit parent t1",
                   f"devlink port function rate set {d}/1 parent t1",
                   f"devlink port function rate set {d}/2 tx_share 5mbit parent t2",
                   f"devlink port function rate set {d}/0 tx_max 123456 parent t2")
        r, dev = st["rates"], st["device"]
        assert r["t1"] == {"type": "node", "tx_share": 30 * MBIT, "tx_max": 80 * MBIT,
                           "tx_priority": 2, "tx_weight": 3}
        assert r["t2"] == {"type": "node", "tx_share": 12 * MBIT, "parent": "t1"}
        assert r["1"]["parent"] == "t1" and r["2"]["parent"] == "t2" and r["0"]["parent"] == "t2"
        assert r["0"]["tx_max"] == 123456 // 8      # bit/s to bytes/s: the PF takes any
        # The device's tree is the same tree; node ids are the device's.
        ids = {n["tx_share"]: i for i, n in dev["node"].items()}
        t1, t2 = ids[30 * MBIT], ids[12 * MBIT]
        assert dev["node"][t1] == {"tx_share": 30 * MBIT, "tx_max": 80 * MBIT, "tx_priority": 2,
                                   "tx_weight": 3, "parent": 0, "children": 2}
        assert dev["node"][t2]["parent"] == t1 and dev["node"][t2]["children"] == 2
        assert [dev["leaf"][i]["parent"] for i in (0, 1, 2)] == [t2, t1, t2]
        assert dev["leaf"][0]["tx_max"] == 123456 // 8

        # A node with children is not deleted; moved out and emptied, it is.
        pf.refused((f"devlink port function rate del {d}/t1", "Node has children"))
        st = pf.ok(*(f"devlink port function rate set {d}/{n} noparent" for n in (1, 2, 0)),
                   f"devlink port function rate del {d}/t2",
                   f"devlink port function rate del {d}/t1")
        assert set(st["rates"]) == {"0", "1", "2"} and st["device"]["node"] == {}
        assert st["device"]["leaf"][2] == {"tx_share": 5 * MBIT, "tx_max": 0, "tx_priority": 0,
                                           "tx_weight": 1, "parent": 0}

        # A VF's leaf goes back to the defaults with its VF; nodes stay.
        pf.ok(f"devlink port function rate add {d}/t3",
              f"devlink port function rate set {d}/2 parent t3")
        pf.numvfs(2)
        st = pf.state()
        assert st["rates"]["2"] == {"type": "leaf"} and "t3" in st["rates"]
        assert st["device"]["leaf"][2]["parent"] == 0
        (t3,) = st["device"]["node"]
        assert st["device"]["node"][t3]["children"] == 0


def test_rate_invalid_refused_and_nothing_changed(lab2):
    with pf_loaded(lab2) as pf:
        d = pf.dl
        # A line rate, a tenant node with a VF under it, a chain of 4
        # nested nodes (the deepest the device allows) and a spare node.
        base = pf.ok(f"devlink dev param set {d} name line_rate_kbps value 100000 cmode runtime",
                     f"devlink port function rate add {d}/t1 tx_share 20mbit tx_max 60mbit",
                     f"devlink port function rate set {d}/1 tx_share 10mbit parent t1",
                     f"devlink port function rate add {d}/n1",
                     *(f"devlink port function rate add {d}/n{i} parent n{i - 1}"
                       for i in (2, 3, 4)),
                     f"devlink port function rate add {d}/n5")
        assert base["line_kbps"] == 100000 and base["device"]["line_bps"] == 100_000_000
        assert base["vfs"][0] == (10, 0) and len(base["device"]["node"]) == 6

        over = "guarantees oversubscribed"
        vf_rate = "a VF's tx_share and tx_max are whole Mbit/s"
        deep = "parent chain would loop or nest deeper than 4 nodes"
        pf.refused(
            (f"devlink port function rate set {d}/1 tx_weight 1001", "tx_weight is 0..1000"),
            (f"devlink port function rate set {d}/t1 tx_priority 8", "tx_priority is 0..7"),
            (f"devlink port function rate set {d}/2 tx_share 12500kbit", vf_rate),
            (f"devlink port function rate set {d}/2 tx_max 20gbit", vf_rate),
            # Guarantees that do not fit: under t1 (20 Mbit/s), at the root
            # (line rate 100 Mbit/s), the line rate below what is guaranteed.
            (f"devlink port function rate set {d}/1 tx_share 25mbit", over),
            (f"devlink port function rate set {d}/t1 tx_share 5mbit", over),
            (f"devlink port function rate set {d}/2 tx_share 90mbit", over),
            (f"devlink port function rate add {d}/t9 tx_share 90mbit", over),
            (f"devlink dev param set {d} name line_rate_kbps value 15000 cmode runtime", over),
            (f"devlink dev param set {d} name line_rate_kbps value 4000000000 cmode runtime",
             "the line rate is 0 (none) or 1 kbit/s to 1.6 Tbit/s"),
            (f"ip link set {pf.dev} vf 1 min_tx_rate 95", "Numerical result out of range"),
            # Parents: one that does not exist, a cycle (the devlink core
            # refuses it), a fifth level of nodes (the device does).
            (f"devlink port function rate set {d}/2 parent nosuch", "No such device"),
            (f"devlink port function rate set {d}/n1 parent n4",
             "Node is already a parent of parent node"),
            (f"devlink port function rate set {d}/n5 parent n4", deep),
        )
        # The device's 63 node ids, 6 in use: the 58th new node is refused.
        pf.ok(f"for i in $(seq 1 57); do devlink port function rate add {d}/x$i || exit 1; done")
        pf.refused((f"devlink port function rate add {d}/x58", "all 63 rate nodes are in use"))
        st = pf.ok(f"for i in $(seq 1 57); do devlink port function rate del {d}/x$i; done")
        assert st == base


def test_ip_link_and_devlink_agree_on_vf_rates(lab2):
    with pf_loaded(lab2) as pf:
        d = pf.dl
        (_, _, a), (_, _, b), (_, _, c) = pf.run_many([
            f"devlink port function rate set {d}/1 tx_share 5mbit tx_max 40mbit",
            f"ip link set {pf.dev} vf 1 min_tx_rate 3 max_tx_rate 20",
            f"ip link set {pf.dev} vf 0 min_tx_rate 0 max_tx_rate 0"])
        assert a["vfs"][0] == (5, 40)
        assert b["vfs"][1] == (3, 20)
        assert b["rates"]["2"] == {"type": "leaf", "tx_share": 3 * MBIT, "tx_max": 20 * MBIT}
        assert b["device"]["leaf"][2]["tx_max"] == 20 * MBIT
        assert c["rates"]["1"] == {"type": "leaf"} and c["vfs"][0] == (0, 0)
        # A guarantee that does not fit under the VF's node: refused by
        # ip link too, both views unchanged.
        pf.ok(f"devlink port function rate add {d}/t1 tx_share 10mbit",
              f"devlink port function rate set {d}/2 parent t1")
        pf.refused((f"ip link set {pf.dev} vf 1 min_tx_rate 11 max_tx_rate 20",
                    "Numerical result out of range"))
        pf.ok(f"devlink port function rate set {d}/2 noparent",
              f"devlink port function rate del {d}/t1")


LINE_MBIT = 12
WEIGHTS = (3, 1)


def test_weights_share_a_congested_uplink(lab2):
    """Two VFs of h1 send to h2 with iperf3 at once through a 12 Mbit/s
    line rate, with tx_weight 3 and 1: they get 3:1.

    Why 12 Mbit/s: one VF-to-VF TCP flow under TCG reached 20-30 Mbit/s
    here with no line rate (two labs sharing 2 cores), so each flow can
    send more than its share and the uplink stays congested. Measured
    (3 runs): 8.39/2.87, 8.41/2.83, 8.39/2.88 Mbit/s, ratios 2.92-2.97,
    sum 11.2-11.3 Mbit/s = the line rate minus headers (1448 of 1538 wire
    bytes per frame: 11.3). The issue's tolerance, +-10% on the ratio,
    holds with room; the sum checks the line rate itself (+-10%)."""
    require_modules()
    with vfs_up(lab2):
        pf = ssh(lab2, f"lspci -D -n -d {PF_ID}").stdout.split()[0]
        d = f"pci/{pf}"
        for vf in (0, 1):
            ssh(lab2, f"ip netns exec vf{vf} setsid timeout 90 iperf3 -s -1 "
                      f">/tmp/iperf3-s{vf}.log 2>&1 < /dev/null &", host="h2")
        try:
            ssh(lab2, f"devlink dev param set {d} name line_rate_kbps "
                      f"value {LINE_MBIT * 1000} cmode runtime; "
                      f"devlink port function rate set {d}/1 tx_weight {WEIGHTS[0]}; "
                      f"devlink port function rate set {d}/2 tx_weight {WEIGHTS[1]}")
            time.sleep(1)
            cmd = "ip netns exec vf{vf} iperf3 -c {dst} -t 10 -O 2 -J > /tmp/iperf3-c{vf}.json"
            ssh(lab2, cmd.format(vf=0, dst=addr("h2", 0)) + " & " +
                cmd.format(vf=1, dst=addr("h2", 1)) + "; wait")
            got = []
            for vf in (0, 1):
                res = json.loads(ssh(lab2, f"cat /tmp/iperf3-c{vf}.json").stdout)
                got.append(res["end"]["sum_received"]["bits_per_second"] / 1e6)
        finally:
            ssh(lab2, RESET % {"dl": d})
        ratio, total = got[0] / got[1], sum(got)
        print(f"\nline rate {LINE_MBIT} Mbit/s, weights {WEIGHTS}: VF0 {got[0]:.2f}, "
              f"VF1 {got[1]:.2f} Mbit/s, ratio {ratio:.2f}, sum {total:.2f}")
        want = WEIGHTS[0] / WEIGHTS[1]
        assert want * 0.9 <= ratio <= want * 1.1, got
        assert LINE_MBIT * 1448 / 1538 * 0.9 <= total <= LINE_MBIT * 1.02, got
