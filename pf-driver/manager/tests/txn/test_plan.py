"""plan: live state (tool samples) against the desired state of the example
policies, each change with its disruption; and the CLI around it."""
import io
import json
from pathlib import Path

from vfwarp_manager.cli import vfwarpctl as cli
from vfwarp_manager.layers import desired
from vfwarp_manager.policy import validate as policy
from vfwarp_manager.txn import plan
from qosdevice import QosDevice
from qosfiles import HOST, policy_dir
from replayhost import BLUE, answers, write_policy

HERE = Path(__file__).resolve().parent
EXAMPLES = HERE.parents[1] / "examples"


def run_plan(files, runner):
    p = policy.load(files)
    want = desired.compile_policy(p)
    return plan.diff(plan.read_live(runner, want), want)


def test_plan_lists_each_difference_with_its_disruption(tmp_path):
    changes = run_plan(write_policy(tmp_path, BLUE), answers())
    got = {(c.layer, c.obj, c.prop): (c.live, c.desired, c.disruption) for c in changes}
    assert got == {
        # VF 0 matches except its cap (2000 live, 1gbit wanted); VF 1 matches
        ("vf", "enp1s0 vf 0", "max_tx_rate"): (2000, 1000, "hitless"),
        # VFs 2 and 3 belong to no tenant: back to the defaults
        ("vf", "enp1s0 vf 2", "spoofchk"): (False, True, "hitless"),
        ("vf", "enp1s0 vf 2", "trust"): (True, False, "vf-reset"),
        ("vf", "enp1s0 vf 2", "link_state"): ("disable", "auto", "hitless"),
        # the node: 2gbit = 250000000 B/s (as live), 4gbit = 500000000 B/s (as live)
        # an owned node no file asks for goes; "other" is not ours and stays
        ("rate-node", "vfw-gone", "node"): ("vfw-gone", None, "hitless"),
        # leaves: VFs 0 and 1 are already under vfw-blue; VF 3 belongs to no
        # tenant, so like its ip link settings its leaf goes back to the
        # defaults: out of the node "other" (which is not ours and stays)
        ("rate-leaf", "vf 3", "parent"): ("other", None, "hitless"),
    }


def test_rate_tree_follows_a_renamed_tenant(tmp_path):
    changes = run_plan(write_policy(tmp_path, BLUE.replace("name: blue", "name: green")), answers())
    got = {(c.layer, c.obj, c.prop): (c.live, c.desired) for c in changes if c.layer.startswith("rate")}
    assert got == {
        ("rate-node", "vfw-green", "tx_share"): (None, 250000000),
        ("rate-node", "vfw-green", "tx_max"): (None, 500000000),
        ("rate-node", "vfw-green", "tx_priority"): (None, 0),
        ("rate-node", "vfw-green", "tx_weight"): (None, 10),
        ("rate-node", "vfw-blue", "node"): ("vfw-blue", None),
        ("rate-node", "vfw-gone", "node"): ("vfw-gone", None),
        ("rate-leaf", "vf 0", "parent"): ("vfw-blue", "vfw-green"),
        ("rate-leaf", "vf 1", "parent"): ("vfw-blue", "vfw-green"),
        ("rate-leaf", "vf 3", "parent"): ("other", None),
    }


def test_mac_vlan_changes_are_disruptive(tmp_path):
    t = BLUE.replace("10:00", "20:00").replace("vlan: 100", "vlan: 101")
    changes = run_plan(write_policy(tmp_path, t), answers())
    d = {(c.obj, c.prop): c.disruption for c in changes if c.layer == "vf"}
    assert d[("enp1s0 vf 0", "mac")] == "detach" and d[("enp1s0 vf 1", "vlan")] == "vf-reset"
    assert plan.worst(changes) == "detach"


def test_numvfs_change_recreates_every_vf(tmp_path):
    changes = run_plan(write_policy(tmp_path, BLUE), answers(numvfs=2))
    assert changes[0].layer == "sriov" and (changes[0].live, changes[0].desired) == (2, 4)
    assert {c.disruption for c in changes if c.layer in ("sriov", "vf")} == {"recreate"}
    # from zero VFs nobody is disrupted
    changes = run_plan(write_policy(tmp_path, BLUE), answers(numvfs=0))
    assert changes[0].disruption == "hitless"


def test_cli_plan_json_and_exit_codes(tmp_path):
    files = write_policy(tmp_path, BLUE)
    out = io.StringIO()
    assert cli.main(["plan", "--json", *files], runner=answers(), out=out) == cli.EXIT_CHANGES
    doc = json.loads(out.getvalue())
    assert doc["worst"] == "vf-reset" and len(doc["changes"]) == 6
    assert {"layer", "object", "property", "live", "desired", "disruption", "action"} <= set(doc["changes"][0])
    out = io.StringIO()
    assert cli.main(["plan", *files], runner=answers(devlink=False), out=out) == cli.EXIT_CHANGES
    assert "? devlink: not compared" in out.getvalue()
    out = io.StringIO()
    assert cli.main(["plan", *files], runner=answers(total=2), out=out) == cli.EXIT_INVALID
    assert "num-vfs-past-totalvfs" in out.getvalue()


def test_cli_plan_clean_host_exits_zero(tmp_path):
    (tmp_path / "host.yaml").write_text("version: 1\nkind: host\nadapter: {pf: enp1s0, num_vfs: 4, "
                                        "line_rate: 10gbit}\n")
    (tmp_path / "t.yaml").write_text("version: 1\nkind: tenant\nname: t\nvfs: {range: 0-1}\n"
                                     "mac_base: \"02:00:00:00:10:00\"\nvlan: 100\nvlan_priority: 3\n"
                                     "vf_rate: {tx_max: 2gbit, tx_share: 500mbit}\n"
                                     "vf: [{index: 1, tx_max: 1gbit}]\n")
    (tmp_path / "u.yaml").write_text("version: 1\nkind: tenant\nname: u\nvfs: {indices: [2]}\n"
                                     "trust: true\nspoofchk: false\nlink_state: disable\n")
    out = io.StringIO()
    rc = cli.main(["plan", str(tmp_path)], runner=answers(devlink=False), out=out)
    assert rc == cli.EXIT_OK and out.getvalue().splitlines()[-1] == "0 changes", out.getvalue()


def test_cli_validate_exit_codes():
    out = io.StringIO()
    assert cli.main(["validate", str(EXAMPLES / "switchdev")], out=out) == cli.EXIT_OK
    inv = HERE.parent / "policy" / "invalid"
    out = io.StringIO()
    assert cli.main(["validate", "--json", str(inv / "base" / "host.yaml"),
                     str(inv / "base" / "blue.yaml"), str(inv / "vlan-shared.yaml")],
                    out=out) == cli.EXIT_INVALID
    (e,) = json.loads(out.getvalue())["errors"]
    assert (e["rule"], e["line"], e["column"], e["other"]["file"]) == \
        ("vlan-shared", 7, 7, str(inv / "base" / "blue.yaml"))


def test_removing_every_vf_is_planned_as_recreate(tmp_path):
    # 4 -> 0 destroys every VF (and with it whatever a VM holds): as
    # disruptive as 4 -> 2, which the PCI core only allows through 0.
    dev = QosDevice(numvfs=4)
    files = policy_dir(tmp_path, host=HOST.replace("num_vfs: 4", "num_vfs: 0"), red=None, blue=None)
    out = io.StringIO()
    rc = cli.main(["plan", files], runner=dev, out=out)
    lines = out.getvalue().splitlines()
    assert rc == cli.EXIT_CHANGES, lines
    assert "~ sriov enp1s0 sriov_numvfs: 4 -> 0  [recreate]" in lines, lines
    assert lines[-1].endswith(", worst: recreate"), lines
    assert dev.log == []                  # plan changes nothing
