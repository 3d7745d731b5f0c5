"""Native tests of the vfwarp_policy module's pure logic
(provisioning/ansible_collections/vfwarp/fleet/plugins/module_utils/policy.py):
which files the policy directory holds after a task, a plan -> changed and diff,
vfwarpctl's exit statuses -> the task's failure. The plan documents are the
real `vfwarpctl plan --json` of pf-driver/manager, run here on policy files
against a recorded live state (the manager's own test runner), not written by hand.
"""
import json
import sys
from pathlib import Path

import pytest

TOP = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(TOP / "provisioning"))
sys.path.insert(0, str(TOP / "pf-driver" / "manager"))
sys.path.insert(0, str(TOP / "pf-driver" / "manager" / "tests"))

from ansible_collections.vfwarp.fleet.plugins.module_utils import policy as mp  # noqa: E402

HOST = "version: 1\nkind: host\nadapter: {pf: enp1s0, num_vfs: 8, line_rate: 10gbit}\n"
GREEN = "version: 1\nkind: tenant\nname: green\nvfs: {indices: [1, 3, 5]}\nvlan: 300\n"


def test_files_given_overwrite_others_kept_unless_purged():
    have = {"host.yaml": HOST, "tenant-green.yaml": GREEN, "tenant-old.yaml": "x\n",
            "local.yaml": "y\n"}
    want = mp.desired_files(have, {"tenant-green.yaml": GREEN.replace("300", "301")},
                            ["tenant-*.yaml"])
    assert want == {"host.yaml": HOST, "local.yaml": "y\n",
                    "tenant-green.yaml": GREEN.replace("300", "301")}
    changes = mp.file_changes(have, want)
    assert [(n, b is None, a is None) for n, b, a in changes] == [
        ("tenant-green.yaml", False, False), ("tenant-old.yaml", False, True)]


def test_no_purge_keeps_everything_and_text_gets_a_final_newline():
    have = {"host.yaml": HOST, "tenant-green.yaml": GREEN}
    want = mp.desired_files(have, {"host.yaml": HOST.rstrip("\n")}, [])
    assert want == have and mp.file_changes(have, want) == []


@pytest.mark.parametrize("name", ["../x.yaml", "a/b.yaml", "host.json", ".hidden.yaml", ""])
def test_bad_file_names_refused(name):
    with pytest.raises(mp.PolicyModuleError):
        mp.desired_files({}, {name: HOST}, [])


def real_plan(tmp_path, files, *args):
    """(exit, stdout) of the real `vfwarpctl plan` over `files`, against the live
    state the manager's own tests record (pf-driver/manager/tests/data: ip -j,
    devlink -j, sysfs of a PF with 4 VFs)."""
    import io
    from replayhost import answers
    from vfwarp_manager.cli import vfwarpctl as cli
    d = tmp_path / "pol"
    d.mkdir(exist_ok=True)
    for n, t in files.items():
        (d / n).write_text(t)
    out = io.StringIO()
    rc = cli.main(["plan", *args, str(d)], runner=answers(), out=out)
    return rc, out.getvalue()


HOST4 = "version: 1\nkind: host\nadapter: {pf: enp1s0, num_vfs: 4, line_rate: 10gbit}\n"
GREEN4 = ("version: 1\nkind: tenant\nname: green\nvfs: {indices: [1, 3]}\nvlan: 300\n"
          "mac_base: \"02:00:00:00:20:00\"\n")


def test_the_real_plan_to_changed_text_and_diff(tmp_path):
    pytest.importorskip("yaml")
    files = {"host.yaml": HOST4, "tenant-green.yaml": GREEN4}
    rc, out = real_plan(tmp_path, files, "--json")
    changes, worst, unread = mp.parse_plan(rc, out)
    assert rc == 4 and worst == "recreate" and mp.is_changed(changes, [])  # switchdev -> legacy
    # the module's text of the plan is the manager's own text, line for line
    rc_text, text = real_plan(tmp_path, files)
    assert rc_text == 4 and mp.plan_text(changes, worst, unread) == text.splitlines()
    diff = mp.build_diff("/etc/vfwarp/policy", changes, [])
    assert len(diff) == 1
    assert "vf enp1s0 vf 1 vlan: 300  [vf-reset]\n" in diff[0]["after"]
    assert "vf enp1s0 vf 3 mac: 02:00:00:00:20:01  [detach]\n" in diff[0]["after"]
    assert diff[0]["before"].count("\n") <= len(changes)


def test_invalid_files_are_reported_by_the_real_plan(tmp_path):
    pytest.importorskip("yaml")
    rc, out = real_plan(tmp_path, {"host.yaml": HOST4, "t.yaml": GREEN4.replace("vlan: 300",
                                                                                  "vlan: 5000")},
                        "--json")
    assert rc == 1
    with pytest.raises(mp.PolicyModuleError, match="invalid"):
        mp.parse_plan(rc, out)
    errs = json.loads(out)["errors"]
    assert errs and errs[0]["file"].endswith("/t.yaml") and errs[0]["line"] == 5


def test_plan_documents():
    empty = json.dumps({"changes": [], "worst": None, "unread": {}})
    changes, worst, unread = mp.parse_plan(0, empty)
    assert (changes, worst) == ([], None)
    assert not mp.is_changed(changes, [])
    assert mp.plan_text(changes, worst, unread) == ["0 changes"]
    assert mp.build_diff("/p", changes, []) == []
    # only a file's text changes (a comment): changed, no plan in the diff
    d = mp.build_diff("/p", [], [("host.yaml", "a\n", "# c\na\n")])
    assert mp.is_changed([], [("host.yaml", "a\n", "# c\na\n")])
    assert d == [{"before_header": "/p/host.yaml", "after_header": "/p/host.yaml",
                  "before": "a\n", "after": "# c\na\n"}]
    ch = [{"layer": "vf", "object": "enp1s0 vf 6", "property": "mac", "live": "00:00:00:00:00:00",
           "desired": "02:00:00:00:10:00", "disruption": "detach", "action": "change"},
          {"layer": "sriov", "object": "enp1s0", "property": "sriov_numvfs", "live": 0,
           "desired": 8, "disruption": "hitless", "action": "change"},
          {"layer": "vf", "object": "enp1s0 vf 1", "property": "trust", "live": False,
           "desired": True, "disruption": "vf-reset", "action": "change"},
          {"layer": "rate-node", "object": "vfw-gone", "property": "node", "live": "vfw-gone",
           "desired": None, "disruption": "hitless", "action": "remove"}]
    doc = json.dumps({"changes": ch, "worst": "detach", "unread": {"dcb": "not yet"}})
    changes, worst, unread = mp.parse_plan(4, doc)
    assert mp.plan_text(changes, worst, unread) == [
        "~ vf enp1s0 vf 6 mac: 00:00:00:00:00:00 -> 02:00:00:00:10:00  [detach]",
        "~ sriov enp1s0 sriov_numvfs: 0 -> 8  [hitless]",
        "~ vf enp1s0 vf 1 trust: false -> true  [vf-reset]",
        "- rate-node vfw-gone node: vfw-gone -> (none)  [hitless]",
        "? dcb: not compared: not yet",
        "4 changes, worst: detach"]
    pd = mp.plan_diff(changes)
    assert pd["before"] == ("vf enp1s0 vf 6 mac: 00:00:00:00:00:00\nsriov enp1s0 sriov_numvfs: 0\n"
                            "vf enp1s0 vf 1 trust: false\nrate-node vfw-gone node: vfw-gone\n")
    assert pd["after"] == ("vf enp1s0 vf 6 mac: 02:00:00:00:10:00  [detach]\n"
                           "sriov enp1s0 sriov_numvfs: 8  [hitless]\n"
                           "vf enp1s0 vf 1 trust: true  [vf-reset]\n")


@pytest.mark.parametrize("rc,doc", [(0, {"changes": [{"x": 1}]}), (4, {"changes": []})])
def test_plan_exit_status_must_agree_with_changes(rc, doc):
    with pytest.raises(mp.PolicyModuleError):
        mp.parse_plan(rc, json.dumps(doc))


@pytest.mark.parametrize("rc", [1, 2, 3, 5, 6, 7, 8, 9])
def test_plan_failures_raise_with_the_meaning(rc):
    with pytest.raises(mp.PolicyModuleError, match="exit %d \\(%s" % (rc, mp.EXIT_TEXT[rc][:10])):
        mp.parse_plan(rc, "{}")


def test_apply_outcomes():
    assert mp.apply_outcome(0, '{"result": "applied", "exit": 0}') == (
        {"result": "applied", "exit": 0}, None)
    doc, msg = mp.apply_outcome(5, json.dumps({"result": "restored",
                                               "rollback_reason": "step 2 failed: RTNETLINK"}))
    assert msg == ("vfwarpctl apply: exit 5 (apply failed and was undone: the host is back at its "
                   "snapshot (verified)): step 2 failed: RTNETLINK")
    _, msg = mp.apply_outcome(8, json.dumps({"not_applied": {"flower": "issue 16"}}))
    assert msg.endswith(": flower: issue 16")
    _, msg = mp.apply_outcome(1, json.dumps({"errors": [
        {"file": "/tmp/x/g.yaml", "line": 3, "column": 7, "rule": "r", "message": "bad"}]}))
    assert msg.endswith(": /tmp/x/g.yaml:3:7: bad")
    _, msg = mp.apply_outcome(6, "not json")
    assert "NOT at its snapshot" in msg
    assert mp.apply_args("/p", 60, ["dcb"], False, "/s") == [
        "apply", "--json", "--state-dir", "/s", "--confirm-within", "60", "--skip", "dcb", "/p"]
    assert mp.apply_args("/p", None, ["dcb"], True) == ["apply", "--json", "--skip-unapplied", "/p"]
    assert mp.remap_paths("/tmp/vfwarp-policy-1/g.yaml:3:7", "/tmp/vfwarp-policy-1",
                          "/etc/vfwarp/policy") == "/etc/vfwarp/policy/g.yaml:3:7"
