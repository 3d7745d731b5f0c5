"""Put one VF back at its tenant's link settings after libvirt changed them
(`vfwarpctl reapply-vf`; started by the libvirt network hook, hook.py).

Why this exists: when libvirt hands a VF of a hostdev pool network
(`vfwarp-TENANT`) to a domain it sets the VF's MAC and the network's VLAN
through the PF, always with 802.1p priority 0: libvirt's `<vlan>` has a tag
and a native mode, no priority, so the network XML cannot carry the tenant's
`vlan_priority`. When the domain lets the VF go, libvirt restores the MAC
and VLAN tag it saved, again with priority 0. Both happen after the network's
hook has run (libvirt allocates the port, runs the hook, then programs the
VF), so a hook cannot set the VF itself: it starts this "hold", which
watches the PF's netlink link events for a bounded time and re-applies the
VF's settings whenever they differ from the files.

Narrow on purpose: only `ip link set PF vf N` properties of one VF that
belongs to a tenant, only those that differ, the MAC only where the file
gives one (a tenant without MACs leaves them to libvirt, desired.py). Each
correction takes the manager's lock briefly (an apply in progress is never
interleaved; a busy lock is retried at the next event) and is skipped while
a journal says a transaction was cut short (the next apply recovers it).
The files are read again for each correction (parse cache), so a hold
follows the files an apply has just made current.
"""
import os
import re
import select
import signal
import subprocess
import time

from ..layers import live, vfs
from ..txn import statedir
from ..txn.lock import Lock, LockBusy

SYSFS_PCI = "/sys/bus/pci/devices"
PCI_RE = re.compile(r"^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$")
POLL = 2.0            # seconds between checks when no link event comes
LOCK_WAIT = 2.0       # how long a correction waits for an apply's lock
HOLDS = "holds"       # STATE_DIR/holds/PCI.pid: the running hold of each VF


class HoldError(RuntimeError):
    """The VF or its policy cannot be found (exit 3 of reapply-vf)."""


def vf_of_pci(pci, sysfs=SYSFS_PCI):
    """(PF netdev, VF number) of a VF's PCI address, from sysfs: the VF's
    physfn link and the PF's virtfnN links."""
    if not PCI_RE.match(pci):
        raise HoldError(f"{pci!r} is not a PCI address (dddd:bb:ss.f, lower-case hex)")
    vf_dir = os.path.join(sysfs, pci)
    physfn = os.path.join(vf_dir, "physfn")
    if not os.path.exists(physfn):
        raise HoldError(f"{pci}: no such VF (no {physfn})")
    pf_dir = os.path.realpath(physfn)
    try:
        nets = sorted(os.listdir(os.path.join(pf_dir, "net")))
    except FileNotFoundError:
        nets = []
    if len(nets) != 1:
        raise HoldError(f"{pci}: its PF {os.path.basename(pf_dir)} has {len(nets)} netdevs")
    want = os.path.realpath(vf_dir)
    for name in os.listdir(pf_dir):
        if name.startswith("virtfn") and name[6:].isdigit() and \
                os.path.realpath(os.path.join(pf_dir, name)) == want:
            return nets[0], int(name[6:])
    raise HoldError(f"{pci}: not among the virtfn links of {os.path.basename(pf_dir)}")


def wanted(desired, pf, n):
    """The VF's link settings the files ask for, or None when the files give
    the VF to no tenant (a pool VF: never touched here)."""
    if desired["pf"] != pf:
        raise HoldError(f"the files describe PF {desired['pf']}, the VF is on {pf}")
    vf = desired["vfs"].get(n)
    if vf is None or not vf["owner"].startswith("tenant/"):
        return None
    return {k: v for k, v in vf.items() if k != "owner"}


def corrections(have, want):
    """{prop: (live, wanted)} for what differs (groups completed: a VLAN goes
    with its priority, the two rates together)."""
    return {p: (have.get(p), want[p]) for p in sorted(vfs.vf_changed(have, want))}


def set_argv(pf, n, want, props):
    return ["ip", "link", "set", "dev", pf, "vf", str(n)] + \
        [str(a) for a in vfs.vf_args({p: want[p] for p in props})]


class Hold:
    """One VF held at its files' settings. load: () -> desired dict (the
    files compiled); runner: runs `ip`; say: one log line."""

    def __init__(self, runner, sd, load, pf, n, say):
        self.runner, self.sd, self.load, self.pf, self.n, self.say = runner, sd, load, pf, n, say
        self.corrected = 0
        self.at_policy = None            # after the last check: True, False, None (unknown)

    def check(self):
        """Re-apply what differs, once. Returns the corrections made ({} when
        none were needed or the lock was busy)."""
        try:
            lock = Lock(self.sd.lock).acquire(LOCK_WAIT)
        except LockBusy:
            self.say("lock busy (an apply runs): checked again at the next event")
            self.at_policy = None
            return {}
        try:
            if os.path.exists(self.sd.journal):
                self.say(f"{self.sd.journal} exists (a transaction was cut short): not touched; "
                         "the next apply recovers it")
                self.at_policy = None
                return {}
            want = wanted(self.load(), self.pf, self.n)
            if want is None:
                self.say(f"{self.pf} vf {self.n} belongs to no tenant in the files: nothing to hold")
                self.at_policy = True
                return {}
            have = live.read_ip_link_vfs(self.runner, self.pf).get(self.n)
            if have is None:
                raise HoldError(f"{self.pf} has no VF {self.n} now")
            fix = corrections(have, want)
            if fix:
                self.runner.check(set_argv(self.pf, self.n, want, fix))
                self.corrected += 1
                self.say(f"{self.pf} vf {self.n}: " +
                         ", ".join(f"{p} {vfs.fmt(a)} -> {vfs.fmt(b)}"
                                   for p, (a, b) in fix.items() if a != b))
            self.at_policy = True
            return fix
        finally:
            lock.release()

    def run(self, seconds, monitor=("ip", "-o", "monitor", "link")):
        """Check now, then at every link event (and every POLL seconds) until
        `seconds` have passed. Errors are logged and checked again later;
        never longer than `seconds` (+ one check)."""
        deadline = time.monotonic() + seconds
        mon = _start(monitor)
        try:
            while True:
                self._safe_check()
                left = deadline - time.monotonic()
                if left <= 0:
                    return
                if mon is None:
                    time.sleep(min(POLL, left))
                    continue
                ready, _, _ = select.select([mon.stdout], [], [], min(POLL, left))
                if ready and not _drain(mon.stdout):
                    self.say("ip monitor ended: polling every %.0f s" % POLL)
                    mon = _stop(mon)
                time.sleep(0.05)              # let a burst of settings (MAC, then VLAN) land
                if mon is not None:
                    _drain(mon.stdout, block=False)
        finally:
            _stop(mon)

    def _safe_check(self):
        try:
            self.check()
        except Exception as e:            # noqa: BLE001 - a hold logs and goes on until its end
            self.at_policy = False
            self.say(f"{self.pf} vf {self.n}: not corrected: {e}")


def _start(argv):
    try:
        return subprocess.Popen(list(argv), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL)
    except OSError:
        return None


def _stop(p):
    if p is not None and p.poll() is None:
        p.terminate()
        try:
            p.wait(5)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
    return None


def _drain(f, block=True):
    """Read what the monitor printed; False at end of file."""
    fd = f.fileno()
    got = True
    while True:
        if not block and not select.select([fd], [], [], 0)[0]:
            return got
        data = os.read(fd, 65536)
        if not data:
            return False
        block = False


# ---- one hold per VF -------------------------------------------------------

def _pidfile(sd, pci):
    return os.path.join(sd.path, HOLDS, pci + ".pid")


def _is_hold(pid):
    """Whether pid is a running `vfwarpctl reapply-vf` (a pid file can outlive
    its process, and the pid be reused)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return b"\0reapply-vf\0" in f.read()
    except OSError:
        return False


def _read_pid(path):
    try:
        with open(path) as f:
            text = f.read(32).strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def claim(sd, pci):
    """Become the hold of this VF: a hold started earlier for it (its port
    created, now deleted) is ended, the newer event decides."""
    d = os.path.join(sd.path, HOLDS)
    os.makedirs(d, mode=0o700, exist_ok=True)
    path = _pidfile(sd, pci)
    old = _read_pid(path)
    if old and old != os.getpid() and _is_hold(old):
        _end(old)
    statedir.write_text(path, f"{os.getpid()}\n")


def release(sd, pci):
    path = _pidfile(sd, pci)
    if _read_pid(path) == os.getpid():
        statedir.remove(path)


def end_all(sd):
    """End every running hold of this state dir; their VFs' PCI addresses.

    The pid files are not enough: the hook starts a hold detached, and the
    hold writes its pid file only once its files are parsed (seconds under
    load). A hold that the hook started just before remove-hook but that has
    not claimed yet would outlive the hook and keep re-applying its VF for
    its whole window. So every process of this state dir whose command line
    is a reapply-vf hold is ended too."""
    d = os.path.join(sd.path, HOLDS)
    ended = []
    for name in sorted(os.listdir(d)) if os.path.isdir(d) else []:
        pid = _read_pid(os.path.join(d, name))
        if pid and _is_hold(pid):
            _end(pid)
            ended.append(name[:-4])
        statedir.remove(os.path.join(d, name))
    for pid, key in _holds_running(sd):
        if _end(pid) and key not in ended:
            ended.append(key)
    return sorted(ended)


def _end(pid):
    try:
        os.kill(pid, signal.SIGTERM)
        return True
    except ProcessLookupError:           # ended on its own meanwhile
        return False


def _holds_running(sd):
    """[(pid, VF key)] of the processes running `vfwarpctl reapply-vf --hold`
    for this state dir (read from their command lines)."""
    mine = os.path.realpath(sd.path)
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as f:
                argv = f.read(65536).split(b"\0")
        except OSError:
            continue
        if b"reapply-vf" not in argv or b"--hold" not in argv:
            continue
        args = [a.decode("utf-8", "replace") for a in argv]
        opt = {a: args[i + 1] for i, a in enumerate(args[:-1]) if a in ("--state-dir", "--pci", "--vf")}
        if "--state-dir" in opt and os.path.realpath(opt["--state-dir"]) == mine:
            found.append((int(name), opt.get("--pci") or f"vf{opt.get('--vf', '?')}"))
    return found
