"""The libvirt network hook that keeps a pool VF at its tenant's policy while
a domain holds it (`vfwarpctl install-hook` / `remove-hook`; hold.py says
why a hook is needed and what the hold does).

libvirt runs HOOKS_DIR/network.d/* (since 6.5.0) as
`SCRIPT NETWORK OP SUBOP -` with `<hookData><network/><networkport/></hookData>`
on standard input, and waits for it: it captures the script's standard
output and error until they close, and a non-zero exit fails the operation
(a domain would not start). So the hook:
  - acts only on `port-created` and `port-deleted` of a network that is
    vfwarpctl's (name `vfwarp-*` AND our metadata) with a `hostdev-pci` plug;
  - starts `vfwarpctl reapply-vf --pci ADDR --hold SECONDS FILES` detached
    (its own session, standard streams on the log file, never on libvirt's
    pipes) and returns at once: libvirt programs the VF only after the hook
    (port created, then hostdev prepared), so nothing could be corrected yet;
  - always exits 0: a failure is written to the log (and shows as drift),
    never turned into a failed domain start or stop.
The script is Python, stdlib only (no YAML: parsing the files is the hold's
work), with its settings written into it as a JSON literal; nothing from the
network XML reaches a shell.
"""
import json
import os
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

META_NS = "urn:vfwarp:manager:1"
PREFIX = "vfwarp-"
OPS = ("port-created", "port-deleted")
HOOK_NAME = "vfwarp"
DEFAULT_HOOKS_DIR = "/etc/libvirt/hooks"
DEFAULT_LOG = "/var/log/vfwarp/libvirt-hook.log"
DEFAULT_HOLD = 60
MAX_INPUT = 1 << 20
# libvirt's daemons that run network hooks: the modular one, or the monolithic one
DAEMONS = ("virtnetworkd.service", "libvirtd.service")

SCRIPT = """#!{python}
# vfwarpctl's libvirt network hook (installed by `vfwarpctl install-hook`,
# removed by `vfwarpctl remove-hook`; docs/policy.md "libvirt networks").
import json, sys
CONFIG = json.loads({config!r})
sys.path.insert(0, CONFIG["package_dir"])
from vfwarp_manager.libvirt.hook import network_hook
sys.exit(network_hook(sys.argv[1:], sys.stdin.buffer, CONFIG))
"""


def port_vf(xml_bytes):
    """(network name, owner domain, VF PCI address) of a hook's input when
    the network is ours and the port a hostdev-pci plug, else None."""
    root = ET.fromstring(xml_bytes)
    net = root.find("network")
    port = root.find("networkport")
    if net is None or port is None:
        return None
    name = (net.findtext("name") or "").strip()
    if not name.startswith(PREFIX) or net.find(f"metadata/{{{META_NS}}}*") is None:
        return None
    addr = port.find("plug[@type='hostdev-pci']/address")
    if addr is None:
        return None
    try:
        parts = [int(addr.get(k, ""), 16) for k in ("domain", "bus", "slot", "function")]
    except ValueError:
        return None
    owner = (port.findtext("owner/name") or "?").strip()
    return name, owner, "%04x:%02x:%02x.%x" % tuple(parts)


def hold_argv(config, pci, reason):
    return [config["python"], config["vfwarpctl"], "reapply-vf", "--pci", pci,
            "--hold", str(config["hold"]), "--state-dir", config["state_dir"],
            "--reason", reason] + list(config["files"])


def network_hook(argv, stdin, config, spawn=None):
    """The hook's body; returns its exit status (always 0, see above)."""
    log = config["log"]
    try:
        data = stdin.read(MAX_INPUT)            # all of it: libvirt writes it before waiting
        if len(argv) < 2 or argv[1] not in OPS or not argv[0].startswith(PREFIX):
            return 0
        found = port_vf(data)
        if found is None:
            return 0
        name, owner, pci = found
        reason = f"{argv[1]} {name} domain {''.join(c for c in owner if c.isprintable())[:64]}"
        (spawn or _spawn)(hold_argv(config, pci, reason), log)
    except Exception as e:                      # noqa: BLE001 - never fail libvirt's operation
        _log(log, f"hook {' '.join(argv[:2])}: {type(e).__name__}: {e}")
    return 0


def _log(path, line):
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "a") as f:
            f.write(f"{time.strftime('%Y-%m-%dT%H:%M:%S%z')} {line}\n")
    except OSError:
        sys.stderr.write(f"vfwarp hook: {line}\n")     # libvirt's own log keeps it


def _spawn(argv, log):
    """Start argv detached: its own session, streams on the log file, so that
    libvirt (waiting for our output to close) is not held by it."""
    os.makedirs(os.path.dirname(log), exist_ok=True)
    with open(log, "ab") as out:
        subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                         start_new_session=True, close_fds=True)


# ---- install / remove --------------------------------------------------------

def hook_path(hooks_dir):
    return os.path.join(hooks_dir, "network.d", HOOK_NAME)


def script(config):
    return SCRIPT.format(python=config["python"], config=json.dumps(config, sort_keys=True))


def install(hooks_dir, config):
    """Write the hook (atomically, 0755). Returns True when it changed."""
    path = hook_path(hooks_dir)
    text = script(config)
    try:
        with open(path) as f:
            if f.read() == text:
                return False
    except FileNotFoundError:
        pass
    os.makedirs(os.path.dirname(path), mode=0o755, exist_ok=True)
    tmp = f"{path}.tmp.{os.getpid()}"
    with open(tmp, "w") as f:
        f.write(text)
    os.chmod(tmp, 0o755)
    os.replace(tmp, path)
    return True


def remove(hooks_dir):
    """Remove the hook. Returns True when there was one."""
    try:
        os.unlink(hook_path(hooks_dir))
        return True
    except FileNotFoundError:
        return False


def reload_daemons(runner):
    """libvirt looks for hook scripts when its daemon starts or reloads
    (SIGHUP): reload the ones that run (a stopped, socket-activated daemon
    finds the hook when it starts). Returns [(unit, problem or None)]."""
    if not runner.which("systemctl"):
        return [("systemctl", "not found: reload libvirt's network daemon by hand")]
    out = []
    for unit in DAEMONS:
        if runner.run(["systemctl", "is-active", "--quiet", unit]).returncode != 0:
            continue
        r = runner.run(["systemctl", "reload", unit])
        out.append((unit, None if r.returncode == 0 else (r.stderr.strip() or f"exit {r.returncode}")))
    return out
