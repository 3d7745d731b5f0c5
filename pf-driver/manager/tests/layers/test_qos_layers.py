"""The devlink rate and DCB layers through the CLI, against qosdevice.py (a
stand-in that enforces vfwarp_pf's QoS rules on the commands vfwarpctl
runs): read back equal to the files, drift and restore, a refused value
rolled back across every layer, a deleted tenant's node removed and a
foreign node never touched, and for random pairs of states an order of
steps in which the device accepts every step, with an exact undo after a
failure at any of them. On vfwarp_pf itself: tests/lab/test_manager.py."""
import copy
import io
import json
import random
from pathlib import Path

import pytest

from qosdevice import DEV, MBIT, PF, QosDevice
from qosfiles import BLUE, HOST, RED, ctl, policy_dir
from vfwarp_manager.cli import vfwarpctl as cli
from vfwarp_manager.layers import host as layers, live
from vfwarp_manager.txn import statedir, transaction

NODE = {"tx_share": 0, "tx_max": 0, "tx_priority": 0, "tx_weight": 0, "parent": ""}
EXPECT = {
    "numvfs": 4, "line": 100000,
    "nodes": {"vfw-red": dict(NODE, tx_share=20 * MBIT, tx_max=60 * MBIT, tx_weight=3),
              "vfw-blue": dict(NODE, tx_share=30 * MBIT, tx_weight=1),
              "other": dict(NODE, tx_share=1 * MBIT)},
    "leaves": {0: {"parent": "vfw-red", "tx_weight": 2, "tx_priority": 0},
               1: {"parent": "vfw-red", "tx_weight": 2, "tx_priority": 0},
               2: {"parent": "vfw-blue", "tx_weight": 0, "tx_priority": 0},
               3: {"parent": "vfw-blue", "tx_weight": 0, "tx_priority": 1}},
    "rates": {0: (5, 30), 1: (5, 30), 2: (10, 40), 3: (10, 40)},
    "ets": {"tc_tsa": ["ets"] * 7 + ["strict"], "tc_bw": [60, 30, 10, 0, 0, 0, 0, 0],
            "prio_tc": [0, 1, 2, 0, 0, 0, 0, 7]},
    "maxrate": [0, 80000, 0, 0, 0, 0, 0, 0], "app": {10: 1, 18: 2, 46: 7}, "trust": ["dscp"],
}


def seen(dev):
    s = dev.st
    return {"numvfs": s["numvfs"], "line": s["line"], "nodes": s["nodes"], "leaves": s["leaves"],
            "rates": {n: (v["min"], v["max"]) for n, v in s["vfs"].items()}, "ets": s["ets"],
            "maxrate": s["maxrate"], "app": s["app"], "trust": s["trust"]}


@pytest.fixture
def dev():
    d = QosDevice(numvfs=0)
    d.st["nodes"]["other"] = dict(NODE, tx_share=1 * MBIT)     # not ours: never touched
    return d


def test_files_applied_read_back_equal_and_reapply_changes_nothing(tmp_path, dev):
    rc, out = ctl(tmp_path, dev, "apply", policy_dir(tmp_path))
    assert rc == 0, out
    assert seen(dev) == EXPECT
    n = len(dev.log)
    rc, out = ctl(tmp_path, dev, "apply", policy_dir(tmp_path))
    assert rc == 0 and "no changes: the host already matches (sriov, vfs, rate, line, dcb)" in out, out
    assert len(dev.log) == n
    assert ctl(tmp_path, dev, "drift", policy_dir(tmp_path))[0] == 0


def test_hand_changes_are_drift_and_apply_restores_them(tmp_path, dev):
    assert ctl(tmp_path, dev, "apply", policy_dir(tmp_path))[0] == 0
    for argv in (["devlink", "port", "function", "rate", "set", f"{DEV}/2", "tx_max", "10000000bit"],
                 ["devlink", "port", "function", "rate", "set", f"{DEV}/vfw-blue", "tx_weight", "5"],
                 ["devlink", "dev", "param", "set", DEV, "name", "line_rate_kbps", "value", "200000",
                  "cmode", "runtime"],
                 ["dcb", "app", "add", "dev", PF, "dscp-prio", "20:3"],
                 ["dcb", "maxrate", "set", "dev", PF, "tc-maxrate", "1:0"]):
        assert dev.run(argv).returncode == 0, argv
    rc, out = ctl(tmp_path, dev, "drift", policy_dir(tmp_path))
    assert rc == 4, out
    drift = [ln for ln in out.splitlines() if ln.startswith("drift:")]
    assert drift == [
        f"drift: ~ vf {PF} vf 1 max_tx_rate: 10 -> 30  [hitless]",
        "drift: ~ rate-node vfw-blue tx_weight: 5 -> 1  [hitless]",
        f"drift: ~ line {DEV} line_rate_kbps: 200000 -> 100000  [hitless]",
        f"drift: ~ dcb {PF} maxrate: [0, 0, 0, 0, 0, 0, 0, 0] -> [0, 80000, 0, 0, 0, 0, 0, 0]  [hitless]",
        f"drift: - dcb {PF} dscp 20: 3 -> (none)  [hitless]"], out
    rc, out = ctl(tmp_path, dev, "apply", policy_dir(tmp_path))
    assert rc == 0 and "5 steps" in out, out
    assert seen(dev) == EXPECT


def test_refused_value_rolls_back_every_layer(tmp_path, dev):
    assert ctl(tmp_path, dev, "apply", policy_dir(tmp_path))[0] == 0
    before = copy.deepcopy(seen(dev))
    host = HOST.replace("100mbit", "120mbit").replace("bandwidth: 60", "bandwidth: 50") \
        .replace("bandwidth: 30, maxrate: 80mbit", "bandwidth: 40, maxrate: 90mbit") \
        .replace("{dscp: 46, priority: 7}", "{dscp: 26, priority: 2}")
    red = RED.replace("range: 0-1", "indices: [0]").replace("tx_share: 20mbit", "tx_share: 12mbit") \
        + "vlan: 300\n"
    green = "version: 1\nkind: tenant\nname: green\nvfs: {indices: [1]}\nrate: {tx_max: 10mbit}\n"
    # blue's guarantee takes what the files leave of the line (red 12 + blue
    # 108 = 120 Mbit/s; in the strict class 7, which has no share to fit),
    # but the node "other", which vfwarpctl does not own, holds 1 Mbit/s of
    # it: the device refuses blue's tx_share, which no check of the files
    # can know (a weight it refuses, 1001, validate refuses first).
    blue = BLUE.replace("tx_share: 30mbit", "tx_share: 108mbit") + "vlan: 400\nvlan_priority: 7\n"
    assert blue != BLUE
    files = policy_dir(tmp_path, "d", host=host, red=red, green=green, blue=blue)
    rc, out = ctl(tmp_path, dev, "apply", "--json", files)
    doc = json.loads(out)
    assert (rc, doc["result"], doc["problems"]) == (5, "restored", []), out
    reason = doc["rollback_reason"]
    assert "vfw-blue tx_share 108000000bit" in reason and "guarantees oversubscribed" in reason, reason
    assert {s["layer"] for s in doc["steps"][:doc["ran"]]} == {"vfs", "rate"}
    assert seen(dev) == before
    # with blue's guarantee that fits, every step failing after it ran: undone
    files = policy_dir(tmp_path, "d", host=host, red=red, green=green)
    monkey = pytest.MonkeyPatch()
    try:
        monkey.setenv("VFWARP_FAIL_AT", "verify")
        rc, out = ctl(tmp_path, dev, "apply", "--json", files)
        steps = json.loads(out)["steps"]
        assert {s["layer"] for s in steps} == {"vfs", "rate", "dcb"} and seen(dev) == before
        for k in range(1, len(steps) + 1):
            monkey.setenv("VFWARP_FAIL_AT", f"{k}:after")
            rc, out = ctl(tmp_path, dev, "apply", "--json", files)
            doc = json.loads(out)
            assert (rc, doc["result"], doc["problems"]) == (5, "restored", []), (k, out)
            assert seen(dev) == before, k
    finally:
        monkey.undo()
    assert ctl(tmp_path, dev, "apply", files)[0] == 0
    assert set(dev.st["nodes"]) == {"vfw-red", "vfw-blue", "vfw-green", "other"}
    assert dev.st["leaves"][1]["parent"] == "vfw-green" and dev.st["vfs"][0]["vlan"] == 300


def test_deleted_tenant_node_goes_foreign_node_stays(tmp_path, dev):
    assert ctl(tmp_path, dev, "apply", policy_dir(tmp_path))[0] == 0
    before = copy.deepcopy(seen(dev))
    rc, out = ctl(tmp_path, dev, "apply", policy_dir(tmp_path, blue=None))
    assert rc == 0, out
    after = seen(dev)
    assert set(after["nodes"]) == {"vfw-red", "other"} and after["nodes"]["other"] == before["nodes"]["other"]
    assert after["leaves"][2] == after["leaves"][3] == {"parent": "", "tx_weight": 0, "tx_priority": 0}
    assert after["rates"][2] == after["rates"][3] == (0, 0)
    same = ("line", "ets", "maxrate", "app", "trust")
    assert {k: after[k] for k in same} == {k: before[k] for k in same}
    assert ctl(tmp_path, dev, "rollback")[0] == 0 and seen(dev) == before


def test_unknown_dcb_maxrate_units_refused_before_anything_changes(tmp_path, dev):
    real = dev._run
    dev._run = lambda a: "dcb utility, iproute2-6.18.0\n" if a == ["dcb", "-V"] else real(a)
    rc, out = ctl(tmp_path, dev, "apply", policy_dir(tmp_path))
    assert rc == 3 and "dcb maxrate: this dcb is iproute2 6.18.0" in out, out
    assert dev.log == [] and dev.st["numvfs"] == 0


# ---- random states: the order of steps and the undo ----

def random_state(rng, names):
    """A QoS state the device accepts: VFs' rates and leaves, owned nodes."""
    while True:
        d = QosDevice(numvfs=4)
        s = d.st
        s["line"] = rng.choice([0, 25000, 40000, 60000])
        for name in rng.sample(names, rng.randint(0, len(names))):
            mx = rng.choice([0, 20, 40, 60]) * MBIT
            s["nodes"][name] = dict(NODE, tx_share=rng.choice([0, 5, 10, 20, 30]) * MBIT, tx_max=mx,
                                    tx_weight=rng.choice([0, 1, 3]), tx_priority=rng.choice([0, 2]))
        for n in range(4):
            s["leaves"][n] = {"parent": rng.choice([""] + sorted(s["nodes"])),
                              "tx_weight": rng.choice([0, 2]), "tx_priority": rng.choice([0, 1])}
            s["vfs"][n]["min"] = rng.choice([0, 2, 5, 10])
            s["vfs"][n]["max"] = rng.choice([0, 10, 20])
        try:
            d.rules()
            return d
        except Exception:
            continue


def model_state(d):
    m = layers.PfHost(PF, rate=True, line=True)
    return m, m.read(d)


@pytest.mark.parametrize("seed", range(120))
def test_random_changes_apply_in_an_accepted_order_and_undo_exactly(tmp_path, seed):
    rng = random.Random(seed)
    names = ["vfw-a", "vfw-b", "vfw-c"]
    start, goal = random_state(rng, names), random_state(rng, names)
    _, target = model_state(goal)
    model, snapshot = model_state(start)
    sd = statedir.StateDir(str(tmp_path / "s"))
    sd.ensure()
    out = transaction.run(sd, model, start, target, "apply")
    assert out.result in ("applied", "unchanged"), (out.reason, [str(s) for s in out.steps])
    assert model.read(start) == target
    n = len(out.steps)
    for k in range(1, n + 1):
        dev = QosDevice(numvfs=4)
        dev.st = copy.deepcopy(random_state(random.Random(seed), names).st)
        model, snap = model_state(dev)
        assert snap == snapshot
        out = transaction.run(sd, model, dev, target, "apply", inject=transaction.Injection(f"{k}:after"))
        assert (out.result, out.problems) == ("restored", []), (k, out.reason, out.problems)
        assert model.read(dev) == snapshot


def test_live_readers_on_the_stand_in_shapes(dev):
    # the shapes the lab test reads from the real tools
    dev._numvfs(2)
    tree = live.read_rate_tree(dev, DEV)
    assert tree["nodes"]["other"] == dict(NODE, tx_share=MBIT)
    assert tree["leaves"][1] == {"tx_share": 0, "tx_max": 0, "tx_priority": 0, "tx_weight": 0,
                                 "parent": ""}
    assert live.read_dcb(dev, PF, ["ets", "maxrate", "app", "apptrust"])["apptrust"] == ["pcp"]


def test_rate_layer_only_where_devlink_has_rate_objects(dev):
    from vfwarp_manager.layers import desired
    from vfwarp_manager.policy import validate as policy
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        (Path(d) / "host.yaml").write_text("version: 1\nkind: host\nadapter: {pf: enp1s0, num_vfs: 2, "
                                           "line_rate: 10gbit}\n")
        want = desired.compile_policy(policy.load([d]))
    assert layers.PfHost.for_desired(dev, want).rate              # the PF's leaf is there
    real = dev._run
    dev._run = lambda a: '{"rate": {}}' if a[:5] == ["devlink", "-j", "port", "function", "rate"] \
        else real(a)
    # a devlink instance without devlink rate: no rate layer (nothing to read or set)
    assert not layers.PfHost.for_desired(dev, want).rate


def plan(dev, files):
    out = io.StringIO()
    return cli.main(["plan", files], runner=dev, out=out), out.getvalue()


def test_what_choosing_the_layers_read_serves_the_snapshot_and_only_it(tmp_path, dev):
    """The devlink rate show that decides whether the rate layer is managed
    is the snapshot's too; the read-back after the steps asks again."""
    calls = []
    real = dev.run

    def counting(argv, stdin=None):
        calls.append(tuple(argv))
        return real(argv, stdin)
    dev.run = counting
    rate_show = ("devlink", "-j", "port", "function", "rate", "show")
    assert ctl(tmp_path, dev, "apply", policy_dir(tmp_path))[0] == 0
    assert calls.count(rate_show) == 2               # probe + snapshot, then the read-back
    calls.clear()
    assert "no changes" in ctl(tmp_path, dev, "apply", policy_dir(tmp_path))[1]
    assert calls.count(rate_show) == 1
    calls.clear()
    rc, out = plan(dev, policy_dir(tmp_path))
    assert rc == 0 and out.endswith("\n0 changes\n"), out
    assert calls.count(rate_show) == 1
    # a hand change between two runs is seen: nothing is kept across runs
    dev.st["nodes"]["vfw-red"]["tx_weight"] = 7
    rc, out = plan(dev, policy_dir(tmp_path))
    assert rc == 4 and "rate-node vfw-red tx_weight: 7 -> 3" in out, out


def test_apply_of_switchdev_on_a_legacy_pf_without_devlink_rate(tmp_path, dev):
    """Files asking for switchdev, with no rate settings, on a PF in legacy
    mode whose devlink has no rate objects: the snapshot took the eswitch
    mode from the probe, nothing else asked for the devlink instance, and
    the steps raised "read the live state first" (a traceback) instead of
    applying."""
    d = tmp_path / "files"
    d.mkdir()
    (d / "host.yaml").write_text("version: 1\nkind: host\nadapter: {pf: enp1s0, num_vfs: 2, "
                                 "line_rate: 10gbit, eswitch_mode: switchdev}\n")
    real = dev._run
    dev._run = lambda a: '{"rate": {}}' if a[:5] == ["devlink", "-j", "port", "function", "rate"] \
        else real(a)
    rc, out = plan(dev, str(d))
    assert rc == 4 and "mode: legacy -> switchdev  [recreate]" in out, out
    rc, out = ctl(tmp_path, dev, "apply", str(d))
    assert rc == 0, out
    assert dev.st["eswitch"] == "switchdev" and dev.st["numvfs"] == 2
    assert ("devlink", "dev", "eswitch", "set", DEV, "mode", "switchdev") in dev.log, dev.log
