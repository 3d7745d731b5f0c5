"""The example policies (pf-driver/manager/examples/) validate, and what they
resolve to is what docs/policy.md says they mean."""
from pathlib import Path

import pytest

from vfwarp_manager.policy import validate as policy
from vfwarp_manager.policy.units import format_mac

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_switchdev_example_resolves():
    p = policy.load([str(EXAMPLES / "switchdev")])
    assert p.pf == "enp1s0"
    blue, red = p.tenants
    assert (blue.name, blue.vfs) == ("blue", [0, 1, 2, 3])
    # red asks for four VFs by count: the lowest free ones after blue's range
    assert (red.name, red.vfs) == ("red", [4, 5, 6, 7])
    s0 = policy.vf_settings(blue, 0, 0)
    s2 = policy.vf_settings(blue, 2, 2)
    assert format_mac(s0["mac"]) == "02:00:00:00:10:ff"          # per-VF override
    assert format_mac(s2["mac"]) == "02:00:00:00:10:02"          # mac_base + 2
    assert (s0["tx_max"], s2["tx_max"], s2["tx_share"]) == (3 * 10**9, 2 * 10**9, 500 * 10**6)
    assert (s2["vlan"], s2["qos"], s2["spoofchk"], s2["trust"]) == (100, 3, True, False)
    assert policy.tenant_class(p.host, blue)[0] == 2             # priority 3 -> tc 2
    assert policy.tenant_class(p.host, red)[0] == 0              # untagged priority 0 -> tc 0


def test_legacy_example_resolves():
    p = policy.load([str(EXAMPLES / "legacy")])
    (green,) = p.tenants
    assert green.vfs == [1, 3, 5]
    assert policy.vf_settings(green, 0, 1)["tx_max"] == 2500 * 10**6


def test_totalvfs_is_checked_when_known():
    policy.load([str(EXAMPLES / "switchdev")], totalvfs=16)
    with pytest.raises(policy.PolicyInvalid) as e:
        policy.load([str(EXAMPLES / "switchdev")], totalvfs=8)
    assert [x.rule for x in e.value.errors] == ["num-vfs-past-totalvfs"]


def test_every_error_reported_not_just_the_first(tmp_path):
    (tmp_path / "host.yaml").write_text((EXAMPLES / "legacy" / "host.yaml").read_text())
    (tmp_path / "t.yaml").write_text("version: 1\nkind: tenant\nname: t\nvfs: {range: 0-1}\n"
                                     "vlan: 5000\ntrust: yes\nfoo: 1\n")
    with pytest.raises(policy.PolicyInvalid) as e:
        policy.load([str(tmp_path)])
    assert [(x.where.line, x.rule) for x in e.value.errors] == \
        [(5, "range"), (6, "bool-spelling"), (7, "unknown-key")]


def test_no_host_file(tmp_path):
    (tmp_path / "t.yaml").write_text("version: 1\nkind: tenant\nname: t\nvfs: {count: 1}\n")
    with pytest.raises(policy.PolicyInvalid) as e:
        policy.load([str(tmp_path)])
    assert [x.rule for x in e.value.errors] == ["host-missing"]
