"""The PF manager (vfwarpctl, pf-driver/manager) on a lab host, shared by
test_manager.py and test_manager_acl.py: its bundle installed in /opt on h1,
policy files written there, vfwarpctl run with a state dir of its own, and
the clean-up of the libvirt networks it made.
"""
import base64
import io
import json
import tarfile
from pathlib import Path

import yaml

HOST = "h1"
PF = "enp1s0"
OPT = "/opt/vfwarpctl"                 # where install() puts the bundle on HOST
MANAGER = Path(__file__).resolve().parents[3] / "pf-driver" / "manager"


def bundle():
    """vfwarpctl + its package + the invalid corpus + PyYAML (pure Python), tar.gz."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as t:
        t.add(MANAGER / "vfwarpctl", "vfwarpctl")
        for f in sorted((MANAGER / "vfwarp_manager").rglob("*.py")):     # subfolders too
            t.add(f, f"vfwarp_manager/{f.relative_to(MANAGER / 'vfwarp_manager')}")
        # the flower layer's real-kernel check (tests/flowerhost.py), run by
        # tests/lab/test_manager_acl.py where the kernel has cls_flower
        t.add(MANAGER / "tests" / "flowerhost.py", "tests/flowerhost.py")
        for f in sorted((MANAGER / "tests" / "policy" / "invalid").rglob("*.yaml")):
            t.add(f, f"invalid/{f.relative_to(MANAGER / 'tests' / 'policy' / 'invalid')}")
        for f in sorted(Path(yaml.__file__).parent.glob("*.py")):
            t.add(f, f"yaml/{f.name}")
    return base64.b64encode(buf.getvalue()).decode()


class Host:
    def __init__(self, lab):
        self.lab = lab

    def sh(self, cmd, check=True, timeout=300):
        return self.lab.ssh(HOST, cmd, check=check, timeout=timeout)

    def install(self):
        b = bundle()
        self.sh(f"rm -rf {OPT} /tmp/vfwctl.b64 && mkdir -p {OPT}")
        for i in range(0, len(b), 60000):       # one ssh argument stays far below 128 KiB
            self.sh(f"cat >> /tmp/vfwctl.b64 <<'EOF'\n{b[i:i + 60000]}\nEOF")
        self.sh(f"base64 -d /tmp/vfwctl.b64 | tar xz -C {OPT} && rm /tmp/vfwctl.b64")

    def write_files(self, d, files):
        self.sh(f"rm -rf {d} && mkdir -p {d}")
        for name, text in files.items():
            self.sh(f"cat > {d}/{name} <<'EOF'\n{text}EOF")

    def ctl(self, state, args, env="", timeout=300):
        """vfwarpctl ARGS with its own state dir; the ssh result (never raises)."""
        return self.sh(f"cd {OPT} && VFWARP_STATE_DIR=/run/vfwarp-lab/{state} {env} "
                       f"./vfwarpctl {args}; exit $?", check=False, timeout=timeout)
        # (`; exit $?`: the shell must not exec vfwarpctl in its place, so that a
        # SIGKILLed vfwarpctl shows as the shell's 137, not as a dead ssh session)

    def link_json(self):
        return self.sh(f"ip -j -d link show dev {PF}").stdout

    def vfs(self):
        """{vf: settings} read back with `ip -j -d link` (this test's own reading)."""
        (link,) = json.loads(self.link_json())
        out = {}
        for e in link.get("vfinfo_list", []):
            vl = e["vlan_list"][0]
            out[e["vf"]] = {"mac": e["address"], "vlan": vl.get("vlan", 0), "qos": vl.get("qos", 0),
                            "spoofchk": e["spoofchk"], "trust": e["trust"],
                            "link_state": e["link_state"], "max_tx_rate": e["rate"]["max_tx"],
                            "min_tx_rate": e["rate"]["min_tx"]}
        return out

    def numvfs(self):
        return int(self.sh(f"cat /sys/class/net/{PF}/device/sriov_numvfs").stdout)

    def audit(self, state):
        out = self.sh(f"cat /run/vfwarp-lab/{state}/audit.jsonl", check=False).stdout
        return [json.loads(ln) for ln in out.splitlines()]


# vfwarpctl's libvirt networks (prefix and metadata), removed when a module
# ends: later modules (tenant VMs) must not find them. Names come from
# virsh, and only ours are touched.
NET_CLEAN = """for n in $(virsh -q net-list --all --name | grep '^vfwarp-'); do
  virsh -q net-dumpxml --inactive "$n" | grep -q 'urn:vfwarp:manager:1' || continue
  virsh -q net-destroy "$n" >/dev/null 2>&1; virsh -q net-undefine "$n" >/dev/null; done; true"""
