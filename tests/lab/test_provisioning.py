"""The Ansible collection (provisioning/, issue 20) against the lab's hosts:
the real ansible-playbook (pinned in requirements-ansible.txt, installed by
provisioning/install-ansible.sh into the cache) runs provisioning/site.yml with
the lab as its inventory (the vfwarp.fleet.vfwarp_lab plugin over the lab's
state dir). Each host starts bare (no vfwarp setup: the fixture removes what
an earlier run left) and is left bare again, so the other lab tests sharing
the hosts find them as they expect.
"""
import json
import os
import re
import subprocess
import time
from pathlib import Path

import pytest

from vfwarp_lab.paths import guest_share_dir

TOP = Path(__file__).resolve().parents[2]
PROV = TOP / "provisioning"
HOSTS = ("h1", "h2")
PF = "enp1s0"
PF_ID = "1234:f0a0"

BARE = r"""
systemctl disable --now vfwarp-policy.service 2>/dev/null
rm -f /etc/systemd/system/vfwarp-policy.service /etc/modules-load.d/vfwarp.conf \
      /etc/modprobe.d/vfwarp.conf /usr/local/sbin/vfwarpctl /etc/libibverbs.d/vfwarp.driver
rm -rf /etc/vfwarp /opt/vfwarp /run/vfwarp /var/log/vfwarp /usr/local/lib/vfwarp
U=/lib/modules/$(uname -r)/updates/vfwarp
[ -d $U ] && rm -rf $U && depmod -a
systemctl daemon-reload
for i in $(seq 0 7); do ip netns del vf$i 2>/dev/null; done
D=/sys/bus/pci/devices/$(lspci -D -n -d %s | awk 'NR==1{print $1}')
[ -d /sys/module/vfwarp_pf ] && echo 0 > $D/sriov_numvfs
rmmod vfwarp_vf 2>/dev/null; rmmod vfwarp_pf 2>/dev/null; true
""" % PF_ID

# The longer scenarios (check/diff then apply, a refusing host, a reboot) take
# about 25 minutes more of playbook runs under TCG: by hand for now, so that
# `make test` stays within its time budget (docs/status.md, issue 20).
SLOW = pytest.mark.skipif(not os.environ.get("VFWARP_LAB_SLOW"),
                          reason="long Ansible scenario: set VFWARP_LAB_SLOW=1 to run it")

RECAP = re.compile(r"^(\S+)\s+: ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)"
                   r"\s+skipped=(\d+)\s+rescued=(\d+)\s+ignored=(\d+)", re.M)

# The tenants after a change of variables: green moves to VLAN 301 and loses VF 5.
CHANGED_TENANTS = {"tenant_list": [
    {"name": "green", "vfs": {"indices": [1, 3]}, "vlan": 301, "vlan_priority": 5, "trust": True,
     "vf_rate": {"tx_max": "2500mbit", "tx_share": "1gbit"}},
    {"name": "blue", "vfs": {"range": "6-7"}, "mac_base": "02:00:00:00:10:00", "vlan": 100,
     "spoofchk": False, "link_state": "enable"}]}


@pytest.fixture(scope="module")
def ansible_bin():
    r = subprocess.run([str(PROV / "install-ansible.sh")], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout.strip().splitlines()[-1]


@pytest.fixture(scope="module")
def lab(lab2):
    assert (guest_share_dir() / "modules" / "vfwarp_pf.ko").exists(), "run 'make modules' first"
    for h in HOSTS:
        lab2.ssh(h, BARE, check=False)
    try:
        yield lab2
    finally:
        for h in HOSTS:
            lab2.ssh(h, BARE, check=False)
        for h in HOSTS:
            assert "vfwarp_pf" not in lab2.ssh(h, "lsmod").stdout


def playbook(lab, ansible_bin, *args, timeout=1200):
    env = dict(os.environ, VFWARP_LAB_STATE=str(lab.state), ANSIBLE_NOCOLOR="1",
               ANSIBLE_CONFIG=str(PROV / "ansible.cfg"),
               PATH=ansible_bin + os.pathsep + os.environ["PATH"])
    r = subprocess.run([f"{ansible_bin}/ansible-playbook", "site.yml", *args], cwd=PROV, env=env,
                       capture_output=True, text=True, timeout=timeout)
    recap = {m.group(1): dict(zip(("ok", "changed", "unreachable", "failed", "skipped"),
                                  map(int, m.groups()[1:6]))) for m in RECAP.finditer(r.stdout)}
    return r, recap


def vfs(lab, host):
    (link,) = json.loads(lab.ssh(host, f"ip -j -d link show dev {PF}").stdout)
    return {e["vf"]: (e["vlan_list"][0].get("vlan", 0), e["address"], e["trust"])
            for e in link.get("vfinfo_list", [])}


def host_state(lab, host):
    """What a run could change, read back from the host itself."""
    return {"link": vfs(lab, host),
            "numvfs": lab.ssh(host, f"cat /sys/class/net/{PF}/device/sriov_numvfs").stdout.strip(),
            "files": lab.ssh(host, "cd /etc/vfwarp/policy && sha256sum *.yaml").stdout,
            "audit": lab.ssh(host, "wc -l < /var/log/vfwarp/audit.jsonl").stdout}


def assert_provisioned(lab, host, green_vlan=300, green=(1, 3, 5)):
    assert lab.ssh(host, f"cat /sys/class/net/{PF}/device/sriov_numvfs").stdout.strip() == "8"
    got = vfs(lab, host)
    for n in range(8):
        want = green_vlan if n in green else 100 if n in (6, 7) else 0
        assert got[n][0] == want, (host, n, got)
    assert got[6][1] == "02:00:00:00:10:00" and got[7][1] == "02:00:00:00:10:01", got
    assert lab.ssh(host, "vfwarpctl drift /etc/vfwarp/policy", check=False).returncode == 0
    assert lab.ssh(host, "systemctl is-enabled vfwarp-policy.service").stdout.strip() == "enabled"
    mods = lab.ssh(host, "cat /etc/modules-load.d/vfwarp.conf").stdout.split()
    assert "vfwarp_pf" in mods and "vfwarp_vf" in mods


def test_site_from_bare_hosts_then_idempotent(lab, ansible_bin):
    for h in HOSTS:
        assert "vfwarp_pf" not in lab.ssh(h, "lsmod").stdout
    r, recap = playbook(lab, ansible_bin)
    assert r.returncode == 0, r.stdout[-6000:] + r.stderr[-3000:]
    assert sorted(recap) == list(HOSTS), r.stdout[-3000:]
    for h in HOSTS:
        assert recap[h]["failed"] == 0 and recap[h]["unreachable"] == 0, recap
        assert recap[h]["changed"] > 0, recap
        assert_provisioned(lab, h)
    before = {h: host_state(lab, h) for h in HOSTS}
    r, recap = playbook(lab, ansible_bin)
    assert r.returncode == 0, r.stdout[-6000:]
    assert {h: recap[h]["changed"] for h in HOSTS} == {h: 0 for h in HOSTS}, r.stdout[-6000:]
    assert {h: host_state(lab, h) for h in HOSTS} == before


@SLOW
def test_check_diff_shows_the_plan_changes_nothing_then_the_run_applies_it(lab, ansible_bin, tmp_path):
    vars_file = tmp_path / "tenants.json"
    vars_file.write_text(json.dumps(CHANGED_TENANTS))
    before = {h: host_state(lab, h) for h in HOSTS}
    r, recap = playbook(lab, ansible_bin, "--check", "--diff", "-e", f"@{vars_file}")
    assert r.returncode == 0, r.stdout[-6000:]
    out = r.stdout
    # the plan, as the tenant task's diff: green's VLAN on VFs 1, 3; VF 5 back to no VLAN
    for n in (1, 3):
        assert f"-vf {PF} vf {n} vlan: 300" in out and f"+vf {PF} vf {n} vlan: 301  [vf-reset]" in out, out
    assert f"-vf {PF} vf 5 vlan: 300" in out and f"+vf {PF} vf 5 vlan: 0  [vf-reset]" in out, out
    assert "+  vlan: 301" in out or "+vlan: 301" in out, out          # the tenant file's diff
    for h in HOSTS:
        assert recap[h]["changed"] >= 1 and recap[h]["failed"] == 0, recap
    assert {h: host_state(lab, h) for h in HOSTS} == before           # nothing changed
    r, recap = playbook(lab, ansible_bin, "-e", f"@{vars_file}")
    assert r.returncode == 0, r.stdout[-6000:]
    for h in HOSTS:
        assert recap[h]["failed"] == 0, recap
        assert_provisioned(lab, h, green_vlan=301, green=(1, 3))
        last = json.loads(lab.ssh(h, "tail -n 2 /var/log/vfwarp/audit.jsonl | head -n 1").stdout)
        assert last["command"] == "apply" and last["result"] == "applied", last
        assert sorted(last["changes"]) == sorted(
            [f"vfs {PF} vf 1: vlan: 300 -> 301", f"vfs {PF} vf 3: vlan: 300 -> 301",
             f"vfs {PF} vf 5: vlan: 300 -> 0, qos: 5 -> 0, trust: true -> false, "
             "max_tx_rate: 2500 -> 0, min_tx_rate: 1000 -> 0"]), last
        commit = json.loads(lab.ssh(h, "tail -n 1 /var/log/vfwarp/audit.jsonl").stdout)
        assert (commit["command"], commit["result"]) == ("commit", "committed"), commit
    r, recap = playbook(lab, ansible_bin)                               # back to the inventory's
    assert r.returncode == 0 and all(recap[h]["failed"] == 0 for h in HOSTS), r.stdout[-6000:]
    for h in HOSTS:
        assert_provisioned(lab, h)


@SLOW
def test_a_host_that_refuses_stays_at_its_old_state_the_other_is_provisioned(lab, ansible_bin,
                                                                           tmp_path):
    r, recap = playbook(lab, ansible_bin)                               # the inventory's state
    assert r.returncode == 0, r.stdout[-6000:]
    vars_file = tmp_path / "tenants.json"
    # one batch of both hosts, no failure limit: Ansible ends a play whose batch failed
    # entirely, whatever max_fail_percentage says, so h1 alone in a batch would stop h2
    vars_file.write_text(json.dumps(dict(CHANGED_TENANTS, vfwarp_serial="100%",
                                         vfwarp_max_fail_percentage=100)))
    before = host_state(lab, "h1")
    # h1 refuses: another vfwarpctl holds its lock (the apply waits 10 s, then exit 7)
    lab.ssh("h1", "mkdir -p /run/vfwarp && systemd-run --unit=vfw-hold-lock "
                  "flock /run/vfwarp/lock sleep 600")
    try:
        r, recap = playbook(lab, ansible_bin, "-e", f"@{vars_file}")
    finally:
        lab.ssh("h1", "systemctl stop vfw-hold-lock", check=False)
    assert r.returncode != 0
    assert recap["h1"]["failed"] == 1 and recap["h2"]["failed"] == 0, recap
    assert "exit 7 (busy" in r.stdout, r.stdout[-6000:]
    assert host_state(lab, "h1") == before                               # files and VFs as before
    assert_provisioned(lab, "h1")
    assert_provisioned(lab, "h2", green_vlan=301, green=(1, 3))
    r, recap = playbook(lab, ansible_bin)                               # converge back
    assert r.returncode == 0, r.stdout[-6000:]
    for h in HOSTS:
        assert_provisioned(lab, h)


@SLOW
def test_reboot_brings_vfs_and_policy_back_without_ansible(lab):
    h = "h2"
    before = vfs(lab, h)
    boot_id = lab.ssh(h, "cat /proc/sys/kernel/random/boot_id").stdout
    lab.ssh(h, "touch /root/before-reboot && systemd-run --on-active=1 systemctl reboot", check=False)
    deadline = time.monotonic() + 600
    while True:
        time.sleep(10)
        try:
            r = lab.ssh(h, "cat /proc/sys/kernel/random/boot_id", check=False, timeout=30)
            if r.returncode == 0 and r.stdout != boot_id:
                break
        except subprocess.TimeoutExpired:
            pass
        assert time.monotonic() < deadline, f"{h} did not come back from its reboot"
    assert lab.ssh(h, "test -e /root/before-reboot", check=False).returncode == 0, \
        "the host's disk overlay did not survive the reboot"
    assert lab.ssh(h, "systemctl is-active vfwarp-policy.service").stdout.strip() == "active"
    assert vfs(lab, h) == before
    assert_provisioned(lab, h)
