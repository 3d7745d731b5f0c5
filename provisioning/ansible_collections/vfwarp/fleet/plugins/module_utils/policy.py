# -*- coding: utf-8 -*-
# Copyright: vfwarp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pure logic of the vfwarp_policy module, kept free of Ansible imports so the
repo's native tests (tests/provisioning/) exercise it directly:

- which policy files the directory should hold (files given, others purged),
- the plan of `vfwarpctl plan --json` turned into `changed` and a diff,
- what an exit status of `vfwarpctl apply|commit` means for the task.

vfwarpctl's exit statuses (docs/policy.md): 0 ok, 1 invalid, 2 usage, 3 live state
unreadable, 4 plan/drift differ, 5 failed and restored, 6 NOT restored, 7 busy,
8 refused (layer not applied yet), 9 nothing to roll back/commit.
"""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import fnmatch

POLICY_SUFFIXES = (".yaml", ".yml")

EXIT_TEXT = {
    0: "ok",
    1: "the policy files are invalid",
    2: "usage error",
    3: "the live state could not be read",
    4: "the host differs from the files",
    5: "apply failed and was undone: the host is back at its snapshot (verified)",
    6: "the host is NOT at its snapshot (an undo failed; the journal is kept)",
    7: "busy: another vfwarpctl holds the lock, or an apply waits for confirmation",
    8: "refused: the files ask for a layer that is not applied yet (nothing changed)",
    9: "nothing to roll back or commit (or too late: the change was reverted)",
    10: "refused: a libvirt network name is held by a foreign network, or the change would "
        "restart a network a running domain uses (nothing changed)",
}


class PolicyModuleError(Exception):
    pass


def is_policy_name(name):
    return name.endswith(POLICY_SUFFIXES) and "/" not in name and not name.startswith(".")


def desired_files(current, files, purge):
    """The directory's policy files after the task: `current` (name -> text, what
    the directory holds) with `files` (name -> text) written over it, and every
    other file matching a glob of `purge` removed."""
    for name in files:
        if not is_policy_name(name):
            raise PolicyModuleError(
                "policy file name %r: a plain file name ending .yaml or .yml" % name)
    out = {}
    for name, text in current.items():
        if name in files:
            continue
        if any(fnmatch.fnmatchcase(name, g) for g in purge or ()):
            continue
        out[name] = text
    for name, text in files.items():
        out[name] = text if text.endswith("\n") else text + "\n"
    return out


def file_changes(current, desired):
    """[(name, before or None, after or None)] for the files that differ, sorted."""
    out = []
    for name in sorted(set(current) | set(desired)):
        before, after = current.get(name), desired.get(name)
        if before != after:
            out.append((name, before, after))
    return out


def _fmt(value):
    if value is None:
        return "(none)"
    if isinstance(value, bool):
        return str(value).lower()
    return str(value)


def change_line(change):
    """One change of `plan --json` in vfwarpctl's own text form."""
    sym = {"add": "+", "remove": "-", "change": "~"}.get(change.get("action"), "~")
    return "%s %s %s %s: %s -> %s  [%s]" % (
        sym, change["layer"], change["object"], change["property"],
        _fmt(change.get("live")), _fmt(change.get("desired")), change.get("disruption"))


def parse_plan(rc, stdout):
    """(changes, worst, unread) from `vfwarpctl plan --json`; raises with the
    reason for any exit status but 0 (no change) and 4 (changes)."""
    if rc not in (0, 4):
        raise PolicyModuleError("vfwarpctl plan: exit %d (%s): %s"
                                % (rc, EXIT_TEXT.get(rc, "unknown"), stdout.strip()))
    import json
    doc = json.loads(stdout)
    changes = doc.get("changes") or []
    if (rc == 4) != bool(changes):
        raise PolicyModuleError("vfwarpctl plan: exit %d with %d changes" % (rc, len(changes)))
    return changes, doc.get("worst"), doc.get("unread") or {}


def plan_text(changes, worst, unread):
    lines = [change_line(c) for c in changes]
    lines += ["? %s: not compared: %s" % (k, v) for k, v in sorted(unread.items())]
    lines.append("%d changes" % len(changes) + (", worst: %s" % worst if changes else ""))
    return lines


def plan_diff(changes):
    """The plan as a before/after pair: each property's live value before,
    its desired value after (a property that is added has no before line)."""
    before, after = [], []
    for c in changes:
        key = "%s %s %s" % (c["layer"], c["object"], c["property"])
        if c.get("live") is not None:
            before.append("%s: %s\n" % (key, _fmt(c["live"])))
        if c.get("desired") is not None:
            after.append("%s: %s  [%s]\n" % (key, _fmt(c["desired"]), c.get("disruption")))
    return {"before_header": "live host (vfwarpctl plan)",
            "after_header": "after apply (%d changes)" % len(changes),
            "before": "".join(before), "after": "".join(after)}


def build_diff(path, changes, files):
    """Ansible's diff: the plan first (when non-empty), then each file that changes."""
    out = []
    if changes:
        out.append(plan_diff(changes))
    for name, before, after in files:
        out.append({"before_header": "%s/%s" % (path, name) if before is not None else "(absent)",
                    "after_header": "%s/%s" % (path, name) if after is not None else "(absent)",
                    "before": before or "", "after": after or ""})
    return out


def is_changed(changes, files):
    """A run changes the host when the plan is non-empty; rewriting a policy file
    whose live effect is nil (a comment, the order of keys) is a change of the
    file on disk, reported as such."""
    return bool(changes) or bool(files)


def apply_args(path, confirm_within=None, skip=None, skip_unapplied=False, state_dir=None):
    args = ["apply", "--json"]
    if state_dir:
        args += ["--state-dir", state_dir]
    if confirm_within:
        args += ["--confirm-within", str(int(confirm_within))]
    if skip_unapplied:
        args.append("--skip-unapplied")
    elif skip:
        args += ["--skip", ",".join(skip)]
    return args + [path]


def apply_outcome(rc, stdout):
    """(result document, failure message or None) of `vfwarpctl apply --json`."""
    import json
    try:
        doc = json.loads(stdout)
    except ValueError:
        doc = {}
    if rc == 0:
        return doc, None
    why = doc.get("rollback_reason") or doc.get("error") or ""
    if rc == 1:
        why = "; ".join("%(file)s:%(line)s:%(column)s: %(message)s" % e if isinstance(e, dict)
                        and "file" in e else str(e) for e in doc.get("errors", [])) or why
    elif rc == 8:
        why = ", ".join("%s: %s" % kv for kv in sorted((doc.get("not_applied") or {}).items()))
    tail = ": " + why if why else ""
    return doc, "vfwarpctl apply: exit %d (%s)%s" % (rc, EXIT_TEXT.get(rc, "unknown"), tail)


def remap_paths(text, staged, real):
    """Error text naming the staging directory, told with the real directory."""
    return text.replace(staged.rstrip("/") + "/", real.rstrip("/") + "/")
