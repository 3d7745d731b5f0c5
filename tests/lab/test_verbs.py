"""iWARP verbs over VFs (issue 14): the adapter's RDMA engine behind each VF,
the iWARP ib_device of vfwarp_vf and the rdma-core provider, driven by the
standard tools (ibv_devinfo, rdma, rping, perftest) in the VFs' network
namespaces (vf_env.py: h1 VF n is 10.77.0.1(n+1), h2 VF n 10.77.0.2(n+1)).

The hosts and VFs are set up once for the module; every test leaves the
verbs processes it started stopped.
"""
import re
import time

import pytest

from vf_env import addr, nsx, vfs_up


@pytest.fixture(scope="module")
def verbs(lab2):
    with vfs_up(lab2):
        yield lab2


def bg(lab, host, vf, cmd, log):
    """Start `cmd` in VF `vf`'s namespace in the background (bounded by
    timeout in cmd itself), output to `log` on the host."""
    lab.ssh(host, f"ip netns exec vf{vf} setsid {cmd} >{log} 2>&1 </dev/null &")


def rping_pair(lab, srv, cli, count=10):
    """rping server on srv=(host, vf), client on cli; returns client output."""
    sh, sv = srv
    ch, cv = cli
    ip = addr(sh, sv)
    log = f"/tmp/rping-s-{sv}.log"
    lab.ssh(sh, f"pkill -x rping; rm -f {log}", check=False)
    bg(lab, sh, sv, f"timeout 120 rping -s -a {ip} -C {count} -v", log)
    time.sleep(1)
    r = nsx(lab, ch, cv, f"timeout 120 rping -c -a {ip} -C {count} -v -V", check=False,
            timeout=180)
    srv_out = lab.ssh(sh, f"cat {log}", check=False).stdout
    if r.returncode == 0:   # the server prints its last lines as it exits
        end = time.time() + 30
        while srv_out.count("server ping data: rdma-ping-") < count and time.time() < end:
            time.sleep(1)
            srv_out = lab.ssh(sh, f"cat {log}", check=False).stdout
    assert r.returncode == 0, f"rping client failed ({r.returncode}):\n{r.stdout}\n{r.stderr}\n" \
                              f"server:\n{srv_out}\n{lab.ssh(ch, 'dmesg | tail -30').stdout}"
    assert len(re.findall(r"^ping data: rdma-ping-\d+", r.stdout, re.M)) == count, r.stdout
    assert srv_out.count("server ping data: rdma-ping-") == count, srv_out
    return r.stdout


def test_verbs_device_per_vf(verbs):
    for h in ("h1", "h2"):
        for vf in (0, 1):
            info = nsx(verbs, h, vf, "ibv_devinfo -v").stdout
            assert re.search(r"transport:\s+iWARP", info), info
            guid = re.search(r"node_guid:\s+(\S+)", info).group(1)
            assert guid.replace(":", "").strip("0"), f"zero node GUID: {info}"
            assert re.search(r"max_qp:\s+[1-9]", info), info
            assert re.search(r"state:\s+PORT_ACTIVE", info), info
            link = nsx(verbs, h, vf, "rdma link show").stdout
            assert "netdev vfeth" in link, link
    # one ib_device per VF, whatever udev's persistent naming calls it
    drv = verbs.ssh("h1", "for d in /sys/class/infiniband/*; do "
                          "basename $(readlink $d/device/driver); done").stdout.split()
    assert drv.count("vfwarp_vf") == 2, drv


def test_rping_across_hosts_both_ways(verbs):
    rping_pair(verbs, ("h2", 0), ("h1", 0), count=100)
    rping_pair(verbs, ("h1", 0), ("h2", 0), count=100)


def test_rping_between_vfs_of_one_host(verbs):
    # the RDMA frames hairpin in h1's embedded switch
    rping_pair(verbs, ("h1", 0), ("h1", 1))


def test_ib_write_bw_across_hosts(verbs):
    ip = addr("h2", 0)
    log = "/tmp/ibwbw-s.log"
    verbs.ssh("h2", f"pkill -x ib_write_bw; rm -f {log}", check=False)
    bg(verbs, "h2", 0, "timeout 120 ib_write_bw -R -F -s 65536 -n 200", log)
    time.sleep(2)
    r = nsx(verbs, "h1", 0, f"timeout 120 ib_write_bw -R -F -s 65536 -n 200 {ip}",
            check=False, timeout=180)
    assert r.returncode == 0, f"{r.stdout}\n{r.stderr}\nserver:\n" + \
        verbs.ssh("h2", f"cat {log}", check=False).stdout
    m = re.search(r"^\s*65536\s+200\s+([\d.]+)\s+([\d.]+)", r.stdout, re.M)
    assert m and float(m.group(2)) > 0, r.stdout
    print(f"\nib_write_bw -R 64 KiB h1 VF0 -> h2 VF0: {m.group(2)} MB/s")
