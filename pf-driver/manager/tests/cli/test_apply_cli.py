"""apply / drift / status through the CLI, on the live state a lab host's
tools printed (tests/data/ip-link-pf-4vfs.json, REAL): what is refused
before anything is touched, what an unchanged host reports, exit codes,
audit records. Changing a real PF happens in tests/lab/test_manager.py."""
import io
import json

import pytest

from replayhost import PF, answers
from vfwarp_manager.cli import vfwarpctl as cli
from vfwarp_manager.txn import audit
from vfwarp_manager.cli.txn import E_CHANGES, E_INVALID, E_LIVE, E_OK, E_UNAPPLIED

HOST = "version: 1\nkind: host\nadapter: {pf: enp1s0, num_vfs: 4, line_rate: 10gbit}\n"
# These match the captured sample exactly.
T = ("version: 1\nkind: tenant\nname: t\nvfs: {range: 0-1}\nmac_base: \"02:00:00:00:10:00\"\n"
     "vlan: 100\nvlan_priority: 3\nvf_rate: {tx_max: 2gbit, tx_share: 500mbit}\n"
     "vf: [{index: 1, tx_max: 1gbit}]\n")
U = "version: 1\nkind: tenant\nname: u\nvfs: {indices: [2]}\ntrust: true\nspoofchk: false\n" \
    "link_state: disable\n"


def files(tmp_path, host=HOST, t=T, u=U):
    d = tmp_path / "pol"
    d.mkdir(exist_ok=True)
    (d / "host.yaml").write_text(host)
    (d / "t.yaml").write_text(t)
    (d / "u.yaml").write_text(u)
    return str(d)


def ctl(tmp_path, *argv, runner=None):
    out = io.StringIO()
    rc = cli.main([argv[0], "--state-dir", str(tmp_path / "state"), *argv[1:]],
                  runner=runner or answers(devlink=False), out=out)
    return rc, out.getvalue()


def changes_made(runner):
    return runner.writes + [c for c in runner.calls if "set" in c]


def test_unchanged_host_reports_so_and_runs_nothing(tmp_path):
    r = answers(devlink=False)
    rc, out = ctl(tmp_path, "apply", files(tmp_path), runner=r)
    assert rc == E_OK and "no changes: the host already matches" in out, out
    assert changes_made(r) == []
    (rec,) = audit.tail(str(tmp_path / "state" / "audit.jsonl"), 5)
    assert (rec["command"], rec["result"], rec["changes"]) == ("apply", "unchanged", [])
    assert len(rec["policy_hash"]) == 64
    rc, out = ctl(tmp_path, "apply", "--json", files(tmp_path))
    assert json.loads(out)["result"] == "unchanged"


def test_files_needing_unapplied_layers_are_refused_untouched(tmp_path):
    t = T + "rdma: {quotas: {qps: 64}}\n"
    r = answers(devlink=False)
    rc, out = ctl(tmp_path, "apply", files(tmp_path, t=t), runner=r)
    assert rc == E_UNAPPLIED, out
    d = tmp_path / "pol"
    assert f"{d}/t.yaml:10:16: not applied: quotas: RDMA quotas" in out, out
    assert "refused: nothing changed" in out
    assert changes_made(r) == [] and not (tmp_path / "state" / "journal.json").exists()
    rec = audit.tail(str(tmp_path / "state" / "audit.jsonl"))[0]
    assert rec["result"] == "refused" and set(rec["not_applied"]) == {"quotas"}
    # skipping them applies the rest (here: nothing differs)
    rc, out = ctl(tmp_path, "apply", "--skip", "quotas", files(tmp_path, t=t))
    assert rc == E_OK and "not applied: quotas" in out and "no changes" in out, out
    assert ctl(tmp_path, "apply", "--skip-unapplied", files(tmp_path, t=t))[0] == E_OK
    # rate, dcb, eswitch and flower are layers of their own now: not skippable
    for layer in ("rate", "eswitch", "flower"):
        with pytest.raises(SystemExit):
            cli.main(["apply", "--skip", layer, "x.yaml"])


def test_switchdev_and_acls_on_a_pf_without_devlink_are_a_live_error(tmp_path):
    """The eswitch mode and the representors are read through devlink: a PF
    without it cannot be compared, so apply stops before any change (exit 3)."""
    host = HOST.replace("line_rate", "eswitch_mode: switchdev, line_rate")
    t = T + "acl: [{action: deny, protocol: tcp, dst_port: 22}]\n"
    r = answers(devlink=False)
    rc, out = ctl(tmp_path, "apply", files(tmp_path, host=host, t=t), runner=r)
    assert rc == E_LIVE, out
    assert "devlink -j dev eswitch show" in out and "Failed to connect to devlink" in out, out
    assert changes_made(r) == [] and not (tmp_path / "state" / "journal.json").exists()


def test_rate_asked_of_a_pf_without_devlink_is_a_live_error(tmp_path):
    """A tenant rate node on a PF whose devlink cannot be read: exit 3, the
    reason printed, nothing changed (no journal, no command run)."""
    r = answers(devlink=False)
    rc, out = ctl(tmp_path, "apply", files(tmp_path, t=T + "rate: {tx_max: 4gbit}\n"), runner=r)
    assert rc == E_LIVE, out
    assert "cannot read the live state" in out and "Failed to connect to devlink" in out, out
    assert changes_made(r) == [] and not (tmp_path / "state" / "journal.json").exists()


def test_invalid_files_change_nothing_and_are_audited(tmp_path):
    r = answers(devlink=False)
    rc, out = ctl(tmp_path, "apply", files(tmp_path, u=U.replace("[2]", "[1]")), runner=r)
    assert rc == E_INVALID and "error[vf-overlap]" in out, out
    assert changes_made(r) == []
    rec = audit.tail(str(tmp_path / "state" / "audit.jsonl"))[0]
    assert (rec["result"], rec["errors"]) == ("invalid", ["vf-overlap"])


def test_drift_exit_status(tmp_path):
    rc, out = ctl(tmp_path, "drift", files(tmp_path))
    assert rc == E_OK and out.splitlines()[-1] == "no drift: the host matches the files", out
    rc, out = ctl(tmp_path, "drift", files(tmp_path, t=T.replace("tx_max: 1gbit", "tx_max: 1500mbit")))
    assert rc == E_CHANGES
    assert f"drift: ~ vf {PF} vf 1 max_tx_rate: 1000 -> 1500  [hitless]" in out, out
    rc, out = ctl(tmp_path, "drift", "--json", files(tmp_path, u=U.replace("trust: true", "trust: false")))
    doc = json.loads(out)
    assert rc == E_CHANGES and doc["exit"] == E_CHANGES
    assert [(c["object"], c["property"], c["live"], c["desired"]) for c in doc["drift"]] == \
        [(f"{PF} vf 2", "trust", True, False)]


def test_status_and_nothing_to_roll_back_or_commit(tmp_path):
    rc, out = ctl(tmp_path, "status", "--json")
    doc = json.loads(out)
    assert rc == E_OK and (doc["confirm"], doc["last_snapshot"], doc["journal"]) == (None, None, None)
    assert ctl(tmp_path, "rollback")[0] == 9
    assert ctl(tmp_path, "commit")[0] == 9


def test_usage_errors():
    with pytest.raises(SystemExit) as e:
        cli.main(["apply", "--skip", "libvirt", "x.yaml"])
    assert e.value.code == 2
    with pytest.raises(SystemExit):
        cli.main(["apply", "--confirm-within", "0", "x.yaml"])
