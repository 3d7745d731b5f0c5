"""devlink on the PF (issue 17, and the instance/ports issue 16 builds on):
the devlink instance and its ports as VFs come and go (the eswitch modes:
test_switchdev.py), devlink rate leaves and nodes (docs/qos.md) set, read back and
refused, `ip link` and devlink agreeing on a VF's rates, the uplink's line
rate (devlink param line_rate_kbps). What the rates do under congestion:
test_congestion.py.

"Nothing changed" is checked on both sides: devlink's view
(`devlink -j port function rate show`, the line rate param, `ip -j link`)
and the device's, read with the QoS GET admin commands through the
driver's debugfs file `qos`.

Runs on h1 of the session's lab2; every test leaves the host without the
module, also on failure.
"""
import json
import re

from lib.qos import MBIT, pf_loaded

UPLINK = 65535


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

