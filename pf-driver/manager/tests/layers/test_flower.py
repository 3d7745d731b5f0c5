"""The flower layer: a tenant's ACL rules compiled into tc flower filters on
its VFs' representors, read back from `tc -j filter show` (and tc's text
for police), planned and drifted. tests/data/tc-filter-vf0.{json,txt} are
CONSTRUCTED from iproute2's printers (tests/data/README.md); the real
kernel and tc run in test_native_flower_layer (software filters in a
private network namespace, where the kernel has cls_flower) and on a lab
host (tests/lab/test_manager.py, offloaded with skip_sw)."""
import io
import subprocess
import sys
from pathlib import Path

import pytest

from replayhost import BLUE, DATA, answers, write_policy
from vfwarp_manager.cli import vfwarpctl as cli
from vfwarp_manager.layers import desired, flower as flower_layer, host as layers
from vfwarp_manager.policy import validate as policy
from vfwarp_manager.txn import plan
from vfwarp_manager.layers.actions import Step

ACL = ("acl:\n"
       "  - {action: deny, protocol: tcp, dst: 10.20.0.0/16, dst_port: 22}\n"
       "  - {action: police, protocol: udp, police: {rate: 100mbit, burst: 65536}}\n"
       "  - {action: mirror, mirror_to: 1}\n")
OTHER = desired.COOKIE_MAGIC + "00" * 12        # owned, asked for by no file


def compiled(tmp_path, tenant=BLUE + ACL):
    return desired.compile_policy(policy.load(write_policy(tmp_path, tenant)))


def sample(want):
    """The vf0 sample with the cookies of the files' rules 0 and 1 (rule 3's
    pref 1006 belongs to no file: an owned leftover)."""
    c = {f["cookie"] for f in want[0].values()}
    c0, c1 = want[0][1000]["cookie"], want[0][1002]["cookie"]
    assert len(c) == 3
    sub = lambda t: t.replace("COOKIE0", c0).replace("COOKIE1", c1).replace("COOKIE3", OTHER)  # noqa: E731
    return sub((DATA / "tc-filter-vf0.json").read_text()), sub((DATA / "tc-filter-vf0.txt").read_text())


def test_read_back_owned_filters_only(tmp_path):
    want = compiled(tmp_path)["flower"]
    r = answers(tc={"enp1s0pf0vf0": sample(want)})
    got = flower_layer.read_dev(r, "enp1s0pf0vf0", None, {"enp1s0pf0vf0": 0, "enp1s0pf0vf1": 1})
    assert sorted(got) == [1000, 1002, 1006]          # pref 10 has no cookie of ours
    assert got[1000] == dict(flower_layer.target_filter(
        {k: v for k, v in want[0][1000].items() if k != "owner"}, True), handle=1)
    # police: not in tc -j; from the text, for re-creating it on undo
    assert got[1002]["_police"] == {"rate": 100 * 10**6 // 8, "burst": 65536}
    assert (got[1006]["action"], got[1006]["mirror_vf"], got[1006]["protocol"]) == ("mirror", 1, "all")


def test_filters_compile_to_tc_argv(tmp_path):
    want = compiled(tmp_path)["flower"][0]
    reprs = {0: "enp1s0r0", 1: "enp1s0r1"}.__getitem__
    argv = {p: flower_layer.add_argv(["tc"], "enp1s0r0", p, dict(f, handle=1), True, reprs)
            for p, f in want.items()}
    tail = lambda p: argv[p][argv[p].index("skip_sw"):]  # noqa: E731
    assert argv[1000][:13] == ["tc", "filter", "add", "dev", "enp1s0r0", "ingress", "protocol", "ip",
                               "pref", "1000", "handle", "1", "flower"]
    assert tail(1000) == ["skip_sw", "ip_proto", "tcp", "dst_ip", "10.20.0.0/16", "dst_port", "22",
                          "action", "drop", "cookie", want[1000]["cookie"]]
    # police: bits/s as tc takes them, burst in bytes, over the rate dropped
    assert tail(1003) == ["skip_sw", "ip_proto", "udp", "action", "police", "rate", "100000000bit",
                          "burst", "65536", "conform-exceed", "drop/pipe", "cookie", want[1003]["cookie"]]
    assert argv[1003][7] == "ipv6"                    # the IPv6 twin of rule 1
    assert tail(1004) == ["skip_sw", "action", "mirred", "egress", "mirror", "dev", "enp1s0r1",
                          "cookie", want[1004]["cookie"]]
    assert argv[1004][7] == "all"
    assert "skip_sw" not in flower_layer.add_argv(["tc"], "r", 1000, dict(want[1000], handle=1),
                                                  False, reprs)


def test_plan_and_drift_show_missing_changed_and_leftover_filters(tmp_path):
    files = write_policy(tmp_path, BLUE + ACL)
    d = compiled(tmp_path)
    want = d["flower"]
    changes = plan.diff(plan.read_live(answers(tc={"enp1s0pf0vf0": sample(want)}), d), d)
    got = {(c.obj, c.prop): (c.live, c.desired) for c in changes if c.layer == "flower"}
    assert got == {
        ("enp1s0 vf 0", "pref 1003"): (None, "ipv6 ip_proto udp: police 100000000bit burst 65536"),
        ("enp1s0 vf 0", "pref 1004"): (None, "all: mirror to vf 1"),
        ("enp1s0 vf 0", "pref 1006"): ("all: mirror to vf 1", None),
        ("enp1s0 vf 1", "pref 1000"): (None, "ip ip_proto tcp dst 10.20.0.0/16 dst_port 22: drop"),
        ("enp1s0 vf 1", "pref 1002"): (None, "ip ip_proto udp: police 100000000bit burst 65536"),
        ("enp1s0 vf 1", "pref 1003"): (None, "ipv6 ip_proto udp: police 100000000bit burst 65536"),
        ("enp1s0 vf 1", "pref 1004"): (None, "all: mirror to vf 1"),
    }
    assert all(c.disruption == "hitless" for c in changes if c.layer == "flower")
    out = io.StringIO()
    rc = cli.main(["drift", *files], runner=answers(tc={"enp1s0pf0vf0": sample(want)}), out=out)
    assert rc == cli.EXIT_CHANGES
    assert "drift: - flower enp1s0 vf 0 pref 1006: all: mirror to vf 1 -> (none)  [hitless]" \
        in out.getvalue(), out.getvalue()
    assert "? flower" not in out.getvalue()


def test_steps_remove_before_adding_and_undo_recreates_what_was_read(tmp_path):
    want = compiled(tmp_path)["flower"]
    r = answers(tc={"enp1s0pf0vf0": sample(want)})
    by = {f"enp1s0pf0vf{n}": n for n in range(4)}
    have = {0: flower_layer.read_dev(r, "enp1s0pf0vf0", None, by)}
    # the police rule edited: its filters differ by cookie and go, then come back
    edited = {vf: {p: flower_layer.target_filter(
        {k: v for k, v in f.items() if k != "owner"} | {"cookie": OTHER if p in (1002, 1003) else f["cookie"]},
        True) for p, f in fs.items()} for vf, fs in want.items()}
    where = {"dev": "pci/0000:01:00.0", "netns": None, "reprs": None}
    steps = flower_layer.steps(where, have, edited, True, Step)
    vf0 = [(s.summary.split(":")[0], s.obj) for s in steps if s.obj.startswith("vf 0")]
    assert vf0 == [("remove", "vf 0 pref 1006"), ("remove", "vf 0 pref 1002"),
                   ("add", "vf 0 pref 1002"), ("add", "vf 0 pref 1003"), ("add", "vf 0 pref 1004")]
    rm = steps[1]
    assert rm.do[0]["flower"] == "del" and rm.do[0]["filter"] == {"protocol": "ip", "handle": 1}
    # undone by re-creating the filter as read, police values from tc's text included
    undo = rm.undo[0]
    assert undo["flower"] == "add" and undo["filter"]["_police"] == {"rate": 12500000, "burst": 65536}
    assert undo["filter"]["cookie"] == want[0][1002]["cookie"] and undo["skip_sw"] is True
    # every step's undo is its inverse
    for s in steps:
        assert {a["flower"] for a in s.do} | {a["flower"] for a in s.undo} == {"add", "del"}
    # the target of the PF model, with the switch for software filters
    m = layers.PfHost("enp1s0", flower=True, skip_sw=False)
    t = m.target(dict(compiled(tmp_path)))["flower"]
    assert t[0][1000]["skip_sw"] is False and t[0][1000]["in_hw"] is None


def test_native_flower_layer():
    """compile -> apply -> read back -> drift -> undo with the real tc and
    kernel (tests/flowerhost.py selftest); skipped where the kernel has no
    cls_flower (this machine's: CONFIG_NET_CLS_FLOWER is not set), run on a
    lab host by tests/lab/test_manager.py."""
    p = subprocess.run([sys.executable, str(Path(__file__).resolve().parents[1] / "flowerhost.py"), "selftest"],
                       capture_output=True, text=True, timeout=300)
    if p.returncode == 77:
        pytest.skip(p.stdout.strip())
    assert p.returncode == 0, p.stdout + p.stderr


def test_a_filter_edited_by_hand_is_drift(tmp_path):
    """An owned filter given an extra match (or another action) keeping its
    cookie differs from its rule: plan replaces it."""
    d = compiled(tmp_path)
    js, txt = sample(d["flower"])
    for edit in (('"dst_ip":"10.20.0.0/16"', '"dst_ip":"10.20.0.0/16","src_ip":"10.1.0.0/16"'),
                 ('"dst_port":22}', '"dst_port":22,"ip_tos":"0x20"}')):
        assert edit[0] in js
        state = plan.read_live(answers(tc={"enp1s0pf0vf0": (js.replace(*edit), txt)}), d)
        got = [c for c in plan.diff(state, d) if c.layer == "flower" and c.prop == "pref 1000"
               and c.obj == "enp1s0 vf 0"]
        assert len(got) == 1 and got[0].action == "change", got


def test_the_validators_filter_count_is_the_compilers():
    """acl-capacity counts filters as compile_rule makes them."""
    base = {"action": "deny", "direction": "egress", "src": None, "dst": None, "dst_port": None,
            "police": None, "mirror_to": None}
    for proto in ("ipv4", "ipv6", "tcp", "udp", "icmp", "any"):
        for sub in ({}, {"dst": "10.0.0.0/8"}, {"src": "2001:db8::/32"}):
            fam = {4 if "." in v else 6 for v in sub.values()}
            if proto in ("ipv4", "ipv6") and fam and fam != {int(proto[-1])}:
                continue                                   # acl-family refuses these
            r = dict(base, protocol=proto, **sub)
            assert len(flower_layer.compile_rule(0, r, "c")) == policy.acl_filters(r), r
