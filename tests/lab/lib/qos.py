"""Shared by the QoS lab tests (test_devlink_rate.py, test_dcb.py): load
vfwarp_pf on h1 with VFs and the QoS state at the device's defaults, and run
commands there with every view of the QoS state read back after each, in one
ssh session: devlink's (rate tree, line rate param, ports), `ip link`'s VF
rates, dcb's (ets, maxrate, app, apptrust) and the device's own (the
driver's debugfs `qos`: the QoS GET admin commands).
"""
import contextlib
import json
import re

from .pf import PF_BDF, PF_KO, require_modules

HOST = "h1"
MBIT = 125000  # bytes/s: devlink rates are bytes/s, ip link's Mbit/s


def ssh(lab, cmd, check=True, host=HOST):
    return lab.ssh(host, cmd, check=check, timeout=600)


class Pf:
    def __init__(self, lab, bdf, dev):
        self.lab, self.bdf, self.dev = lab, bdf, dev
        self.dl = f"pci/{bdf}"
        self.last = None    # the state after the last command run

    def sh(self, cmd, check=True):
        return ssh(self.lab, cmd, check=check)

    def numvfs(self, n):
        """Set NumVFs (through 0); the state then."""
        return self.ok(f"echo 0 > /sys/bus/pci/devices/{self.bdf}/sriov_numvfs && "
                       f"{{ [ {n} = 0 ] || echo {n} > /sys/bus/pci/devices/{self.bdf}/sriov_numvfs; }}")

    # After each command, in the same ssh session (one costs 2-3 s on a
    # loaded machine): its status and stderr, then every view of the QoS
    # state: devlink's, ip link's and the device's.
    STEP = r"""
%(cmd)s 2>/tmp/dlerr; rc=$?
echo "@@step"; echo "@@rc $rc"; echo "@@err"; cat /tmp/dlerr
echo "@@rates"; devlink -j port function rate show
echo "@@line"; devlink -j dev param show %(dl)s name line_rate_kbps
echo "@@vfs"; ip -j link show %(dev)s
echo "@@qos"; cat /sys/kernel/debug/vfwarp_pf/%(bdf)s/qos
echo "@@ports"; devlink -j port show %(dl)s
for o in ets maxrate app apptrust; do echo "@@dcb_$o"; dcb -j $o show dev %(dev)s; done
"""

    def run_many(self, cmds):
        """Run each command; for each, (rc, stderr, state) with state the QoS
        state after it."""
        out = self.sh("".join(self.STEP % {"cmd": c, "dl": self.dl, "dev": self.dev,
                                           "bdf": self.bdf} for c in cmds)).stdout
        res = []
        for step in out.split("@@step\n")[1:]:
            parts = dict(re.findall(r"^@@(\w+)(.*?)(?=^@@|\Z)", step, re.M | re.S))
            rates = {k.rsplit("/", 1)[1]: v for k, v in
                     json.loads(parts["rates"])["rate"].items()}
            line = json.loads(parts["line"])["param"][self.dl][0]["values"][0]["value"]
            vfs = {v["vf"]: (v["rate"]["min_tx"], v["rate"]["max_tx"])
                   for v in json.loads(parts["vfs"])[0].get("vfinfo_list", [])}
            ports = {int(k.rsplit("/", 1)[1]): v for k, v in
                     json.loads(parts["ports"])["port"].items()}
            dcb = {o: json.loads(parts["dcb_" + o]) for o in ("ets", "maxrate", "app", "apptrust")}
            res.append((int(parts["rc"]), parts["err"].strip(),
                        {"rates": rates, "line_kbps": line, "vfs": vfs,
                         "device": parse_qos(parts["qos"]), "ports": ports, "dcb": dcb}))
        assert len(res) == len(cmds), out
        self.last = res[-1][2]
        return res

    def state(self):
        return self.run_many([":"])[0][2]

    def ok(self, *cmds):
        """Each command succeeds; the state after the last."""
        for c, (rc, err, _) in zip(cmds, self.run_many(cmds)):
            assert rc == 0, f"{c}: {err}"
        return self.last

    def refused(self, *cases):
        """Each (command, message): fails with `message` in its stderr and
        changes nothing, in devlink, ip link or the device."""
        before = self.last or self.state()
        for (c, msg), (rc, err, after) in zip(cases, self.run_many([c for c, _ in cases])):
            assert rc != 0, f"{c}: accepted"
            assert msg in err, f"{c}: {err!r}"
            assert after == before, f"{c} changed the state:\n{before}\n{after}"


def parse_qos(text):
    """The driver's debugfs qos: line rate, leaves, nodes and the DCB app
    table from the device."""
    st = {"line_bps": None, "leaf": {}, "node": {}, "app": {}, "dscp": {}}
    for ln in text.strip().splitlines():
        f = ln.split()
        if f[0] == "line_rate_bps":
            st["line_bps"] = int(f[1])
        elif f[0] == "app":
            st["app"] = {k: int(v) for k, v in zip(f[1::2], f[2::2])}
        elif f[0] == "dscp":
            st["dscp"][int(f[1])] = int(f[3])
        else:
            assert f[2] != "error", ln
            st[f[0]][int(f[1])] = {k: int(v) for k, v in zip(f[2::2], f[3::2])}
    return st


# The device keeps the line rate, the PF's leaf and the DCB state across
# driver loads (only a PF reset restores them): every test starts and ends
# with the defaults, so no other lab test runs behind a line rate or a class
# set-up of ours.
RESET = """
N=$(ls /sys/bus/pci/devices/%(bdf)s/net)
devlink dev param set pci/%(bdf)s name line_rate_kbps value 0 cmode runtime
devlink port function rate set pci/%(bdf)s/0 tx_share 0 tx_max 0 tx_priority 0 tx_weight 0
dcb ets set dev $N tc-tsa all:ets tc-bw 0:12 1:12 2:12 3:12 4:13 5:13 6:13 7:13 \
  prio-tc 0:0 1:1 2:2 3:3 4:4 5:5 6:6 7:7
dcb maxrate set dev $N tc-maxrate all:0
dcb apptrust set dev $N order pcp
dcb app flush dev $N
"""


@contextlib.contextmanager
def pf_loaded(lab, num_vfs=2):
    require_modules("vfwarp_pf.ko")
    try:
        # udev renames the netdev (eth0 -> enp1s0): settle before naming it.
        out = ssh(lab, f"""set -e; dmesg -C; insmod {PF_KO}; udevadm settle -t 20 || true
mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
B={PF_BDF}
{RESET % {"bdf": "$B"}}
[ {num_vfs} = 0 ] || echo {num_vfs} > /sys/bus/pci/devices/$B/sriov_numvfs
echo $B $(ls /sys/bus/pci/devices/$B/net)""").stdout.split()
        yield Pf(lab, out[-2], out[-1])
    finally:
        log = ssh(lab, f"""
D=/sys/bus/pci/devices/{PF_BDF}
[ -d /sys/module/vfwarp_pf ] && {{ {RESET % {"bdf": "$(basename $D)"}} }}
[ -d /sys/module/vfwarp_pf ] && echo 0 > $D/sriov_numvfs
rmmod vfwarp_pf 2>/dev/null; dmesg; echo @@lsmod; lsmod""", check=False).stdout
    log, mods = log.split("@@lsmod")
    assert not re.search(r"^vfwarp_pf\s", mods, re.M), mods
    # Every test unloads the driver with its tree in place: no splat.
    assert not re.search(r"WARNING:|BUG:|Oops|refcount_t|rate nodes left", log), log
