"""`vfwarpctl apply` of tenant files on a lab host (issue 19 over issue 16):
two tenants on their VLANs cannot reach each other (legacy mode); then the
host file asks for switchdev, a tenant's ACL becomes tc flower filters
with skip_sw on its VF's representor (in the adapter: `in_hw`), traffic
from the VF to the other host shows the drop while the rest passes, a
filter deleted by hand is drift and the next apply restores it, a failure
after the flower step is undone, a deleted tenant's filters go. The
flower layer's real-kernel check (tests/flowerhost.py: software filters
on veths, compile -> apply -> read back -> undo) runs here too, since the
build machine's kernel has no cls_flower.

Both hosts get VFs in namespaces (lib.vf.vfs_up); h1 is switched and
bridged (representors + uplink, as in test_switchdev.py) for the VFs'
traffic to pass; h2 stays in legacy mode as the peer. Runs on the
session's lab2 and leaves no module loaded.
"""
import json

import pytest

from lib.manager import NET_CLEAN, OPT, Host
from lib.switchdev import BRIDGE, UDP_RECV, UDP_SEND, filters, hw_packets, mode, pf_dev, reprs
from lib.vf import addr, ping, vfs_up

# tools/lab-tier's `provisioned` session, on bare hosts before site.yml runs:
# it evens the two sessions out (tools/lab-tier says how they were weighed)
pytestmark = pytest.mark.before_site

MAGIC = "76667701"
HOST_FILE = ("version: 1\nkind: host\nadapter: {pf: enp1s0, num_vfs: 2, eswitch_mode: switchdev, "
             "line_rate: 10gbit}\n")
RED = ("version: 1\nkind: tenant\nname: red\nvfs: {indices: [0]}\n"
       "acl:\n  - {action: deny, protocol: udp, dst_port: 5000-5999}\n")
BLUE = "version: 1\nkind: tenant\nname: blue\nvfs: {indices: [1]}\n"
FILES = {"host.yaml": HOST_FILE, "red.yaml": RED, "blue.yaml": BLUE}


def udp_to_h2(lab, port, n=20):
    """Datagrams h2's VF 0 receives on `port` of the n h1's VF 0 sends it."""
    for h, name, text in (("h2", "urecv", UDP_RECV), ("h1", "usend", UDP_SEND)):
        lab.ssh(h, f"cat > /tmp/{name}.py <<'EOF'\n{text}\nEOF")
    lab.ssh("h2", f"ip netns exec vf0 setsid python3 /tmp/urecv.py {port} 3 "
                  ">/tmp/urecv.out 2>&1 < /dev/null &")
    lab.ssh("h2", "sleep 1")
    lab.ssh("h1", f"ip netns exec vf0 python3 /tmp/usend.py {addr('h2', 0)} {port} {n}")
    lab.ssh("h2", "for i in $(seq 80); do pgrep -f urecv.py >/dev/null || break; sleep 0.1; done")
    return int(lab.ssh("h2", "cat /tmp/urecv.out").stdout.strip() or -1)


def owned(lab, dev):
    return {f["pref"]: f for f in filters(lab, dev)
            if any(str(a.get("cookie", "")).startswith(MAGIC) for a in f["options"]["actions"])}


def test_tenant_acl_offloaded_drops_in_the_adapter_drift_restored(lab2):
    h = Host(lab2)
    with vfs_up(lab2):
        h.install()
        # the layer's own check against this kernel's tc flower (software filters)
        r = h.sh(f"python3 {OPT}/tests/flowerhost.py selftest", check=False, timeout=600)
        print("\n" + r.stdout)
        assert r.returncode == 0, r.stdout + r.stderr

        bdf, pf = pf_dev(lab2)
        # two tenants (legacy mode, the adapter switches): untagged they
        # reach each other; each on its VLAN they cannot
        legacy = HOST_FILE.replace("eswitch_mode: switchdev, ", "")
        for name, vlans, pings in (("novlan", ("", ""), 3), ("vlans", ("vlan: 10\n", "vlan: 20\n"), 0)):
            h.write_files(f"/root/pol-{name}", {"host.yaml": legacy,
                                                "red.yaml": RED.split("acl:")[0] + vlans[0],
                                                "blue.yaml": BLUE + vlans[1]})
            r = h.ctl("acl", f"apply /root/pol-{name}")
            assert r.returncode == 0, r.stdout + r.stderr
            assert ping(lab2, "h1", 0, addr("h1", 1), count=3) == pings, (name, r.stdout)
        assert [v["vlan"] for v in h.vfs().values()] == [10, 20]
        h.write_files("/root/pol-acl", FILES)
        try:
            r = h.ctl("acl", "apply /root/pol-acl")
            print(r.stdout)
            assert r.returncode == 0, r.stdout + r.stderr
            assert f"eswitch pci/{bdf}: mode: legacy -> switchdev" in r.stdout
            assert mode(lab2, bdf) == "switchdev"
            rp = reprs(lab2)
            r0, r1 = rp["pf0vf0"]["ifname"], rp["pf0vf1"]["ifname"]
            # red's rule: one filter per address family, in the adapter only
            f = owned(lab2, r0)
            assert sorted(f) == [1000, 1001] and owned(lab2, r1) == {}, f
            assert [f[p]["protocol"] for p in (1000, 1001)] == ["ip", "ipv6"]
            for p in (1000, 1001):
                o = f[p]["options"]
                assert o.get("skip_sw") and o.get("in_hw"), o
                assert o["keys"]["dst_port"] == {"start": 5000, "end": 5999}, o["keys"]
            assert h.ctl("acl", "drift /root/pol-acl").returncode == 0

            # the VFs' traffic through the bridge of representors and uplink
            lab2.ssh("h1", f"ip link set {pf} up; " + BRIDGE % {"ports": f"{r0} {r1} {pf}"})
            assert ping(lab2, "h1", 0, addr("h2", 0)) == 3            # other traffic passes
            assert udp_to_h2(lab2, 5500) == 0                         # dropped in the adapter
            assert udp_to_h2(lab2, 7000) == 20                        # outside the range: passes
            f = owned(lab2, r0)
            assert hw_packets(f[1000]) == 20, f[1000]                 # tc -s: the adapter's count

            # drift: the filter deleted by hand, then restored by apply
            lab2.ssh("h1", f"tc filter del dev {r0} ingress pref 1000")
            r = h.ctl("acl", "drift /root/pol-acl")
            assert r.returncode == 4, r.stdout
            assert "drift: + flower enp1s0 vf 0 pref 1000: (none) -> ip ip_proto udp dst_port " \
                   "5000-5999: drop  [hitless]" in r.stdout, r.stdout
            assert udp_to_h2(lab2, 5500) == 20                        # nothing drops it now
            r = h.ctl("acl", "apply /root/pol-acl")
            assert r.returncode == 0 and "flower vf 0 pref 1000: add" in r.stdout, r.stdout
            assert owned(lab2, r0)[1000]["options"].get("in_hw")
            assert udp_to_h2(lab2, 5500) == 0
            assert h.ctl("acl", "drift /root/pol-acl").returncode == 0

            # a failure after the flower step: undone, drift clean against the old files
            h.write_files("/root/pol-acl2", dict(FILES, **{"red.yaml": RED.replace(
                "5000-5999", "5000-5499")}))
            before = {p: x["options"]["actions"][0]["cookie"] for p, x in owned(lab2, r0).items()}
            r = h.ctl("acl", "apply /root/pol-acl2", env="VFWARP_FAIL_AT=4:after")
            assert r.returncode == 5 and "restored: the host is back at its snapshot" in r.stdout, \
                r.stdout
            assert {p: x["options"]["actions"][0]["cookie"] for p, x in owned(lab2, r0).items()} \
                == before
            assert h.ctl("acl", "drift /root/pol-acl").returncode == 0

            # red's file deleted: its filters go, blue and the mode stay
            h.write_files("/root/pol-acl3", {"host.yaml": HOST_FILE, "blue.yaml": BLUE})
            r = h.ctl("acl", "apply /root/pol-acl3")
            assert r.returncode == 0, r.stdout
            assert owned(lab2, r0) == {} and mode(lab2, bdf) == "switchdev"
            assert udp_to_h2(lab2, 5500) == 20
            audit = [json.loads(x) for x in h.sh("cat /run/vfwarp-lab/acl/audit.jsonl").stdout.split("\n")
                     if x]
            assert [a["result"] for a in audit][-4:] == ["applied", "applied", "restored", "applied"]
        finally:
            lab2.ssh("h1", NET_CLEAN, check=False)
            lab2.ssh("h1", "ip link del br0 2>/dev/null; rm -rf /run/vfwarp-lab; "
                           f"devlink dev eswitch set pci/{bdf} mode legacy", check=False, timeout=900)
        dmesg = lab2.ssh("h1", "dmesg").stdout
        assert "WARNING" not in dmesg and "BUG" not in dmesg, dmesg[-3000:]
