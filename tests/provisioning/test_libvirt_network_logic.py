"""Native tests of the vfwarp_libvirt_network module's pure logic
(provisioning/ansible_collections/vfwarp/fleet/plugins/module_utils/libvirt_xml.py):
the user's network XML against libvirt's definition, normalized. libvirt's side
is what `virsh net-dumpxml [--inactive]` printed on a lab host (libvirt 11.3,
Debian 13) for the networks the guest role defines (tests/provisioning/data/
net-mgmt.xml, net-pool-red*.xml); net-pool-pf-live.xml (a started <pf dev> pool)
is written in that format by hand, not captured.
"""
import sys
from pathlib import Path

import pytest

TOP = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(TOP / "provisioning"))

from ansible_collections.vfwarp.fleet.plugins.module_utils import libvirt_xml as lx  # noqa: E402

DATA = Path(__file__).resolve().parent / "data"

MGMT = ("<network><name>vfwarp-mgmt</name><bridge name='vfwmgmt0' stp='off'/>"
        "<dns enable='no'/><ip address='10.200.0.1' prefix='24'/></network>")
POOL = """<network>
  <name>vfwarp-pool-red</name>
  <forward mode='hostdev' managed='yes'>
    <address type='pci' domain='0x0000' bus='0x01' slot='0x00' function='0x1'/>
    <address type='pci' domain='0x0000' bus='0x01' slot='0x00' function='0x3'/>
  </forward>
  <vlan><tag id='200'/></vlan>
</network>"""
PF_POOL = ("<network><name>vfwarp-pool-enp1s0</name><forward mode='hostdev' managed='yes'>"
           "<pf dev='enp1s0'/></forward></network>")


def libvirt(name):
    return (DATA / name).read_text()


def same(have, want, name):
    return lx.compare(have, lx.desired_root(want, name))[0]


def test_libvirt_additions_do_not_count():
    # libvirt added uuid, the bridge's MAC, delay='0', and wrote <ip> open/closed
    assert same(libvirt("net-mgmt.xml"), MGMT, "vfwarp-mgmt")
    assert same(libvirt("net-pool-red.xml"), POOL, "vfwarp-pool-red")


def test_spelling_and_order_where_libvirt_reorders_do_not_count():
    want = ("<network><ip prefix='24' address='10.200.0.1'></ip><dns enable='off'/>"
            "<bridge stp='no' name='vfwmgmt0'/><name>vfwarp-mgmt</name></network>")
    assert same(libvirt("net-mgmt.xml"), want, "vfwarp-mgmt")
    want = POOL.replace("function='0x1'", "function='1'").replace("bus='0x01'", "bus='0x1'")
    assert same(libvirt("net-pool-red.xml"), want, "vfwarp-pool-red")


def test_pool_order_counts():
    # a hostdev pool hands out its VFs in list order: swapping them is a change
    swapped = POOL.replace("function='0x1'", "function='0xZ'").replace(
        "function='0x3'", "function='0x1'").replace("function='0xZ'", "function='0x3'")
    assert not same(libvirt("net-pool-red.xml"), swapped, "vfwarp-pool-red")


@pytest.mark.parametrize("edit", [
    ("<tag id='200'/>", "<tag id='201'/>"),                       # other VLAN
    ("function='0x3'", "function='0x5'"),                          # other VF
    ("<vlan><tag id='200'/></vlan>", ""),                          # user dropped the VLAN
    ("</forward>", "<address type='pci' domain='0x0000' bus='0x01' slot='0x00' "
                   "function='0x5'/></forward>"),                  # one VF more
    ("managed='yes'", "managed='no'"),
])
def test_a_setting_changed_added_or_dropped_counts(edit):
    assert not same(libvirt("net-pool-red.xml"), POOL.replace(*edit), "vfwarp-pool-red")


def test_generated_parts_count_when_the_user_gives_them():
    uuid = lx.parse(libvirt("net-mgmt.xml")).find("uuid").text
    assert same(libvirt("net-mgmt.xml"), MGMT.replace("</name>", f"</name><uuid>{uuid}</uuid>"),
                "vfwarp-mgmt")
    other = "0b1e5a36-0f8e-4a53-9d1c-2b2f2bcd0001"
    assert not same(libvirt("net-mgmt.xml"), MGMT.replace("</name>", f"</name><uuid>{other}</uuid>"),
                    "vfwarp-mgmt")
    assert not same(libvirt("net-mgmt.xml"),
                    MGMT.replace("stp='off'/>", "stp='off'/><mac address='52:54:00:00:00:01'/>"),
                    "vfwarp-mgmt")
    assert not same(libvirt("net-mgmt.xml"), MGMT.replace("stp='off'", "stp='off' delay='2'"),
                    "vfwarp-mgmt")


def test_pf_pool_started_lists_vfs_that_do_not_count():
    # a started <pf dev> pool: libvirt lists the PF's VFs in <forward>
    assert same(libvirt("net-pool-pf-live.xml"), PF_POOL, "vfwarp-pool-enp1s0")
    assert not same(libvirt("net-pool-pf-live.xml"), PF_POOL.replace("enp1s0'", "enp2s0'"),
                    "vfwarp-pool-enp1s0")


def test_update_keeps_uuid_and_mac():
    have = libvirt("net-mgmt.xml")
    h = lx.parse(have)
    out = lx.parse(lx.define_xml(lx.desired_root(MGMT.replace("24", "25"), "vfwarp-mgmt"), have))
    assert out.find("uuid").text == h.find("uuid").text
    assert out.find("mac").get("address") == h.find("mac").get("address")
    assert out.find("ip").get("prefix") == "25"
    # a new network: the XML as given
    new = lx.parse(lx.define_xml(lx.desired_root(MGMT, "vfwarp-mgmt")))
    assert new.find("uuid") is None and new.find("mac") is None


def test_diff_views_show_the_setting():
    equal, before, after = lx.compare(libvirt("net-pool-red.xml"),
                                      lx.desired_root(POOL.replace("'200'", "'201'"),
                                                      "vfwarp-pool-red"))
    assert not equal
    assert "<tag id='200'/>" in before and "<tag id='201'/>" in after
    assert "uuid" not in before                      # libvirt's own parts are not shown


def test_connections_of_a_started_network():
    assert lx.connections(libvirt("net-pool-red-live.xml")) >= 1
    assert lx.connections(libvirt("net-mgmt.xml")) == 0


@pytest.mark.parametrize("xml,name,msg", [
    ("", "n", "empty"),
    ("<network><name>a</name>", "a", "not well-formed"),
    ("<domain><name>a</name></domain>", "a", "not <network>"),
    ("<network><name>a</name></network>", "b", "names network 'a', the task 'b'"),
    ("<network/>", "-rf", "network name"),
    ("<network/>", "a b", "network name"),
    ("<network/>", "a;reboot", "network name"),
])
def test_bad_input_is_a_clear_error(xml, name, msg):
    with pytest.raises(lx.NetworkXMLError, match=msg):
        lx.desired_root(xml, name)


def test_a_missing_name_is_added():
    root = lx.desired_root("<network><forward mode='hostdev'><pf dev='x'/></forward></network>",
                           "vfwarp-pool-x")
    assert root.find("name").text == "vfwarp-pool-x"


def test_uuid_cannot_change():
    have = libvirt("net-mgmt.xml")
    with pytest.raises(lx.NetworkXMLError, match="uuid cannot change"):
        lx.define_xml(lx.desired_root(
            MGMT.replace("</name>", "</name><uuid>0b1e5a36-0f8e-4a53-9d1c-2b2f2bcd0001</uuid>"),
            "vfwarp-mgmt"), have)
