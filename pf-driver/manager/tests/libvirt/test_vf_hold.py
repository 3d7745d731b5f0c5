"""reapply-vf and the libvirt network hook (libvirt/hold.py, libvirt/hook.py,
cli/vf.py): what libvirt does to a pool VF (MAC and VLAN with priority 0)
put back from the files, one VF only, the lock and journal respected; the
hook's input filtered and its hold started detached. On the real libvirt:
tests/lab/test_manager.py::test_pool_network_hands_out_a_tenant_vf_held_at_its_policy...
"""
import io
import json
import os
import subprocess
import sys
import time

import pytest

from qosdevice import PF, QosDevice
from qosfiles import ctl
from vfwarp_manager.cli import vfwarpctl as cli
from vfwarp_manager.libvirt import hook as lh
from vfwarp_manager.txn import statedir
from vfwarp_manager.libvirt import hold as vh
from vfwarp_manager.txn.lock import Lock

HOST = "version: 1\nkind: host\nadapter: {pf: enp1s0, num_vfs: 8, line_rate: 10gbit}\n"
GREEN = ("version: 1\nkind: tenant\nname: green\nvfs: {indices: [1, 3, 5]}\nvlan: 300\n"
         "vlan_priority: 5\ntrust: true\n")
BLUE = "version: 1\nkind: tenant\nname: blue\nvfs: {range: 6-7}\nmac_base: \"02:00:00:00:10:00\"\n"


def files(tmp_path):
    d = tmp_path / "pol"
    d.mkdir(exist_ok=True)
    for name, text in (("host.yaml", HOST), ("green.yaml", GREEN), ("blue.yaml", BLUE)):
        if not (d / name).exists():          # a test may have edited one
            (d / name).write_text(text)
    return str(d)


@pytest.fixture
def applied(tmp_path):
    dev = QosDevice(numvfs=0)
    rc, out = ctl(tmp_path, dev, "apply", files(tmp_path))
    assert rc == 0, out
    return dev


def libvirt_attach(dev, n, mac="52:54:00:00:30:01"):
    """What libvirt does to a pool VF on attach: its MAC, the network's tag, priority 0."""
    dev.st["vfs"][n].update(mac=mac, qos=0)


def test_reapply_vf_puts_the_priority_back_and_only_on_that_vf(tmp_path, applied):
    libvirt_attach(applied, 1)
    libvirt_attach(applied, 3)
    before = json.loads(json.dumps(applied.st))
    rc, out = ctl(tmp_path, applied, "reapply-vf", "--vf", "1", "--json", files(tmp_path))
    assert rc == 0, out
    # vlan and qos go together (IFLA_VF_VLAN); the MAC is libvirt's: green has none
    assert json.loads(out)["corrected"] == {"qos": [0, 5], "vlan": [300, 300]}
    assert applied.st["vfs"][1] == dict(before["vfs"]["1"], qos=5)
    assert applied.st["vfs"][1]["mac"] == "52:54:00:00:30:01"
    assert applied.st["vfs"][3]["qos"] == 0                   # another VF: not touched
    rc, out = ctl(tmp_path, applied, "reapply-vf", "--vf", "1", files(tmp_path))
    assert (rc, out) == (0, "enp1s0 vf 1: at the files' settings\n")


def test_a_file_mac_is_put_back_a_pool_vf_is_left_alone(tmp_path, applied):
    libvirt_attach(applied, 6)
    ctl(tmp_path, applied, "reapply-vf", "--vf", "6", files(tmp_path))
    assert applied.st["vfs"][6]["mac"] == "02:00:00:00:10:00"
    applied.st["vfs"][0]["vlan"] = 42              # pool VF 0 (no tenant's)
    rc, out = ctl(tmp_path, applied, "reapply-vf", "--vf", "0", files(tmp_path))
    assert rc == 0 and "belongs to no tenant" in out, out
    assert applied.st["vfs"][0]["vlan"] == 42


def test_lock_busy_or_journal_present_changes_nothing(tmp_path, applied):
    libvirt_attach(applied, 1)
    sd = statedir.StateDir(str(tmp_path / "state"))
    lock = Lock(sd.lock).acquire()
    try:
        rc, out = ctl(tmp_path, applied, "reapply-vf", "--vf", "1", files(tmp_path))
    finally:
        lock.release()
    assert rc == 7 and "lock busy" in out, out
    assert applied.st["vfs"][1]["qos"] == 0
    statedir.write_json(sd.journal, {"x": 1})
    rc, out = ctl(tmp_path, applied, "reapply-vf", "--vf", "1", files(tmp_path))
    assert rc == 7 and "journal.json exists" in out, out
    assert applied.st["vfs"][1]["qos"] == 0


def test_bad_input_is_refused(tmp_path, applied):
    rc, out = ctl(tmp_path, applied, "reapply-vf", "--pci", "0000:01:00.2; rm -rf /", files(tmp_path))
    assert rc == 3 and "is not a PCI address" in out, out
    rc, out = ctl(tmp_path, applied, "reapply-vf", "--vf", "9", files(tmp_path))
    assert rc == 3 and "no VF 9" in out, out
    (tmp_path / "pol" / "green.yaml").write_text(GREEN + "bogus: 1\n")
    rc, out = ctl(tmp_path, applied, "reapply-vf", "--vf", "1", files(tmp_path))
    assert rc == 1 and "green.yaml:8:1: error[unknown-key]" in out, out
    with pytest.raises(SystemExit):
        ctl(tmp_path, applied, "reapply-vf", "--vf", "1", "--hold", "601", files(tmp_path))


def test_vf_of_pci_from_sysfs_links(tmp_path):
    pf = tmp_path / "0000:01:00.0"
    (pf / "net" / "enp1s0").mkdir(parents=True)
    for n, fn in ((0, 1), (1, 2)):
        vf = tmp_path / f"0000:01:00.{fn}"
        vf.mkdir()
        (vf / "physfn").symlink_to(pf)
        (pf / f"virtfn{n}").symlink_to(vf)
    assert vh.vf_of_pci("0000:01:00.2", sysfs=str(tmp_path)) == ("enp1s0", 1)
    with pytest.raises(vh.HoldError, match="no such VF"):
        vh.vf_of_pci("0000:01:00.5", sysfs=str(tmp_path))
    with pytest.raises(vh.HoldError, match="not a PCI address"):
        vh.vf_of_pci("../../etc", sysfs=str(tmp_path))


class LateLibvirt(QosDevice):
    """libvirt programs the VF only after the hold's first check."""

    def __init__(self, base, n):
        self.__dict__.update(base.__dict__)
        self.n, self.reads = n, 0

    def _run(self, a):
        if a[:3] == ["ip", "-j", "-d"]:
            self.reads += 1
            if self.reads == 2:          # the check after the monitor's event
                libvirt_attach(self, self.n)
        return super()._run(a)


def test_hold_corrects_at_a_link_event_within_its_window(tmp_path, applied):
    dev = LateLibvirt(applied, 1)
    sd = statedir.StateDir(str(tmp_path / "state"))
    from vfwarp_manager.layers import desired as dz
    from vfwarp_manager.policy import validate as policy
    load = lambda: dz.compile_policy(policy.load([files(tmp_path)]))   # noqa: E731
    lines = []
    hold = vh.Hold(dev, sd, load, PF, 1, lines.append)
    # a monitor that reports one link event after 0.3 s; POLL (2 s) is longer
    # than the window, so a correction inside it comes from the event
    t = time.monotonic()
    hold.run(1.2, monitor=(sys.executable, "-c", "import time; time.sleep(0.3); print('x', flush=True); "
                           "time.sleep(30)"))
    assert time.monotonic() - t < 2.0
    assert hold.corrected == 1 and dev.st["vfs"][1]["qos"] == 5, lines
    assert lines == ["enp1s0 vf 1: qos 0 -> 5"]


# ---- the hook --------------------------------------------------------------

def hook_input(net="vfwarp-green", ours=True, plug="hostdev-pci", fn=2):
    meta = "<metadata><vfwarp:tenant xmlns:vfwarp='urn:vfwarp:manager:1' tenant='green'/></metadata>"
    return f"""<hookData><network><name>{net}</name>{meta if ours else ''}
<forward mode='hostdev' managed='yes'/></network>
<networkport><uuid>5b4c-x</uuid><owner><name>vfwnet</name><uuid>1</uuid></owner>
<mac address='52:54:00:00:30:01'/><vlan><tag id='300'/></vlan>
<plug type='{plug}' managed='yes'><driver name='vfio'/>
<address type='pci' domain='0x0000' bus='0x01' slot='0x00' function='{fn:#x}'/></plug>
</networkport></hookData>""".encode()


CONFIG = {"python": "/usr/bin/python3", "vfwarpctl": "/opt/vfwarpctl/vfwarpctl",
          "package_dir": "/opt/vfwarpctl", "files": ["/etc/vfwarp/policy"],
          "state_dir": "/run/vfwarp", "hold": 60, "log": "/dev/null"}


def run_hook(argv, data, config=CONFIG):
    started = []
    rc = lh.network_hook(argv, io.BytesIO(data), config, spawn=lambda a, log: started.append(a))
    return rc, started


def test_hook_starts_a_hold_for_the_vf_of_a_port_of_our_network():
    for op in ("port-created", "port-deleted"):
        rc, started = run_hook(["vfwarp-green", op, "begin", "-"], hook_input())
        assert rc == 0
        assert started == [["/usr/bin/python3", "/opt/vfwarpctl/vfwarpctl", "reapply-vf",
                            "--pci", "0000:01:00.2", "--hold", "60", "--state-dir", "/run/vfwarp",
                            "--reason", f"{op} vfwarp-green domain vfwnet", "/etc/vfwarp/policy"]]


def test_hook_ignores_other_operations_networks_and_plugs():
    assert run_hook(["vfwarp-green", "started", "begin", "-"], hook_input()) == (0, [])
    assert run_hook(["default", "port-created", "begin", "-"], hook_input("default")) == (0, [])
    # a vfwarp-* network without our metadata (the guest role's pool, a hand-made one)
    assert run_hook(["vfwarp-pool-red", "port-created", "begin", "-"],
                    hook_input("vfwarp-pool-red", ours=False)) == (0, [])
    assert run_hook(["vfwarp-green", "port-created", "begin", "-"],
                    hook_input(plug="bridge")) == (0, [])


def test_hook_failure_is_logged_and_never_fails_libvirt(tmp_path):
    log = tmp_path / "hook.log"
    rc = lh.network_hook(["vfwarp-green", "port-created", "begin", "-"], io.BytesIO(b"<not xml"),
                         dict(CONFIG, log=str(log)))
    assert rc == 0
    assert "port-created: ParseError" in log.read_text()


def test_installed_hook_runs_detached_and_returns_at_once(tmp_path):
    """The script as libvirt runs it: stdin, output captured until closed.
    Its 'vfwarpctl' here records its argv and outlives the hook by 3 s:
    the hook must return without waiting for it or holding our pipes."""
    fake = tmp_path / "vfwarpctl"
    rec = tmp_path / "argv.json"
    fake.write_text(f"import json, sys, time\njson.dump(sys.argv[1:], open({str(rec)!r}, 'w'))\n"
                    "print('hold output', flush=True)\ntime.sleep(3)\n")
    log = tmp_path / "log" / "hook.log"
    config = dict(CONFIG, python=sys.executable, vfwarpctl=str(fake),
                  package_dir=str(cli.__file__).rsplit("/vfwarp_manager/", 1)[0], log=str(log))
    hooks = tmp_path / "hooks"
    assert lh.install(str(hooks), config) is True
    assert lh.install(str(hooks), config) is False                       # unchanged
    path = lh.hook_path(str(hooks))
    assert os.stat(path).st_mode & 0o777 == 0o755
    t = time.monotonic()
    p = subprocess.run([path, "vfwarp-green", "port-created", "begin", "-"], input=hook_input(fn=4),
                       capture_output=True, timeout=20)
    took = time.monotonic() - t
    assert (p.returncode, p.stdout, p.stderr) == (0, b"", b""), p
    assert took < 2.5, took
    deadline = time.monotonic() + 10
    while not rec.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert json.loads(rec.read_text())[:4] == ["reapply-vf", "--pci", "0000:01:00.4", "--hold"]
    deadline = time.monotonic() + 10
    while "hold output" not in log.read_text() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert "hold output" in log.read_text()
    assert lh.remove(str(hooks)) is True and lh.remove(str(hooks)) is False


def test_install_hook_refuses_invalid_files_and_writes_nothing(tmp_path, applied):
    (tmp_path / "pol" / "green.yaml").write_text(GREEN + "bogus: 1\n")
    rc, out = ctl(tmp_path, applied, "install-hook", "--hooks-dir", str(tmp_path / "hooks"),
                  files(tmp_path))
    assert rc == 1 and "green.yaml:8:1: error[unknown-key]" in out, out
    assert not (tmp_path / "hooks").exists()


def test_remove_hook_ends_a_hold_that_has_not_claimed_yet(tmp_path):
    """A hold the hook started just before remove-hook may not have written
    its pid file yet (it parses the files first): it is found by its command
    line and ended all the same; a hold of another state dir is left alone."""
    sd = statedir.StateDir(str(tmp_path / "state"), None)
    sd.ensure()
    other = tmp_path / "other"
    other.mkdir()
    sleeper = "import time; time.sleep(60)"

    def hold(state_dir, pci):
        return subprocess.Popen([sys.executable, "-c", sleeper, "reapply-vf", "--pci", pci,
                                 "--hold", "60", "--state-dir", state_dir, "--reason", "test"])
    mine, theirs = hold(str(tmp_path / "state" / "."), "0000:01:00.2"), hold(str(other), "0000:01:00.3")
    try:
        deadline = time.monotonic() + 10
        while not vh._holds_running(sd) and time.monotonic() < deadline:
            time.sleep(0.05)                     # until the child has exec'd
        assert vh.end_all(sd) == ["0000:01:00.2"]
        assert mine.wait(10) != 0
        assert theirs.poll() is None
    finally:
        for p in (mine, theirs):
            p.kill()
            p.wait()
