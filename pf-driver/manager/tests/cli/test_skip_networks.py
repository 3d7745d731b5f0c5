"""`vfwarpctl apply --skip networks`: the boot unit's apply (ordered before
libvirtd, so that VFs exist when libvirt starts its autostart networks and
guests) must not ask libvirt anything: a virsh call there would wait for the
daemon that is ordered after it (found by the lab's reboot test: the unit
timed out in `virsh net-list` and the host came up without its policy)."""
import argparse

import pytest

from vfwarp_manager.cli import txn as cli_txn
from vfwarp_manager.layers import host as layers

from netfiles import PF, RED, compiled
from virshhost import VirshHost


def test_skipped_networks_are_not_probed_and_reported_as_skipped(tmp_path):
    want = compiled(tmp_path, **{"red.yaml": RED})
    host = VirshHost(PF, numvfs=4)
    host.calls.clear()
    m = layers.PfHost.for_desired(host, want, libvirt=False)
    assert [c for c in host.calls if c[0] == "virsh"] == []
    assert m.networks is None and "networks" not in m.target(want)
    # the same host with the layer on asks virsh (the control for the line above)
    layers.PfHost.for_desired(host, want)
    assert [c for c in host.calls if c[0] == "virsh"]


def test_skip_accepts_networks_and_refuses_unknown_layers():
    assert cli_txn._layer_list("networks,quotas") == ["networks", "quotas"]
    with pytest.raises(argparse.ArgumentTypeError, match="networks"):
        cli_txn._layer_list("bridges")
