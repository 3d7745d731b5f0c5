"""The pure parts of lab/vfwarp_lab/tenants.py: the libvirt XML it renders,
tenant addresses, and its record of tenants shared by separate labctl calls.
(Booting tenants and VFs in them: tests/lab/test_tenants.py.)"""
import xml.etree.ElementTree as ET
from types import SimpleNamespace

import pytest

from vfwarp_lab.paths import LabError
from vfwarp_lab.tenants import (Tenants, domain_xml, hostdev_interface_xml, hostdev_xml,
                                mgmt_address, pool_interface_xml, pool_network_xml)


def lab_at(state):
    hosts = {"h1": SimpleNamespace(index=1), "h2": SimpleNamespace(index=2)}
    return SimpleNamespace(state=state, host=lambda name: hosts[name])


def test_tenants_started_at_once_are_all_remembered(tmp_path):
    # two labctl calls load the (empty) record before either writes
    a, b = Tenants(lab_at(tmp_path)), Tenants(lab_at(tmp_path))
    a.adopt("h1", "t1", 0)
    b.adopt("h2", "t2", 0)
    assert Tenants(lab_at(tmp_path)).where == {"t1": ("h1", "10.200.0.11"),
                                               "t2": ("h2", "10.200.0.21")}
    a._remember("t2")
    assert Tenants(lab_at(tmp_path)).where == {"t1": ("h1", "10.200.0.11")}


def test_hostdev_interface_carries_mac_vlan_and_vf_address():
    e = ET.fromstring(hostdev_interface_xml("0000:01:00.3", "52:54:00:aa:01:03", 100))
    assert (e.tag, e.get("type"), e.get("managed")) == ("interface", "hostdev", "yes")
    assert e.find("mac").get("address") == "52:54:00:aa:01:03"
    assert e.find("vlan/tag").get("id") == "100"
    a = e.find("source/address")
    assert (a.get("bus"), a.get("slot"), a.get("function")) == ("0x01", "0x00", "0x3")
    assert ET.fromstring(hostdev_interface_xml("0000:01:00.1", "52:54:00:aa:01:01")).find(
        "vlan") is None


def test_plain_hostdev_and_pool_xml():
    e = ET.fromstring(hostdev_xml("0000:01:10.7"))
    assert (e.tag, e.get("type"), e.find("source/address").get("slot")) == ("hostdev", "pci",
                                                                            "0x10")
    n = ET.fromstring(pool_network_xml("vfwarp-pool-enp1s0", "enp1s0"))
    assert n.find("forward").get("mode") == "hostdev" and n.find("forward/pf").get("dev") == \
        "enp1s0"
    i = ET.fromstring(pool_interface_xml("vfwarp-pool-enp1s0", "52:54:00:aa:01:01", 200))
    assert i.find("source").get("network") == "vfwarp-pool-enp1s0"
    assert i.find("vlan/tag").get("id") == "200"


def test_domain_boots_the_tenant_image_with_its_address_and_vfs():
    vf = hostdev_xml("0000:01:00.2")
    d = ET.fromstring(domain_xml("t1", "10.200.0.11", (vf,)))
    assert "vfwarp.mgmt=10.200.0.11/24" in d.find("os/cmdline").text
    assert d.find("os/initrd").text.endswith("initrd.cpio")
    devs = d.find("devices")
    assert len(devs.findall("hostdev")) == 1
    ports = [c for c in devs.findall("controller") if c.get("model") == "pcie-root-port"]
    assert len(ports) >= 2     # the VF's and at least one spare for hot-plug
    assert [c.get("model") for c in devs.findall("controller") if c.get("type") == "usb"] == \
        ["none"]


def test_domain_is_kvm_with_the_hosts_cpu_or_tcg_with_rdrand():
    """KVM by default (the lab hosts have it); TCG's qemu64 needs RDRAND asked for."""
    d = ET.fromstring(domain_xml("t1", "10.200.0.11"))
    assert (d.get("type"), d.find("cpu").get("mode")) == ("kvm", "host-passthrough")
    d = ET.fromstring(domain_xml("t1", "10.200.0.11", domain_type="qemu"))
    assert (d.get("type"), d.find("cpu/model").text) == ("qemu", "qemu64")
    assert d.find("cpu/feature").attrib == {"policy": "require", "name": "rdrand"}
    with pytest.raises(ValueError, match="'kvm' or 'qemu'"):
        domain_xml("t1", "10.200.0.11", domain_type="xen")


@pytest.mark.parametrize("bad", ["01:00.1", "0000:01:00", "0000:zz:00.1", "0000:01:00.8"])
def test_bad_pci_address_is_refused(bad):
    with pytest.raises(LabError, match="PCI address"):
        hostdev_xml(bad)


def test_management_addresses_are_unique_per_host_and_slot():
    assert mgmt_address(1, 0) == "10.200.0.11" and mgmt_address(2, 9) == "10.200.0.30"
    with pytest.raises(LabError):
        mgmt_address(1, 10)
