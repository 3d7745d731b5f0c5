#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: vfwarp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: vfwarp_libvirt_network
short_description: Define, update or remove a libvirt network from its XML
description:
  - Makes a libvirt network match the XML given, comparing the normalized XML
    of what the user specified with libvirt's definition. Whitespace, number and
    boolean spellings and the order libvirt writes elements in do not count, and
    what libvirt generates by itself (uuid, the bridge's MAC, bridge defaults,
    the VF list of a C(<pf dev>) pool) is compared only when the XML gives it.
  - A network that exists with other settings is updated (unlike
    C(community.libvirt.virt_net), which leaves it as it is) by defining the new
    XML, keeping its uuid and bridge MAC, and, when the network is active,
    restarting it so the new definition is what runs.
  - A started network that interfaces use (libvirt's C(connections)) is not
    restarted unless O(restart_in_use=true); the task fails and changes nothing.
  - Uses the libvirt Python binding when the host has it (C(python3-libvirt)),
    else C(virsh) (argument lists, never a shell).
version_added: 0.2.0
author:
  - vfwarp contributors (@vfwarp)
options:
  name:
    description: The network's name; the XML's C(<name>) must match (or is added).
    type: str
    required: true
  xml:
    description:
      - The network's XML (C(<network>)). Required unless O(state=absent).
    type: str
  state:
    description:
      - V(present) defines it (an active network is restarted on a change).
      - V(active) defines and starts it.
      - V(inactive) defines it and stops it.
      - V(absent) stops and undefines it.
    type: str
    choices: [present, active, inactive, absent]
    default: active
  autostart:
    description: Start the network when libvirtd starts; left as it is when not given.
    type: bool
  restart_in_use:
    description:
      - Restart a changed network even while interfaces use it (their guests lose
        the network until they are restarted).
    type: bool
    default: false
  uri:
    description: The libvirt connection URI.
    type: str
    default: qemu:///system
attributes:
  check_mode:
    support: full
    description: Reads the network and reports what would change.
  diff_mode:
    support: full
    description: The normalized XML before and after, and the state (active, autostart).
  platform:
    support: full
    platforms: posix
    description: A host with libvirt (the binding or C(virsh)).
notes:
  - Needs access to the libvirt daemon (root, C(become), for C(qemu:///system)).
seealso:
  - name: libvirt network XML format
    description: The elements of C(<network>).
    link: https://libvirt.org/formatnetwork.html
"""

EXAMPLES = r"""
- name: A tenant's VF pool (the VFs libvirt hands to guests of the network)
  vfwarp.fleet.vfwarp_libvirt_network:
    name: vfwarp-pool-red
    xml: |
      <network>
        <name>vfwarp-pool-red</name>
        <forward mode='hostdev' managed='yes'>
          <address type='pci' domain='0x0000' bus='0x01' slot='0x00' function='0x1'/>
          <address type='pci' domain='0x0000' bus='0x01' slot='0x00' function='0x3'/>
        </forward>
        <vlan><tag id='200'/></vlan>
      </network>
    autostart: true

- name: Every VF of a PF as a pool
  vfwarp.fleet.vfwarp_libvirt_network:
    name: vfwarp-pool-enp1s0
    xml: "<network><forward mode='hostdev' managed='yes'><pf dev='enp1s0'/></forward></network>"

- name: Gone
  vfwarp.fleet.vfwarp_libvirt_network:
    name: vfwarp-pool-enp1s0
    state: absent
"""

RETURN = r"""
action:
  description: What was (or in check mode would be) done, in order.
  returned: always
  type: list
  elements: str
  sample: [define, restart]
backend:
  description: How libvirt was reached, C(libvirt-python) or C(virsh).
  returned: always
  type: str
xml:
  description: libvirt's definition of the network after the task (inactive XML).
  returned: when the network exists after the task and not in check mode
  type: str
"""

import os
import re
import tempfile

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.vfwarp.fleet.plugins.module_utils.libvirt_xml import (
    NetworkXMLError, check_name, compare, connections, define_xml, desired_root, parse, pretty)

try:
    import libvirt
    HAS_LIBVIRT = True
except ImportError:
    HAS_LIBVIRT = False


class BindingBackend(object):
    """libvirt through its Python binding."""
    name = "libvirt-python"

    def __init__(self, module, uri):
        self.module = module
        try:
            self.conn = libvirt.open(uri)
        except libvirt.libvirtError as e:
            module.fail_json(msg="cannot connect to %s: %s" % (uri, e))

    def _net(self, name):
        try:
            return self.conn.networkLookupByName(name)
        except libvirt.libvirtError as e:
            if e.get_error_code() == libvirt.VIR_ERR_NO_NETWORK:
                return None
            self.module.fail_json(msg="network %s: %s" % (name, e))

    def read(self, name):
        """None, or (inactive XML, live XML, active, autostart)."""
        net = self._net(name)
        if net is None:
            return None
        return (net.XMLDesc(libvirt.VIR_NETWORK_XML_INACTIVE), net.XMLDesc(0),
                bool(net.isActive()), bool(net.autostart()))

    def _do(self, what, fn, *args):
        try:
            return fn(*args)
        except libvirt.libvirtError as e:
            self.module.fail_json(msg="%s: %s" % (what, e))

    def define(self, xml):
        self._do("define", self.conn.networkDefineXML, xml)

    def start(self, name):
        self._do("start " + name, self._net(name).create)

    def stop(self, name):
        self._do("stop " + name, self._net(name).destroy)

    def undefine(self, name):
        self._do("undefine " + name, self._net(name).undefine)

    def set_autostart(self, name, on):
        self._do("autostart " + name, self._net(name).setAutostart, 1 if on else 0)


class VirshBackend(object):
    """libvirt through virsh, one argument list per call."""
    name = "virsh"

    def __init__(self, module, uri):
        self.module = module
        self.base = [module.get_bin_path("virsh", required=True), "-q", "-c", uri]

    def run(self, args, what):
        rc, out, err = self.module.run_command(self.base + args)
        if rc != 0:
            self.module.fail_json(msg="virsh %s: %s" % (what, (err or out).strip()), rc=rc)
        return out

    def read(self, name):
        names = self.run(["net-list", "--all", "--name"], "net-list").split()
        if name not in names:
            return None
        inactive = self.run(["net-dumpxml", "--inactive", name], "net-dumpxml " + name)
        live = self.run(["net-dumpxml", name], "net-dumpxml " + name)
        info = self.run(["net-info", name], "net-info " + name)
        flag = {}
        for key in ("Active", "Autostart"):
            m = re.search(r"^%s:\s+(\S+)" % key, info, re.M)
            flag[key] = bool(m) and m.group(1) == "yes"
        return inactive, live, flag["Active"], flag["Autostart"]

    def define(self, xml):
        fd, path = tempfile.mkstemp(prefix="vfwarp-net-", suffix=".xml")
        try:
            with os.fdopen(fd, "w") as f:
                f.write(xml)
            self.run(["net-define", path], "net-define")
        finally:
            os.unlink(path)

    def start(self, name):
        self.run(["net-start", name], "net-start " + name)

    def stop(self, name):
        self.run(["net-destroy", name], "net-destroy " + name)

    def undefine(self, name):
        self.run(["net-undefine", name], "net-undefine " + name)

    def set_autostart(self, name, on):
        self.run(["net-autostart", name] + ([] if on else ["--disable"]), "net-autostart " + name)


def state_text(active, autostart):
    return "active: %s\nautostart: %s\n" % ("yes" if active else "no", "yes" if autostart else "no")


def main():
    module = AnsibleModule(
        argument_spec=dict(
            name=dict(type="str", required=True),
            xml=dict(type="str"),
            state=dict(type="str", choices=["present", "active", "inactive", "absent"],
                       default="active"),
            autostart=dict(type="bool"),
            restart_in_use=dict(type="bool", default=False),
            uri=dict(type="str", default="qemu:///system"),
        ),
        required_if=[("state", "present", ["xml"]), ("state", "active", ["xml"]),
                     ("state", "inactive", ["xml"])],
        supports_check_mode=True,
    )
    p = module.params
    name, state = p["name"], p["state"]
    want = None
    try:
        check_name(name)
        if state != "absent":
            want = desired_root(p["xml"], name)
    except NetworkXMLError as e:
        module.fail_json(msg=str(e))
    backend = (BindingBackend if HAS_LIBVIRT else VirshBackend)(module, p["uri"])
    have = backend.read(name)
    actions = []
    before = after = ""
    if have is None:
        was_active = was_autostart = False
    else:
        inactive, live, was_active, was_autostart = have

    if state == "absent":
        if have is not None:
            before = pretty(parse(inactive, "libvirt's XML")) + state_text(was_active, was_autostart)
            actions = (["stop"] if was_active else []) + ["undefine"]
    else:
        if have is None:
            same, view, wview = False, "", pretty(want)
        else:
            try:
                same, view, wview = compare(inactive, want)
            except NetworkXMLError as e:
                module.fail_json(msg=str(e))
        try:
            new_xml = define_xml(want, inactive if have is not None else None)
        except NetworkXMLError as e:
            module.fail_json(msg=str(e))
        active = {"active": True, "inactive": False}.get(state, was_active)
        autostart = was_autostart if p["autostart"] is None else p["autostart"]
        if not same:
            actions.append("define")
            if have is not None and was_active and active:
                used = connections(live)
                if used and not p["restart_in_use"]:
                    module.fail_json(msg="network %s differs from its XML and %d interface(s) "
                                         "use it: restarting it would cut them off (stop their "
                                         "guests first, or set restart_in_use)" % (name, used),
                                     diff=dict(before=view, after=wview))
                actions.append("restart")
        if active and not was_active:
            actions.append("start")
        elif was_active and not active:
            actions.append("stop")
        if autostart != was_autostart and (have is not None or autostart):
            actions.append("autostart" if autostart else "no-autostart")
        before = (view + state_text(was_active, was_autostart)) if have is not None else ""
        after = wview + state_text(active, autostart)

    result = dict(changed=bool(actions), action=actions, backend=backend.name)
    if module._diff:
        result["diff"] = dict(before=before, after=after if state != "absent" else "",
                              before_header="network %s (libvirt)" % name,
                              after_header="network %s (task)" % name)
    if module.check_mode or not actions:
        if not module.check_mode and have is not None:
            result["xml"] = inactive
        module.exit_json(**result)

    for a in actions:
        if a == "define":
            backend.define(new_xml)
        elif a == "restart":
            backend.stop(name)
            backend.start(name)
        elif a == "start":
            backend.start(name)
        elif a == "stop":
            backend.stop(name)
        elif a == "undefine":
            backend.undefine(name)
        elif a in ("autostart", "no-autostart"):
            backend.set_autostart(name, a == "autostart")
    if state != "absent":
        now = backend.read(name)
        result["xml"] = now[0]
        try:
            same = compare(now[0], want)[0]
        except NetworkXMLError as e:
            module.fail_json(msg=str(e), **result)
        if not same:
            # libvirt rewrote something the comparison does not know as its own:
            # fail now rather than report "changed" on every run
            module.fail_json(msg="libvirt holds network %s differently from its XML after the "
                                 "definition (compare 'xml' with the task's XML)" % name, **result)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
