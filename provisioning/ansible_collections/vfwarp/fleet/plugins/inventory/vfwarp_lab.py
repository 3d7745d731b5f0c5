# -*- coding: utf-8 -*-
# Copyright: vfwarp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
name: vfwarp_lab
short_description: The booted hosts of a vfwarp lab as an inventory
description:
  - Reads the state directory of a lab booted with C(lab/labctl --state DIR up -n N)
    (its C(lab.json)) and lists each host whose QEMU process is running, reached
    over its forwarded ssh port on 127.0.0.1 as root with the guest image's key.
  - The hosts are put in the groups O(groups) (default C(vfwarp_lab) and
    C(vfwarp_hypervisors)), so playbooks written for real hypervisors run
    against the lab unchanged.
  - The configuration file's name must end with C(vfwarp_lab.yml) or C(vfwarp_lab.yaml).
version_added: 0.1.0
author:
  - vfwarp contributors (@vfwarp)
options:
  plugin:
    description: The name of this plugin.
    required: true
    type: str
    choices: [vfwarp.fleet.vfwarp_lab]
  state:
    description: The lab's state directory.
    type: path
    default: /tmp/vfwarp-lab
    env:
      - name: VFWARP_LAB_STATE
  groups:
    description: Groups every lab host joins.
    type: list
    elements: str
    default: [vfwarp_lab, vfwarp_hypervisors]
  require_running:
    description: List only hosts whose QEMU process is alive.
    type: bool
    default: true
"""

EXAMPLES = r"""
# inventory/lab.vfwarp_lab.yml
plugin: vfwarp.fleet.vfwarp_lab
state: /tmp/vfwarp-lab
"""

import json
import os

from ansible.errors import AnsibleParserError
from ansible.plugins.inventory import BaseInventoryPlugin

# The lab's own ssh options (lab/vfwarp_lab/hosts.py): the hosts are new at each
# boot, so their keys are never recorded.
SSH_ARGS = ("-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null "
            "-o LogLevel=ERROR -o BatchMode=yes -o ConnectTimeout=10")


def process_runs_lab(pid, state):
    """Is `pid` a live process started for the lab in `state` (its argv names the
    state directory; guards against a reused pid after a crash)?"""
    if not pid or pid <= 0:
        return False
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            cmdline = f.read().replace(b"\0", b" ").decode("utf-8", "replace")
        with open("/proc/%d/stat" % pid) as f:
            if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                return False
    except (IOError, OSError, IndexError):
        return False
    return state in cmdline


def lab_hosts(state, require_running=True):
    """[(name, vars)] of the lab in `state`, in boot order."""
    path = os.path.join(state, "lab.json")
    try:
        with open(path) as f:
            data = json.load(f)
    except (IOError, OSError) as e:
        raise ValueError("no lab state at %s: %s (boot one with lab/labctl --state %s up -n 2)"
                         % (path, e, state))
    image = data.get("image") or ""
    out = []
    for h in sorted(data.get("hosts", []), key=lambda h: h.get("index", 0)):
        if require_running and not process_runs_lab(h.get("pid", 0), state):
            continue
        out.append((h["name"], {
            "ansible_host": "127.0.0.1",
            "ansible_port": int(h["ssh_port"]),
            "ansible_user": "root",
            "ansible_ssh_private_key_file": os.path.join(image, "id_ed25519"),
            "ansible_ssh_common_args": SSH_ARGS,
            "vfwarp_lab_index": h.get("index"),
            "vfwarp_lab_state": state,
        }))
    return out


class InventoryModule(BaseInventoryPlugin):
    NAME = "vfwarp.fleet.vfwarp_lab"

    def verify_file(self, path):
        return super(InventoryModule, self).verify_file(path) and \
            path.endswith(("vfwarp_lab.yml", "vfwarp_lab.yaml"))

    def parse(self, inventory, loader, path, cache=True):
        super(InventoryModule, self).parse(inventory, loader, path, cache)
        self._read_config_data(path)
        state = os.path.abspath(self.get_option("state"))
        try:
            hosts = lab_hosts(state, self.get_option("require_running"))
        except ValueError as e:
            raise AnsibleParserError(str(e))
        groups = self.get_option("groups")
        for g in groups:
            self.inventory.add_group(g)
        for name, hostvars in hosts:
            for g in groups:
                self.inventory.add_host(name, group=g)
            for k, v in hostvars.items():
                self.inventory.set_variable(name, k, v)
