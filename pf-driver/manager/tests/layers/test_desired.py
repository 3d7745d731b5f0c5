"""The desired state compiled from the switchdev example: each layer in the
units of its interface, each object tagged with its owner."""
from pathlib import Path

from vfwarp_manager.layers import desired
from vfwarp_manager.policy import validate as policy

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def compiled():
    return desired.compile_policy(policy.load([str(EXAMPLES / "switchdev")]))


def test_vfs_in_ip_link_units_and_pool_defaults():
    d = compiled()
    assert d["sriov"] == {"numvfs": 16} and d["eswitch"] == {"mode": "switchdev"}
    assert d["vfs"][0] == {"mac": "02:00:00:00:10:ff", "vlan": 100, "qos": 3, "spoofchk": True,
                           "trust": False, "link_state": "auto", "max_tx_rate": 3000,
                           "min_tx_rate": 500, "owner": "tenant/blue"}
    assert d["vfs"][5]["mac"] is None and d["vfs"][5]["max_tx_rate"] == 1000   # red: MAC left to libvirt
    assert d["vfs"][8] == dict(desired.VF_DEFAULTS, owner="pool")


def test_rate_tree_in_bytes_per_second():
    d = compiled()
    assert d["rate_nodes"] == {
        "vfw-blue": {"tx_share": 250000000, "tx_max": 500000000, "tx_priority": 0, "tx_weight": 10,
                     "parent": "", "owner": "tenant/blue"},
        "vfw-red": {"tx_share": 125000000, "tx_max": 750000000, "tx_priority": 0, "tx_weight": 0,
                    "parent": "", "owner": "tenant/red"}}
    assert d["rate_nodes"]["vfw-blue"]["parent"] == ""             # at the root
    assert d["rate_leaves"][6] == {"parent": "vfw-red", "tx_weight": 0, "tx_priority": 0,
                                   "owner": "tenant/red"}
    # VFs of no tenant: leaves at the defaults (the manager owns every VF)
    assert d["rate_leaves"][15] == dict(desired.LEAF_DEFAULTS, owner="pool")
    assert d["line"] is None                    # line_rate only bounds the checks here


def test_flower_rules_carry_owned_cookies():
    d = compiled()
    f = d["flower"]
    # blue (VFs 0-3): deny tcp to 10.20.0.0/16:22 (IPv4: the subnet says so),
    # police udp (no family: one filter per family), allow any (one filter)
    assert sorted(f) == [0, 1, 2, 3] and all(f[n] == f[0] for n in f)
    assert {p: (x["protocol"], x["ip_proto"], x["action"]) for p, x in f[0].items()} == {
        1000: ("ip", "tcp", "drop"), 1002: ("ip", "udp", "police"),
        1003: ("ipv6", "udp", "police"), 1004: ("all", "", "pass")}
    assert f[0][1000]["dst"] == "10.20.0.0/16" and f[0][1000]["dst_port"] == [22, 22]
    assert f[0][1002]["_police"] == {"rate": 100 * 10**6 // 8, "burst": 65536}
    cookies = {x["cookie"] for x in f[0].values()}
    assert all(c.startswith(desired.COOKIE_MAGIC) and len(c) == 32 for c in cookies)
    # a rule's twins share its cookie; two different rules: two cookies
    assert len(cookies) == 3 and f[0][1002]["cookie"] == f[0][1003]["cookie"]
    assert desired.cookie("blue", 0, {"a": 1}) != desired.cookie("blue", 0, {"a": 2})


def test_dcb_networks_quotas():
    d = compiled()
    # classes the file does not list: ETS at 0% with no maxrate (nothing maps to them)
    assert d["dcb"]["tc_tsa"] == ["ets", "ets", "ets", "ets", "ets", "ets", "ets", "strict"]
    assert d["dcb"]["tc_bw"][3:7] == [0, 0, 0, 0] and sum(d["dcb"]["tc_bw"]) == 100
    assert d["dcb"]["maxrate"] == [0] * 8
    assert d["dcb"]["prio_tc"][3] == 2 and d["dcb"]["dscp_prio"] == {26: 3, 34: 4, 48: 7}
    assert d["dcb"]["apptrust"] is None                     # not in the file: not ours
    assert d["networks"]["vfwarp-blue"] == {"forward": "hostdev", "vfs": [0, 1, 2, 3], "vlan": 100,
                                            "owner": "tenant/blue"}
    assert d["quotas"][0] == {"qps": 256, "cqs": 256, "mrs": 1024}
    legacy = desired.compile_policy(policy.load([str(EXAMPLES / "legacy")]))
    assert legacy["dcb"] is None                            # no DCB in the host file: not ours
