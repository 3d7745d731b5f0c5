"""The sriov layer: how many VFs the PF has, sysfs sriov_numvfs. First in
the order: every other layer of a PF acts on its VFs or their representors
(host.py). The PCI core changes a non-zero count only through 0, and
removing VFs forgets their settings: the undo of a removal re-creates them
and gives each its settings back (the actions `back` the host model builds
from the other layers' state).
"""
import os

from . import live
from .actions import Step, write_action


def numvfs_path(pf):
    return os.path.join(live.SYSFS_NET, pf, "device", "sriov_numvfs")


def read(runner, pf):
    return {"numvfs": live.read_sriov(runner, pf)["numvfs"]}


def target(desired):
    return {"numvfs": desired["sriov"]["numvfs"]}


def write(path, n):
    return write_action(path, n)


def steps(pf, path, b_n, t_n, back):
    """Steps from b_n VFs to t_n (b_n != t_n); back: the actions undoing the
    first step (the old count, and the old VFs' settings when there were VFs)."""
    if b_n and t_n:
        return [Step("sriov", pf, f"sriov_numvfs: {b_n} -> 0", [write(path, 0)], back),
                Step("sriov", pf, f"sriov_numvfs: 0 -> {t_n}", [write(path, t_n)], [write(path, 0)])]
    return [Step("sriov", pf, f"sriov_numvfs: {b_n} -> {t_n}", [write(path, t_n)], back)]
