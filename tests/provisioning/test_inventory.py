"""The lab inventory plugin (vfwarp.fleet.vfwarp_lab) through the real
ansible-inventory of the pinned controller: a state dir in the lab's format
(lab/vfwarp_lab/hosts.py writes lab.json) with one host whose process runs
(a process of this test that names the state dir in its argv, as every lab
QEMU does) and one whose process is gone."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

TOP = Path(__file__).resolve().parents[2]
PROV = TOP / "provisioning"
sys.path.insert(0, str(TOP / "lab"))


@pytest.fixture(scope="module")
def ansible_bin():
    r = subprocess.run([str(PROV / "install-ansible.sh")], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout.strip().splitlines()[-1]


def inventory(ansible_bin, state):
    env = dict(os.environ, VFWARP_LAB_STATE=str(state), ANSIBLE_CONFIG=str(PROV / "ansible.cfg"))
    r = subprocess.run([f"{ansible_bin}/ansible-inventory", "--list"], cwd=PROV, env=env,
                       capture_output=True, text=True, timeout=120)
    return r


def test_lists_running_hosts_with_their_ssh_ports(tmp_path, ansible_bin):
    from vfwarp_lab.hosts import HostSpec
    from dataclasses import asdict
    state = tmp_path / "lab"
    state.mkdir()
    alive = subprocess.Popen(["sh", "-c", "sleep 300", str(state)])
    dead = subprocess.Popen(["true", str(state)])
    dead.wait()
    try:
        hosts = [HostSpec("h1", 1, 40001, pid=alive.pid), HostSpec("h2", 2, 40002, pid=dead.pid)]
        (state / "lab.json").write_text(json.dumps(
            {"hosts": [asdict(h) for h in hosts], "hub_pid": 0, "image": "/img"}))
        r = inventory(ansible_bin, state)
        assert r.returncode == 0, r.stderr
        inv = json.loads(r.stdout)
        assert inv["vfwarp_lab"]["hosts"] == ["h1"] and inv["vfwarp_hypervisors"]["hosts"] == ["h1"]
        # (values from an inventory source are not templates: ansible-inventory marks them)
        hv = {k: v.get("__ansible_unsafe", v) if isinstance(v, dict) else v
              for k, v in inv["_meta"]["hostvars"]["h1"].items()}
        assert (hv["ansible_host"], hv["ansible_port"], hv["ansible_user"]) == ("127.0.0.1", 40001, "root")
        assert hv["ansible_ssh_private_key_file"] == "/img/id_ed25519"
        assert hv["hypervisor_modules_src"] == "/mnt/vfwarp/modules"      # the lab's group_vars
        assert "h2" not in inv["_meta"]["hostvars"]
    finally:
        alive.kill()
        alive.wait()
    r = inventory(ansible_bin, state)                    # its process gone too: no hosts
    assert r.returncode == 0 and "h1" not in json.loads(r.stdout)["_meta"]["hostvars"]


def test_a_missing_state_dir_is_an_error_naming_it(tmp_path, ansible_bin):
    r = inventory(ansible_bin, tmp_path / "nolab")
    assert "no lab state at %s" % (tmp_path / "nolab" / "lab.json") in r.stderr, r.stderr
