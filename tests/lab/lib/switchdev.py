"""The adapter's eswitch in switchdev mode, shared by test_switchdev.py and
test_manager_acl.py: the PF's address and netdev, the eswitch mode, the
representors, a bridge of them, UDP senders and receivers for the VFs'
namespaces, and the tc flower filters on a representor with their
hardware counts.
"""
import json

from .pf import PF_BDF


def pf_dev(lab, host="h1"):
    """(pci BDF, PF netdev name) of `host`'s adapter."""
    out = lab.ssh(host, f"B={PF_BDF}; echo $B $(ls /sys/bus/pci/devices/$B/net)").stdout.split()
    return out[0], out[1]


def mode(lab, bdf, host="h1"):
    out = lab.ssh(host, f"devlink -j dev eswitch show pci/{bdf}").stdout
    return json.loads(out)["dev"][f"pci/{bdf}"]["mode"]


def set_mode(lab, bdf, m, host="h1", check=True):
    return lab.ssh(host, f"devlink dev eswitch set pci/{bdf} mode {m} && udevadm settle -t 20",
                   check=check)


def reprs(lab, host="h1"):
    """{phys_port_name: link} of the host's representors (ports pfNvfM)."""
    links = json.loads(lab.ssh(host, "ip -j -d -s link show").stdout)
    return {l["phys_port_name"]: l for l in links
            if l.get("phys_port_name", "").startswith("pf") and "vf" in l["phys_port_name"]}


BRIDGE = r"""
set -e
ip link add br0 type bridge
for d in %(ports)s; do ip link set $d master br0; ip link set $d up; done
ip link set br0 up
# STP off, forward delay 0: the bridge forwards at once
ip link set br0 type bridge stp_state 0 forward_delay 0
"""


UDP_RECV = r"""
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("0.0.0.0", int(sys.argv[1])))
s.settimeout(0.5)
n, end = 0, time.time() + float(sys.argv[2])
while time.time() < end:
    try:
        s.recv(2048); n += 1
    except socket.timeout:
        pass
print(n)
"""


UDP_SEND = r"""
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(int(sys.argv[3])):
    s.sendto(b"x" * 100, (sys.argv[1], int(sys.argv[2]))); time.sleep(0.01)
"""


def filters(lab, dev, host="h1"):
    out = lab.ssh(host, f"tc -s -j filter show dev {dev} ingress").stdout
    return [f for f in json.loads(out or "[]") if "options" in f]


def hw_packets(f):
    for a in f["options"]["actions"]:
        if "stats" in a:
            return a["stats"].get("hw_packets", a["stats"]["packets"])
    return None
