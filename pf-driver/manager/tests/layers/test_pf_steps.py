"""The PF model's steps (layers.PfHost): from a live state to a target, in
dependency order, each with the exact commands that do and undo it.
The commands themselves run on a lab host (tests/lab/test_manager.py)."""
import copy

from vfwarp_manager.layers import desired, host as layers
from vfwarp_manager.policy import validate as policy

PF = "enp1s0"
NUMVFS = f"/sys/class/net/{PF}/device/sriov_numvfs"
D = dict(desired.VF_DEFAULTS)
IP = ["ip", "link", "set", "dev", PF, "vf"]


def state(numvfs, **vfs):
    s = {"sriov": {"numvfs": numvfs}, "vfs": {n: dict(D) for n in range(numvfs)}}
    for k, v in vfs.items():
        s["vfs"][int(k[2:])].update(v)
    return s


def argvs(actions):
    return [a["argv"] if "argv" in a else ("write", a["write"], a["text"]) for a in actions]


def test_nothing_to_do_when_equal():
    s = state(2, vf1={"max_tx_rate": 100, "min_tx_rate": 10})
    assert layers.PfHost(PF).steps(s, copy.deepcopy(s)) == []


def test_vf_settings_one_command_per_vf_with_exact_undo():
    before = state(2, vf0={"mac": "02:00:00:00:00:01", "max_tx_rate": 500, "min_tx_rate": 50})
    target = state(2, vf0={"mac": "02:00:00:00:00:01", "max_tx_rate": 1000, "min_tx_rate": 50,
                           "trust": True},
                   vf1={"vlan": 100, "qos": 3, "spoofchk": False, "link_state": "disable"})
    steps = layers.PfHost(PF).steps(before, target)
    assert [(s.layer, s.obj) for s in steps] == [("vfs", f"{PF} vf 0"), ("vfs", f"{PF} vf 1")]
    # The rates travel as a pair (IFLA_VF_RATE), VLAN with its priority.
    assert argvs(steps[0].do) == [IP + ["0", "trust", "on", "min_tx_rate", "50", "max_tx_rate", "1000"]]
    assert argvs(steps[0].undo) == [IP + ["0", "trust", "off", "min_tx_rate", "50", "max_tx_rate", "500"]]
    assert argvs(steps[1].do) == [IP + ["1", "vlan", "100", "qos", "3", "spoofchk", "off",
                                        "state", "disable"]]
    assert argvs(steps[1].undo) == [IP + ["1", "vlan", "0", "qos", "0", "spoofchk", "on",
                                          "state", "auto"]]
    assert steps[0].summary == "trust: false -> true, max_tx_rate: 500 -> 1000"


def test_unmanaged_and_unreported_properties_are_left_alone():
    before = state(1, vf0={"mac": "02:aa:00:00:00:01", "trust": None})   # driver reports no trust
    target = state(1, vf0={"mac": None, "trust": True, "max_tx_rate": 10})
    (step,) = layers.PfHost(PF).steps(before, target)
    assert argvs(step.do) == [IP + ["0", "min_tx_rate", "0", "max_tx_rate", "10"]]


def test_vf_count_changes_first_and_through_zero():
    before = state(2, vf1={"max_tx_rate": 300, "vlan": 7})
    target = state(3, vf2={"trust": True})
    steps = layers.PfHost(PF).steps(before, target)
    assert [s.summary for s in steps[:2]] == ["sriov_numvfs: 2 -> 0", "sriov_numvfs: 0 -> 3"]
    assert argvs(steps[0].do) == [("write", NUMVFS, "0")]
    # Undoing the removal re-creates the VFs and gives VF 1 its settings back.
    assert argvs(steps[0].undo) == [("write", NUMVFS, "2"),
                                    IP + ["1", "vlan", "7", "qos", "0", "min_tx_rate", "0",
                                          "max_tx_rate", "300"]]
    assert argvs(steps[1].undo) == [("write", NUMVFS, "0")]
    # New VFs start at the driver's defaults: only VF 2 needs a command.
    assert [s.obj for s in steps[2:]] == [f"{PF} vf 2"]


def test_from_and_to_zero_vfs_is_one_step():
    steps = layers.PfHost(PF).steps(state(0), state(2))
    assert [s.summary for s in steps] == ["sriov_numvfs: 0 -> 2"]
    assert argvs(steps[0].undo) == [("write", NUMVFS, "0")]
    steps = layers.PfHost(PF).steps(state(2, vf0={"trust": True}), state(0))
    assert argvs(steps[0].undo) == [("write", NUMVFS, "2"), IP + ["0", "trust", "on"]]


def test_mismatches_compare_only_what_the_target_manages():
    live = state(2, vf0={"max_tx_rate": 5, "spoofchk": None})
    target = state(2, vf0={"mac": None, "max_tx_rate": 6})
    assert layers.mismatches(live, target) == ["vfs 0 max_tx_rate: 5, want 6"]
    assert layers.mismatches(state(1), state(2)) == ["sriov numvfs: 1, want 2", "vfs 1: missing"]


def test_unapplied_layers_named_with_their_place(tmp_path):
    (tmp_path / "host.yaml").write_text(
        "version: 1\nkind: host\nadapter: {pf: enp1s0, num_vfs: 4, eswitch_mode: switchdev,\n"
        "  line_rate: 10gbit}\n")
    (tmp_path / "t.yaml").write_text(
        "version: 1\nkind: tenant\nname: t\nvfs: {range: 0-1}\n"
        "rate: {tx_max: 1gbit}\n")
    p = policy.load([str(tmp_path)])
    got = {(layer, w.line, w.col) for layer, _, w in layers.needed_unapplied(p, desired.compile_policy(p))}
    # rate, eswitch, flower and networks are applied now; quotas are named at their key
    assert got == set()
    (tmp_path / "t.yaml").write_text((tmp_path / "t.yaml").read_text() + "rdma: {quotas: {qps: 8}}\n")
    p = policy.load([str(tmp_path)])
    got = {(layer, w.line, w.col) for layer, _, w in layers.needed_unapplied(p, desired.compile_policy(p))}
    assert got == {("quotas", 6, 16)}


DEV = "pci/0000:01:00.0"
DROP = {"protocol": "ip", "handle": 1, "chain": 0, "ip_proto": "udp", "src": "", "dst": "",
        "dst_port": [5000, 5999], "action": "drop", "mirror_vf": "", "_police": None,
        "cookie": desired.COOKIE_MAGIC + "11" * 12, "skip_sw": True, "in_hw": True, "other_keys": []}


def switchdev_model():
    m = layers.PfHost(PF, eswitch=True, flower=True)
    m._dev = DEV                         # what read() finds out
    return m


def test_eswitch_mode_then_filters_and_back():
    """legacy -> switchdev: the mode (then udev names the representors), the
    VFs' settings, then the filters; each undone by its inverse."""
    before = dict(state(2), eswitch={"mode": "legacy"}, flower={})
    target = dict(state(2), eswitch={"mode": "switchdev"}, flower={0: {1000: dict(DROP, handle=None)}})
    steps = switchdev_model().steps(before, target)
    assert [(s.layer, s.summary.split(":")[0]) for s in steps] == [("eswitch", "mode"), ("flower", "add")]
    mode = lambda m: ["devlink", "dev", "eswitch", "set", DEV, "mode", m]  # noqa: E731
    settle = ["udevadm", "settle", "-t", "20"]
    assert argvs(steps[0].do) == [mode("switchdev"), settle]
    assert argvs(steps[0].undo) == [mode("legacy"), settle]
    add, = steps[1].do
    assert (add["flower"], add["vf"], add["pref"], add["skip_sw"], add["filter"]["handle"]) == \
        ("add", 0, 1000, True, 1)
    assert add["where"] == {"dev": DEV, "netns": None, "reprs": None}   # looked up when it runs
    assert steps[1].undo[0]["flower"] == "del"


def test_filters_leave_before_their_representors_do():
    """switchdev -> legacy, or a VF count change: the owned filters are
    removed first, so their undo (re-adding them) comes after the undo of
    the mode or count change has brought the representors back."""
    have = dict(state(2), eswitch={"mode": "switchdev"}, flower={0: {1000: DROP}})
    for target in (dict(state(2), eswitch={"mode": "legacy"}, flower={}),
                   dict(state(3), eswitch={"mode": "switchdev"}, flower={0: {1000: dict(DROP, handle=None)}})):
        steps = switchdev_model().steps(have, target)
        layers_ = [s.layer for s in steps]
        assert layers_[0] == "flower" and steps[0].do[0]["flower"] == "del", layers_
        assert steps[0].undo[0]["filter"] == DROP           # re-created as it was read
        if target["eswitch"]["mode"] == "legacy":
            assert layers_ == ["flower", "eswitch"]
        else:                                               # removed, VFs re-created, added again
            assert layers_ == ["flower", "sriov", "sriov", "flower"], layers_
            assert steps[-1].do[0]["flower"] == "add"
