"""The lab's hosts as the operator's playbook leaves them, shared by
test_provisioning.py and test_tenants.py: provisioning/site.yml run once from
bare hosts brings both hosts to VFs, the host policy, the tenants of the
inventory and a tenant VM per host (role guest: t1 on h1, t2 on h2, each with
VF 0 of tenant red's pool network), and runs rping and ib_write_bw -R between
the VMs. A tenant VM boots in minutes under nested TCG: one boot per session
serves both modules (conftest.py runs them after every other module, which
expect bare hosts, and ends the session with the hosts bare again).
"""
import os
import re
import subprocess
import time
from pathlib import Path

from vfwarp_lab.paths import guest_share_dir

from .pf import require_modules

TOP = Path(__file__).resolve().parents[3]
PROV = TOP / "provisioning"
HOSTS = ("h1", "h2")
GUESTS = ("t1", "t2")            # inventory/group_vars/vfwarp_lab.yml: t<index> on h<index>
GUEST_MAC = {"h1": "52:54:00:aa:01:0a", "h2": "52:54:00:aa:02:0a"}
RED = (0, 2)                     # tenant red's VFs: the guests' pool
RED_VLAN = 200
FREE_VF = 4                      # in no tenant of the inventory
PF = "enp1s0"
NUM_VFS = 8

# what site.yml and the tests set up, undone (also `make demo` step 10)
BARE = (TOP / "lab" / "bare-host.sh").read_text()

RECAP = re.compile(r"^(\S+)\s+: ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)"
                   r"\s+skipped=(\d+)\s+rescued=(\d+)\s+ignored=(\d+)", re.M)


def install_ansible():
    r = subprocess.run([str(PROV / "install-ansible.sh")], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout.strip().splitlines()[-1]


def playbook(lab, ansible_bin, *args, timeout=1200):
    env = dict(os.environ, VFWARP_LAB_STATE=str(lab.state), ANSIBLE_NOCOLOR="1",
               ANSIBLE_CONFIG=str(PROV / "ansible.cfg"),
               PATH=ansible_bin + os.pathsep + os.environ["PATH"])
    r = subprocess.run([f"{ansible_bin}/ansible-playbook", "site.yml", *args], cwd=PROV, env=env,
                       capture_output=True, text=True, timeout=timeout)
    recap = {m.group(1): dict(zip(("ok", "changed", "unreachable", "failed", "skipped"),
                                  map(int, m.groups()[1:6]))) for m in RECAP.finditer(r.stdout)}
    return r, recap


class Provisioned:
    """The hosts after the first site.yml run, and that run's outcome (the
    test of that run asserts on it)."""

    def __init__(self, lab, ansible_bin, run, recap, took):
        self.lab, self.ansible_bin = lab, ansible_bin
        self.first_run, self.first_recap, self.first_took = run, recap, took


def bare(lab):
    for h in HOSTS:
        lab.ssh(h, BARE, check=False, timeout=300)


def provision(lab):
    """Hosts made bare, then site.yml with the guests (their nested boot:
    3-6 minutes, the role waits up to 20); returns Provisioned. The run's
    success is not asserted here: its test does, with the output."""
    require_modules("vfwarp_pf.ko")
    assert (guest_share_dir() / "tenant" / "key").exists(), "run 'make tenant' first"
    ansible_bin = install_ansible()
    bare(lab)
    t0 = time.monotonic()
    r, recap = playbook(lab, ansible_bin, timeout=2700)
    took = time.monotonic() - t0
    print(f"\nsite.yml from bare hosts with their tenant VMs: {took:.0f}s (rc {r.returncode})")
    return Provisioned(lab, ansible_bin, r, recap, took)
