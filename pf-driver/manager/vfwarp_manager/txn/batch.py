"""Runs of actions with batching: consecutive commands of one iproute2 tool
(`ip`, `devlink`) go to one `TOOL -batch -` process, one command per line,
instead of one process each. With 128 VFs an apply is a few hundred
commands; a process costs milliseconds natively and tens of milliseconds
on a small or emulated host, so one per command is most of an apply.

What the batch keeps of one-process-per-command:
  - order: lines run in order, each one netlink request as before;
  - where it failed: iproute2 stops at the first failing line and prints
    "Command failed -:N" (ip.c / devlink.c batch()), so the actions before
    N ran, N failed (it counts as run: it may have half-applied) and the
    rest did not; the error carries that command and its message. With
    `-force` (undo, recovery: keep going) every line runs and each failing
    one is reported. A failure that names no line (the tool could not start
    its netlink session) is charged to the batch's last action, so a
    transaction undoes all of it;
  - no shell: iproute2 splits a batch line at blanks and gives quotes and
    '#' a meaning, so an action with such a character in any argument
    (none of the manager's: names are validated, numbers are numbers) is
    not batched but run on its own, as an argv.

A VF's devlink port (rate_layer.leaf_action) is looked up once per batch:
no action that changes the ports (sriov_numvfs, the eswitch mode) is ever
part of one.
"""
import re
import subprocess

from .. import timings
from ..layers import live
from ..layers.actions import run_action
from ..runner import Result, ToolError

BATCH_TOOLS = ("ip", "devlink")
# How each tool spells keep-going and batch-from-stdin: ip takes its own
# -force/-batch; devlink parses options with getopt_long, where "-batch"
# would be "-b atch" (a file named atch), so it gets the long options.
BATCH_ARGS = {"ip": (["-force"], ["-batch", "-"]), "devlink": (["--force"], ["--batch", "-"])}
# Leading options a batch may carry for all its lines (ip -n NETNS ...).
PREFIX_OPTS = {"ip": ("-n", "-netns")}
# iproute2's makeargs (lib/utils.c): blanks split, quotes and '#' are syntax.
_PLAIN = re.compile(r"[^\s\"'\\#]+\Z")
MAX_LINE_ARGS = 90          # makeargs takes at most 100 arguments per line
_FAILED = re.compile(r"^Command failed -:(\d+)$", re.M)
ACTION_ERRORS = (ToolError, OSError, live.LiveError, subprocess.TimeoutExpired)


def batch_key(action):
    """(tool, leading options) when the action can go into a batch of that
    tool, else None."""
    if "argv" not in action or "flower" in action or "write" in action:
        return None
    a = action["argv"]
    if len(a) < 3 or a[0] not in BATCH_TOOLS:
        return None
    i = 1
    while i < len(a) and a[i].startswith("-"):
        if a[i] not in PREFIX_OPTS.get(a[0], ()) or i + 1 >= len(a):
            return None
        i += 2
    rest = a[i:]
    if not rest or len(rest) > MAX_LINE_ARGS or not all(_PLAIN.match(x) for x in a):
        return None
    if a[0] == "devlink" and rest[:3] == ["dev", "eswitch", "set"]:
        return None             # renumbers ports; it also stands alone in its step
    return (a[0], tuple(a[1:i]))


def _line_argv(action, key):
    return action["argv"][1 + len(key[1]):]


def _resolve(runner, action, ports):
    """The argv of an action, a VF's devlink port looked up (once per dev)."""
    if "vf_port" not in action:
        return list(action["argv"])
    dev, vf, i = action["vf_port"]
    if dev not in ports:
        ports[dev] = {n: idx for idx, n in live.read_vf_ports(runner, dev).items()}
    if vf not in ports[dev]:
        raise live.LiveError(f"{dev}: VF {vf} has no devlink port")
    argv = list(action["argv"])
    argv[i] = f"{dev}/{ports[dev][vf]}"
    return argv


def _split_errors(stderr):
    """{line number: the messages printed for it} from a batch's stderr."""
    out, start = {}, 0
    for m in _FAILED.finditer(stderr):
        out[int(m.group(1))] = stderr[start:m.start()].strip()
        start = m.end()
    return out


def _run_batch(runner, key, argvs, keep_going):
    """[(index in argvs, ToolError)] of one batch process."""
    tool, opts = key
    force, batch = BATCH_ARGS[tool]
    argv = [tool, *opts] + (force if keep_going else []) + batch
    text = "".join(" ".join(a[1 + len(opts):]) + "\n" for a in argvs)
    with timings.span(f"run {tool} batch"):
        r = runner.run(argv, stdin=text)
    if r.returncode == 0:
        return []
    failed = _split_errors(r.stderr)
    if not failed or any(not 1 <= n <= len(argvs) for n in failed):
        last = len(argvs) - 1
        return [(last, ToolError(Result(tuple(argv), r.returncode, r.stdout,
                                        f"batch of {len(argvs)} failed without naming a line "
                                        f"(all counted as run): {r.stderr}")))]
    return [(n - 1, ToolError(Result(tuple(argvs[n - 1]), r.returncode, "", msg)))
            for n, msg in sorted(failed.items())]


def run_actions(runner, actions, keep_going=False):
    """Run actions in order, batching where batch_key allows. Returns the
    errors [(index, exception)]: without keep_going at most one, and the
    actions after it did not run; with it, every failure (the rest ran)."""
    errors, i = [], 0
    while i < len(actions):
        key = batch_key(actions[i])
        j = i + 1
        while key and j < len(actions) and batch_key(actions[j]) == key:
            j += 1
        if j - i == 1:
            try:
                with timings.span(_single_name(actions[i])):
                    run_action(runner, actions[i])
            except ACTION_ERRORS as e:
                errors.append((i, e))
                if not keep_going:
                    return errors
            i = j
            continue
        ports, argvs, at = {}, [], i
        for k in range(i, j + 1):
            resolved = None
            if k < j:
                try:
                    resolved = _resolve(runner, actions[k], ports)
                except ACTION_ERRORS as e:
                    resolved = e
            if k == j or isinstance(resolved, Exception):
                errs = _run_batch(runner, key, argvs, keep_going) if argvs else []
                errors += [(at + n, e) for n, e in errs]
                if errs and not keep_going:
                    return errors
                if k < j:
                    errors.append((k, resolved))
                    if not keep_going:
                        return errors
                argvs, at = [], k + 1
            else:
                argvs.append(resolved)
        i = j
    return errors


def _single_name(action):
    if "write" in action:
        return "run sysfs write"
    if "flower" in action:
        return "run tc flower"
    if "net_define" in action:
        return "run virsh"
    return f"run {action['argv'][0]}"
