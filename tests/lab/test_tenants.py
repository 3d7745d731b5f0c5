"""Tenant VMs (L2) with VFs through VFIO, as operators give them: libvirt XML
on each lab host, `virsh attach-device --live`, a VF pool network, VFs in
the definition at `virsh start`. Inside the tenants: the VF in lspci,
vfwarp_vf bound, ping and iperf3 across hosts, and verbs (rping, ib_write_bw)
through the VFs with nothing of the host's own networking on the path.

The tenant VMs are the ones the operator's playbook started (the session
fixture `provisioned`, lib/provisioned.py: under nested TCG a boot takes
minutes, one per session serves test_provisioning.py and this module): t1 on
h1 and t2 on h2, each defined with an interface of tenant red's pool network
`vfwarp-pool-red` (red's VFs 0 and 2, VLAN 200), so each started with VF 0,
libvirt programming its MAC and the pool's VLAN. Each host's VF 4 (in no
tenant) goes into its tenant by `virsh attach-device --live` on VLAN 400.
This module ends t1 (`virsh destroy` mid-iperf3).
"""
import re
import time

import pytest

from lib.perftest import PERF_PORT, RPING_PORT
from lib.pf import VF_ID
from lib.provisioned import FREE_VF, GUEST_MAC, GUESTS, HOSTS, NUM_VFS, RED, RED_VLAN
from lib.tenant import Host, Tenants, host_vf_line, vf_netdev
from lib.wait import wait_rdma_listener, wait_tcp_listener
from vfwarp_lab.tenants import hostdev_interface_xml, hostdev_xml, pool_interface_xml

# tools/lab-tier's `provisioned` session: on the hosts site.yml leaves (conftest.py)
pytestmark = pytest.mark.provisioned

VLAN_A = 400                     # the live-attached VFs' (no tenant of the inventory has it)
POOL = "vfwarp-pool-red"
# the VF each host's tenant gets by `virsh attach-device --live`
ATTACH_VF = {"h1": FREE_VF, "h2": FREE_VF}
POOL_MAC = GUEST_MAC["h1"]
# the guests' pool VFs carry 10.88.0.N/24 (the role's data_ip): the attached VFs another subnet
POOL_IP = {"t1": "10.88.0.1", "t2": "10.88.0.2"}


def tmac(host, i):
    return f"52:54:00:aa:{int(host[1:]):02x}:{i + 1:02x}"


def data_ip(tenant):
    return f"10.90.0.{int(tenant[1:])}"


@pytest.fixture(scope="module")
def tl(provisioned):
    """The provisioned hosts and their running tenant VMs, reached by ssh."""
    lab = provisioned.lab
    ten = Tenants(lab)
    hosts = {h: Host(lab, h) for h in HOSTS}
    for h, t in zip(HOSTS, GUESTS):
        state = ten.virsh(h, f"domstate {t}", check=False).stdout.strip()
        assert state == "running", f"{h}: site.yml's tenant VM {t} is {state or 'not defined'}"
        ten.prepare_host(h)          # what `define` of another tenant needs (idempotent)
        ten.adopt(h, t, 0)
    try:
        yield lab, ten, hosts
    finally:
        ten.close()


def attach(lab, ten, host, tenant, xml, live=True):
    r = ten.virsh(host, f"attach-device {tenant} {{xml}} {'--live' if live else ''}",
                  stdin_xml=xml, check=False)
    assert r.returncode == 0, f"{host}: attach-device failed: {r.stderr or r.stdout}"


def detach(lab, ten, host, tenant, xml):
    took = ten.detach(host, tenant, xml)
    print(f"\n{host}/{tenant}: detach-device --live done in {took:.0f}s")


def wait_vf_netdev(ten, tenant, present=True, secs=120, mac=None):
    """The tenant's vfwarp_vf netdev (the one with `mac`) once it is there
    (or gone)."""
    end = time.monotonic() + secs
    while True:
        nd = vf_netdev(ten, tenant, mac)
        if bool(nd) == present or time.monotonic() > end:
            return nd
        time.sleep(3)


def up_addr(ten, tenant, nd, ip):
    ten.ssh(tenant, f"ip addr flush dev {nd}; ip addr add {ip}/24 dev {nd}; ip link set {nd} up; "
                    f"for i in $(seq 60); do ip link show {nd} | grep -q LOWER_UP && break; "
                    f"sleep 0.5; done")


def ping(ten, tenant, dst, count=3):
    r = ten.ssh(tenant, f"ping -c {count} -i 0.5 -W 3 {dst}", check=False, timeout=120)
    m = re.search(r"(\d+) received", r.stdout)
    return int(m.group(1)) if m else 0


def host_counters(lab, host):
    """Bytes through the host's own networking: its management NIC and the
    tenants' management bridge."""
    out = lab.ssh(host, "for n in /sys/class/net/*; do d=$(basename $n); "
                        "case $d in lo|enp1s0*) continue;; esac; "
                        "echo $d $(cat $n/statistics/rx_bytes) $(cat $n/statistics/tx_bytes); "
                        "done").stdout
    return {d: int(rx) + int(tx) for d, rx, tx in (l.split() for l in out.splitlines())}


@pytest.fixture(scope="module")
def attached(tl):
    """VF 4 of each host in its tenant by `virsh attach-device --live` of an
    <interface type='hostdev'> with MAC and VLAN; the VF netdevs addressed."""
    lab, ten, hosts = tl
    xmls = {}
    for h, t in (("h1", "t1"), ("h2", "t2")):
        xmls[h] = hostdev_interface_xml(hosts[h].vf(lab, ATTACH_VF[h]), tmac(h, 0), VLAN_A)
        attach(lab, ten, h, t, xmls[h])
    nds = {}
    for h, t in (("h1", "t1"), ("h2", "t2")):
        nds[t] = wait_vf_netdev(ten, t, mac=tmac(h, 0))
        assert nds[t], f"{t}: no vfwarp_vf netdev after attach:\n" + \
            ten.ssh(t, "lspci -nn; dmesg | tail -20").stdout
        up_addr(ten, t, nds[t], data_ip(t))
    yield lab, ten, hosts, xmls, nds
    # the live-attached VFs go back (libvirt restores what it found on them), so
    # the host's reboot test after this module finds the VFs as the policy left them;
    # the pool VFs stay with their VMs
    for h, t in (("h1", "t1"), ("h2", "t2")):
        for xml in ten.vf_devices(h, t):
            if tmac(h, 0) in xml:
                ten.detach(h, t, xml)


def test_live_attach_shows_vf_mac_and_vlan(attached):
    lab, ten, hosts, _, nds = attached
    for h, t in (("h1", "t1"), ("h2", "t2")):
        lspci = ten.ssh(t, f"lspci -n -d {VF_ID}").stdout
        assert lspci.strip(), f"{t}: the VF is not on the tenant's PCI bus"
        drv = ten.ssh(t, f"basename $(readlink -f /sys/class/net/{nds[t]}/device/driver)").stdout
        assert drv.strip() == "vfwarp_vf"
        mac = ten.ssh(t, f"cat /sys/class/net/{nds[t]}/address").stdout.strip()
        assert mac == tmac(h, 0), f"{t}: MAC {mac}, XML said {tmac(h, 0)}"
        line = host_vf_line(lab, h, hosts[h].pf_netdev, ATTACH_VF[h])
        assert tmac(h, 0) in line and f"vlan {VLAN_A}" in line, f"{h}: {line}"
        # the host no longer drives the VF: VFIO has it
        vf = hosts[h].vf(lab, ATTACH_VF[h])
        drv = lab.ssh(h, f"basename $(readlink /sys/bus/pci/devices/{vf}/driver)")
        assert drv.stdout.strip() == "vfio-pci"


def vf_drivers(lab, host, pf):
    """The driver of each VF of `pf`, in VF order."""
    return lab.ssh(host, f"for v in /sys/bus/pci/devices/{pf}/virtfn*; do "
                         "basename $(readlink $v/driver); done").stdout.split()


def test_pool_vf_at_start_and_exhaustion(attached):
    """t1 was defined with an interface of tenant red's pool network: it
    started with VF 0 (the pool's first free VF) carrying the XML's MAC and
    the pool's VLAN, and traffic flows through it (to t2's pool VF, on
    another host); a definition asking the pool for more VFs than are free
    fails clearly and starts nothing."""
    lab, ten, hosts, _, nds = attached
    nd = wait_vf_netdev(ten, "t1", mac=POOL_MAC)
    assert nd, "t1: no VF with the pool interface's MAC:\n" + \
        ten.ssh("t1", "lspci -nn; ip -br link").stdout
    lspci = ten.ssh("t1", f"lspci -n -d {VF_ID}").stdout
    assert len(lspci.strip().splitlines()) == 2, f"t1: not its two VFs:\n{lspci}"
    line = host_vf_line(lab, "h1", hosts["h1"].pf_netdev, RED[0])
    assert POOL_MAC in line and f"vlan {RED_VLAN}" in line, f"h1: {line}"
    assert vf_drivers(lab, "h1", hosts["h1"].pf)[RED[0]] == "vfio-pci"
    assert ping(ten, "t1", POOL_IP["t2"], 3) == 3, "no traffic through the pool VFs"

    # exhaustion: the pool has red's VFs and gave one to t1; ask for all again
    devs = tuple(pool_interface_xml(POOL, tmac("h1", 10 + i)) for i in range(len(RED)))
    ten.define("h1", "tx", 5, devs)
    try:
        r = ten.virsh("h1", "start tx", check=False)
        assert r.returncode != 0, "a tenant started with more pool VFs than are free"
        # libvirt names the pool and says why
        assert POOL in r.stderr and "none are available" in r.stderr, r.stderr
        assert "shut off" in ten.virsh("h1", "domstate tx").stdout
        drivers = vf_drivers(lab, "h1", hosts["h1"].pf)
        # VF 0 (pool, t1) and VF 4 (live, t1): nothing else changed driver
        held = (RED[0], ATTACH_VF["h1"])
        assert [d for i, d in enumerate(drivers) if i in held] == ["vfio-pci"] * 2 and \
            [d for i, d in enumerate(drivers) if i not in held] == ["vfwarp_vf"] * (NUM_VFS - 2), \
            drivers
    finally:
        ten.virsh("h1", "undefine tx", check=False)


def test_tenants_ping_and_iperf3_across_hosts(attached):
    lab, ten, _, _, _ = attached
    assert ping(ten, "t1", data_ip("t2"), 5) == 5
    ten.ssh("t2", "pkill -x iperf3; iperf3 -s -D -1 -p 5201 --logfile /tmp/iperf3-s.log", check=False)
    wait_tcp_listener(lambda c: ten.ssh("t2", c, check=False), 5201, "cat /tmp/iperf3-s.log",
                      what="t2: iperf3 -s")
    r = ten.ssh("t1", f"iperf3 -c {data_ip('t2')} -p 5201 -t 5 -J", timeout=180)
    m = re.search(r'"sum_received":\s*{[^}]*"bytes":\s*(\d+)', r.stdout)
    assert m and int(m.group(1)) > 0, r.stdout[-1500:]
    print(f"\niperf3 t1 -> t2 through VFs: {int(m.group(1)) / 5 * 8 / 1e6:.1f} Mbit/s")


def test_verbs_between_tenants_bypass_hosts(attached):
    """rping -C 100 -V and ib_write_bw -R between the tenants, through their
    VFs: the hosts' own NICs and the tenants' management bridge carry only
    the control ssh, a small fraction of the bytes the verbs moved."""
    lab, ten, _, _, nds = attached
    for t in ("t1", "t2"):
        out = ten.ssh(t, "ibv_devices; rdma link").stdout
        assert "vfwarp" in out, f"{t}: no vfwarp ib_device:\n{out}"
    before = {h: host_counters(lab, h) for h in ("h1", "h2")}
    t2 = lambda cmd: ten.ssh("t2", cmd, check=False)   # noqa: E731
    t2("pkill -x rping; (timeout 300 rping -s -a %s -C 100 -v >/tmp/rping-s.log 2>&1 &)"
       % data_ip("t2"))
    wait_rdma_listener(t2, RPING_PORT, "cat /tmp/rping-s.log", secs=60, what="t2: rping -s")
    r = ten.ssh("t1", f"timeout 300 rping -c -a {data_ip('t2')} -C 100 -v -V", check=False,
                timeout=330)
    assert r.returncode == 0 and r.stdout.count("ping data") == 100, \
        f"rping failed ({r.returncode}):\n{r.stdout[-800:]}\n{r.stderr}"
    # perftest opens the first ib_device unless told (t1 has two VFs: the
    # pool's and the attached one), so each side names its VF's device
    dev = {t: ten.ssh(t, f"ls /sys/class/net/{nds[t]}/device/infiniband").stdout.strip()
           for t in ("t1", "t2")}
    t2(f"pkill -x ib_write_bw; (timeout 300 ib_write_bw -d {dev['t2']} -R -F "
       "-s 65536 -n 500 >/tmp/bw-s.log 2>&1 &)")
    wait_rdma_listener(t2, PERF_PORT, "cat /tmp/bw-s.log", secs=60, what="t2: ib_write_bw")
    r = ten.ssh("t1", f"timeout 300 ib_write_bw -d {dev['t1']} -R -F -s 65536 -n 500 "
                      f"{data_ip('t2')}", check=False, timeout=330)
    m = re.search(r"^\s*65536\s+500\s+([\d.]+)\s+([\d.]+)", r.stdout, re.M)
    assert r.returncode == 0 and m, f"ib_write_bw failed ({r.returncode}):\n{r.stdout}\n{r.stderr}"
    moved = 65536 * 500 + 100 * 64
    after = {h: host_counters(lab, h) for h in ("h1", "h2")}
    for h in ("h1", "h2"):
        for dev, b in after[h].items():
            delta = b - before[h].get(dev, 0)
            assert delta < moved / 10, \
                f"{h}: {dev} carried {delta} bytes while the verbs moved {moved}"
    print(f"\nib_write_bw -R 64 KiB t1 -> t2 through VFs: {m.group(2)} MB/s; host NIC/bridge "
          f"bytes: " + ", ".join(f"{h} {d} +{after[h][d] - before[h].get(d, 0)}"
                                 for h in after for d in after[h]))


def test_vlan_isolation_and_pinned_mac(attached):
    """A second VF in t2, plain <hostdev>, on the VLAN its host's policy gives
    it (tenant red's VF 2: VLAN 200) and with an address of the attached VFs'
    subnet, does not hear t1 on VLAN 400; t1 cannot change the MAC its host
    pinned."""
    lab, ten, hosts, _, nds = attached
    other_vf = RED[1]
    assert f"vlan {RED_VLAN}" in host_vf_line(lab, "h2", hosts["h2"].pf_netdev, other_vf)
    vf = hosts["h2"].vf(lab, other_vf)
    before = set(vf_netdev(ten, "t2").split())
    attach(lab, ten, "h2", "t2", hostdev_xml(vf))
    end = time.monotonic() + 120
    while True:
        new = set(vf_netdev(ten, "t2").split()) - before
        if new or time.monotonic() > end:
            break
        time.sleep(3)
    assert new, f"t2: the second VF's netdev did not appear ({before})"
    (other,) = new
    iso_ip = "10.90.0.3"
    ten.ssh("t2", f"ip netns add iso; ip link set {other} netns iso; "
                  f"ip -n iso addr add {iso_ip}/24 dev {other}; ip -n iso link set {other} up; "
                  f"ip -n iso link set lo up; sleep 2")
    try:
        assert ping(ten, "t1", data_ip("t2"), 2) == 2, "control: same-VLAN peer unreachable"
        assert ping(ten, "t1", iso_ip, 3) == 0, f"a tenant on VLAN {RED_VLAN} heard VLAN {VLAN_A}"
        r = ten.ssh("t1", f"ip link set dev {nds['t1']} address 52:54:00:bb:bb:bb", check=False)
        assert r.returncode != 0 and "Operation not permitted" in r.stderr, (r.returncode, r.stderr)
        mac = ten.ssh("t1", f"cat /sys/class/net/{nds['t1']}/address").stdout.strip()
        assert mac == tmac("h1", 0)
    finally:
        ten.ssh("t2", f"ip -n iso link set {other} netns 1; ip netns del iso", check=False)
        detach(lab, ten, "h2", "t2", hostdev_xml(vf))


def test_numvfs_refused_while_a_vm_holds_a_vf(attached):
    lab, ten, hosts, _, _ = attached
    pf = hosts["h1"].pf
    r = lab.ssh("h1", f"echo 0 > /sys/bus/pci/devices/{pf}/sriov_numvfs", check=False)
    assert r.returncode != 0 and "busy" in r.stderr.lower(), (r.returncode, r.stderr)
    assert lab.ssh("h1", f"cat /sys/bus/pci/devices/{pf}/sriov_numvfs").stdout.strip() == str(NUM_VFS)
    assert "in use" in lab.ssh("h1", "dmesg | tail -20").stdout
    assert ping(ten, "t1", data_ip("t2"), 2) == 2, "the tenant lost its VF"


def test_detach_returns_vf_to_host(attached):
    lab, ten, hosts, xmls, _ = attached
    h, t = "h2", "t2"
    vf = hosts[h].vf(lab, ATTACH_VF[h])
    detach(lab, ten, h, t, xmls[h])
    assert wait_vf_netdev(ten, t, present=False, mac=tmac(h, 0)) == ""
    end = time.monotonic() + 60
    while time.monotonic() < end:
        drv = lab.ssh(h, f"basename $(readlink /sys/bus/pci/devices/{vf}/driver) 2>/dev/null",
                      check=False).stdout.strip()
        if drv == "vfwarp_vf":
            break
        time.sleep(2)
    assert drv == "vfwarp_vf", f"{h}: VF driver after detach: {drv!r}"
    # libvirt put back the MAC and VLAN it found (none): nothing stale
    line = host_vf_line(lab, h, hosts[h].pf_netdev, ATTACH_VF[h])
    assert tmac(h, 0) not in line and "vlan" not in line, line
    # and the VF works on the host again
    r = lab.ssh(h, f"ip -br link show dev $(ls /sys/bus/pci/devices/{vf}/net)")
    assert r.stdout.strip()


def test_destroy_mid_iperf3_frees_vfs_for_the_pool(attached):
    """`virsh destroy` of t1 during iperf3 leaves h1 and t2 well and gives
    both of t1's VFs (its pool VF and the live-attached one) back to the
    host's vfwarp_vf, with what libvirt found on them before (the policy's
    VLAN on the pool VF, nothing on VF 4); the pool then hands every VF out
    again: a definition asking it for all of red's VFs starts (and is
    destroyed at once)."""
    lab, ten, hosts, _, _ = attached
    # t2 gets its VF back if the previous test detached it
    if not wait_vf_netdev(ten, "t2", mac=tmac("h2", 0), secs=0):
        attach(lab, ten, "h2", "t2", hostdev_interface_xml(hosts["h2"].vf(lab, ATTACH_VF["h2"]),
                                                          tmac("h2", 0), VLAN_A))
        up_addr(ten, "t2", wait_vf_netdev(ten, "t2", mac=tmac("h2", 0)), data_ip("t2"))
    ten.ssh("t2", "pkill -x iperf3; iperf3 -s -D -1 -p 5202 --logfile /tmp/iperf3-s.log", check=False)
    wait_tcp_listener(lambda c: ten.ssh("t2", c, check=False), 5202, "cat /tmp/iperf3-s.log",
                      what="t2: iperf3 -s")
    ten.ssh("t1", f"(timeout 120 iperf3 -c {data_ip('t2')} -p 5202 -t 60 >/tmp/ip.log 2>&1 &)")
    time.sleep(8)
    ten.destroy("h1", "t1")
    pf = hosts["h1"].pf
    end = time.monotonic() + 90
    while time.monotonic() < end:
        drivers = vf_drivers(lab, "h1", pf)
        if drivers == ["vfwarp_vf"] * NUM_VFS:
            break
        time.sleep(2)
    assert drivers == ["vfwarp_vf"] * NUM_VFS, f"h1: VF drivers after destroy: {drivers}"
    assert "WARNING" not in lab.ssh("h1", "dmesg").stdout
    assert ten.ssh("t2", "true", check=False).returncode == 0, "t2 is gone"
    # no MAC or VLAN of t1's definitions left on the freed VFs
    for i, vlan in ((RED[0], f"vlan {RED_VLAN}"), (ATTACH_VF["h1"], None)):
        line = host_vf_line(lab, "h1", hosts["h1"].pf_netdev, i)
        assert POOL_MAC not in line and tmac("h1", 0) not in line, line
        assert (vlan in line) if vlan else ("vlan" not in line), line

    devs = tuple(pool_interface_xml(POOL, tmac("h1", 10 + i)) for i in range(len(RED)))
    ten.define("h1", "tx", 5, devs)
    try:
        r = ten.virsh("h1", "start tx", check=False)
        assert r.returncode == 0, f"red's {len(RED)} pool VFs are not free again: {r.stderr}"
        drivers = vf_drivers(lab, "h1", pf)
        assert [drivers[i] for i in RED] == ["vfio-pci"] * len(RED), drivers
    finally:
        ten.destroy("h1", "tx")
    end = time.monotonic() + 90
    while time.monotonic() < end and vf_drivers(lab, "h1", pf) != ["vfwarp_vf"] * NUM_VFS:
        time.sleep(2)
    assert vf_drivers(lab, "h1", pf) == ["vfwarp_vf"] * NUM_VFS
