#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: vfwarp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: vfwarp_policy
short_description: Keep a host's vfwarp policy files and apply them with vfwarpctl
description:
  - Writes vfwarp policy files (one host file, one file per tenant; see the
    repository's C(docs/policy.md)) into a directory on the host, and applies
    the directory with the PF manager C(vfwarpctl apply) as one transaction.
  - What would change is computed by C(vfwarpctl plan --json) against the files
    as they would be after the task. The task is C(changed) only when that plan
    is non-empty or a policy file's text differs, and check mode runs the plan
    without writing or applying anything.
  - With diff mode the plan is shown as the task's diff (each property's live
    value before, its desired value after, with its disruption label), followed
    by the diff of every policy file that changes.
  - A failed apply is undone by the manager (the host is back at its snapshot);
    the module then restores the previous policy files and fails.
  - With O(confirm_within) the apply must be confirmed by a second task with
    O(state=committed), or the manager reverts it by itself when the time is up.
version_added: 0.1.0
author:
  - vfwarp contributors (@vfwarp)
options:
  path:
    description:
      - The policy directory on the host; C(vfwarpctl) applies its C(*.yaml) and
        C(*.yml) files together.
    type: path
    default: /etc/vfwarp/policy
  files:
    description:
      - Policy files to hold in O(path), file name to YAML text. Files of O(path)
        not named here are kept unless they match O(purge).
    type: dict
    default: {}
  purge:
    description:
      - Shell-style patterns of file names in O(path) to remove when they are not
        in O(files), for example C(tenant-*.yaml) so that a tenant dropped from the
        variables is removed from the host.
    type: list
    elements: str
    default: []
  state:
    description:
      - V(applied) makes the host match the files.
      - V(committed) keeps an apply made with O(confirm_within) (C(vfwarpctl commit));
        unchanged when nothing waits for confirmation.
    type: str
    choices: [applied, committed]
    default: applied
  confirm_within:
    description:
      - Seconds within which a task with O(state=committed) must follow, or the
        manager reverts the apply.
    type: int
  skip:
    description:
      - Layers the files ask for that are not applied yet, to leave out
        (C(vfwarpctl apply --skip)).
    type: list
    elements: str
    default: []
  skip_unapplied:
    description:
      - Leave out every layer that is not applied yet (C(--skip-unapplied)).
    type: bool
    default: false
  state_dir:
    description:
      - The manager's state directory (lock, journal, snapshots); its default is
        C(/run/vfwarp).
    type: path
  vfwarpctl:
    description:
      - The PF manager's command on the host.
    type: path
    default: /usr/local/sbin/vfwarpctl
attributes:
  check_mode:
    support: full
    description: Runs C(vfwarpctl plan) only.
  diff_mode:
    support: full
    description: The plan, then each policy file that changes.
  platform:
    support: full
    platforms: posix
    description: A Linux host with a vfwarp PF and vfwarpctl.
notes:
  - Needs root on the host (C(become)) to read and change the PF.
seealso:
  - name: Policy files and vfwarpctl
    description: The format, the plan, the exit statuses, the transaction.
    link: https://github.com/vfwarp/vfwarp/blob/main/docs/policy.md
"""

EXAMPLES = r"""
- name: Tenant green on VFs 1, 3 and 5
  vfwarp.fleet.vfwarp_policy:
    files:
      tenant-green.yaml: |
        version: 1
        kind: tenant
        name: green
        vfs: {indices: [1, 3, 5]}
        vlan: 300
    purge: ["tenant-*.yaml"]
    confirm_within: 120

- name: Keep it (the host is still reachable)
  vfwarp.fleet.vfwarp_policy:
    state: committed
"""

RETURN = r"""
plan:
  description: The plan in vfwarpctl's text form, one line per change, then a count.
  returned: state=applied
  type: list
  elements: str
  sample: ["~ vf enp1s0 vf 1 vlan: 0 -> 300  [vf-reset]", "1 changes, worst: vf-reset"]
changes:
  description: The plan's changes as C(vfwarpctl plan --json) gives them.
  returned: state=applied
  type: list
  elements: dict
worst:
  description: The most disruptive label of the plan (hitless, vf-reset, detach, recreate).
  returned: state=applied
  type: str
files_changed:
  description: Names of the policy files written or removed.
  returned: state=applied
  type: list
  elements: str
apply:
  description: The document of C(vfwarpctl apply --json) or C(commit --json), when run.
  returned: when vfwarpctl apply or commit ran
  type: dict
"""

import json
import os
import shutil
import tempfile

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.vfwarp.fleet.plugins.module_utils.policy import (
    PolicyModuleError, apply_args, apply_outcome, build_diff, desired_files, file_changes,
    is_changed, is_policy_name, parse_plan, plan_text, remap_paths)

PENDING = ".vfwarp-pending"
HASH = "policy_hash"


def read_dir(path):
    out = {}
    if os.path.isdir(path):
        for name in sorted(os.listdir(path)):
            full = os.path.join(path, name)
            if is_policy_name(name) and os.path.isfile(full):
                with open(full) as f:
                    out[name] = f.read()
    return out


def write_dir(module, path, want, have):
    """Make `path` hold exactly `want` (name -> text) among its policy files."""
    if not os.path.isdir(path):
        os.makedirs(path, 0o755)
    for name, text in want.items():
        if have.get(name) == text:
            continue
        fd, tmp = tempfile.mkstemp(dir=path, prefix=".tmp-")
        with os.fdopen(fd, "w") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)
        module.atomic_move(tmp, os.path.join(path, name))
    for name in have:
        if name not in want:
            os.unlink(os.path.join(path, name))


def ctl(module, args):
    p = module.params
    return module.run_command([p["vfwarpctl"]] + args)


def run_plan(module, staged, path):
    rc, out, err = ctl(module, ["plan", "--json", staged])
    if rc == 1:
        import json
        try:
            errors = json.loads(out).get("errors", [])
        except ValueError:
            errors = []
        msgs = [remap_paths("%(file)s:%(line)s:%(column)s: %(message)s [%(rule)s]" % e, staged, path)
                for e in errors]
        module.fail_json(msg="the policy files are invalid: " + "; ".join(msgs or [out.strip()]),
                         errors=msgs)
    try:
        return parse_plan(rc, out)
    except (PolicyModuleError, ValueError) as e:
        module.fail_json(msg=remap_paths(str(e), staged, path), stderr=err.strip())


def settle_pending(module, path):
    """An apply made with confirm_within keeps the files it replaced in PENDING until
    it is settled. Committed (the manager's rollback target names its policy hash):
    the copy goes. Reverted by the manager's timer: the old files come back, as the
    host is back at them. Returns the files the directory holds (or, in check mode,
    would hold) after settling."""
    pending = os.path.join(path, PENDING)
    if not os.path.isdir(pending):
        return read_dir(path)
    sd = module.params["state_dir"] or "/run/vfwarp"
    if os.path.exists(os.path.join(sd, "confirm.json")):
        module.fail_json(msg="an earlier apply waits for confirmation: commit it (state=committed) "
                             "or roll it back (vfwarpctl rollback) first")
    last = {}
    try:
        with open(os.path.join(sd, "last.json")) as f:
            last = json.load(f)
        with open(os.path.join(pending, HASH)) as f:
            committed = last.get("policy_hash") == f.read().strip()
    except (IOError, OSError, ValueError):
        committed = False
    if committed:
        if not module.check_mode:
            shutil.rmtree(pending, ignore_errors=True)
        return read_dir(path)
    old = read_dir(pending)
    if not module.check_mode:
        write_dir(module, path, old, read_dir(path))
        shutil.rmtree(pending, ignore_errors=True)
    return old


def applied(module):
    p = module.params
    path = p["path"]
    have = settle_pending(module, path)
    try:
        want = desired_files(have, p["files"], p["purge"])
    except PolicyModuleError as e:
        module.fail_json(msg=str(e))
    files = file_changes(have, want)
    staged = tempfile.mkdtemp(prefix="vfwarp-policy-")
    try:
        write_dir(module, staged, want, {})
        changes, worst, unread = run_plan(module, staged, path)
    finally:
        shutil.rmtree(staged, ignore_errors=True)
    result = dict(changed=is_changed(changes, files), plan=plan_text(changes, worst, unread),
                  changes=changes, worst=worst, files_changed=[f[0] for f in files])
    if module._diff:
        result["diff"] = build_diff(path, changes, files)
    if module.check_mode or not result["changed"]:
        module.exit_json(**result)
    write_dir(module, path, want, have)
    if not changes:
        module.exit_json(**result)
    rc, out, err = ctl(module, apply_args(path, p["confirm_within"], p["skip"],
                                          p["skip_unapplied"], p["state_dir"]))
    doc, failure = apply_outcome(rc, out)
    result["apply"] = doc
    if failure:
        write_dir(module, path, have, read_dir(path))        # the files the host still matches
        module.fail_json(msg=failure, stderr=err.strip(), **result)
    if p["confirm_within"]:
        pending = os.path.join(path, PENDING)
        shutil.rmtree(pending, ignore_errors=True)
        write_dir(module, pending, have, {})                 # restored if the apply is reverted
        with open(os.path.join(pending, HASH), "w") as f:
            f.write(str(doc.get("policy_hash", "")))
    module.exit_json(**result)


def committed(module):
    p = module.params
    pending = os.path.join(p["path"], PENDING)
    if module.check_mode:
        module.exit_json(changed=os.path.isdir(pending))
    args = ["commit", "--json"] + (["--state-dir", p["state_dir"]] if p["state_dir"] else [])
    rc, out, err = ctl(module, args)
    doc, failure = apply_outcome(rc, out)
    if rc == 9 and doc.get("result") == "nothing":
        shutil.rmtree(pending, ignore_errors=True)
        module.exit_json(changed=False, apply=doc)
    if failure:
        if os.path.isdir(pending):                           # reverted: the old files again
            write_dir(module, p["path"], read_dir(pending), read_dir(p["path"]))
            shutil.rmtree(pending, ignore_errors=True)
        module.fail_json(msg=failure, stderr=err.strip(), apply=doc)
    shutil.rmtree(pending, ignore_errors=True)
    module.exit_json(changed=True, apply=doc)


def main():
    module = AnsibleModule(
        argument_spec=dict(
            path=dict(type="path", default="/etc/vfwarp/policy"),
            files=dict(type="dict", default={}),
            purge=dict(type="list", elements="str", default=[]),
            state=dict(type="str", choices=["applied", "committed"], default="applied"),
            confirm_within=dict(type="int"),
            skip=dict(type="list", elements="str", default=[]),
            skip_unapplied=dict(type="bool", default=False),
            state_dir=dict(type="path"),
            vfwarpctl=dict(type="path", default="/usr/local/sbin/vfwarpctl"),
        ),
        supports_check_mode=True,
    )
    if module.params["state"] == "committed":
        committed(module)
    applied(module)


if __name__ == "__main__":
    main()
