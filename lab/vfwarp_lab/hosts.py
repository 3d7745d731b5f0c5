"""Boot, reach and tear down emulated hypervisor hosts (L1).

Each host is one process of the patched QEMU: q35 with a split irqchip,
intel-iommu (interrupt remapping, caching mode, so VFIO works inside), the
vfwarp adapter on a PCIe root port with its uplink on the lab wire, a
virtio-net management NIC on QEMU's user network with ssh forwarded to a
127.0.0.1 port, the repo's build/guest folder shared read-only over 9p, and
the serial console in a log file. The disk image is never written: QEMU's
snapshot mode keeps each host's writes in a temporary overlay.

State lives in one directory (lab.json + sockets + logs), so `down` and
`status` work from another process, and nothing outlives `down`.
"""
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from . import wire
from .paths import (FIRMWARE_DIRS, LEAN_KERNEL_ARGS, Image, LabError, guest_share_dir,
                    qemu_binary)

DEFAULT_STATE = Path(os.environ.get("VFWARP_LAB_STATE", "/tmp/vfwarp-lab"))
SSH_OPTS = ["-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null",
            "-o", "LogLevel=ERROR", "-o", "BatchMode=yes", "-o", "ConnectTimeout=5"]
# ssh's own complaints about a shared connection (a stale or full master):
# the command did not run, so it is tried again on a connection of its own.
MUX_FAILED = re.compile(r"mux_client|[Cc]ontrol ?[Ss]ocket|Session open refused|"
                        r"administratively prohibited|master is dead")
# Nice value of each QEMU's main thread, where the adapter's model runs
# (doorbell bottom halves, frames from the wire, timers), set once the
# host answers ssh (its vCPU threads exist by then and stay at 0; threads
# the main thread starts later, I/O workers, inherit it). Hardware works
# beside the CPUs; under TCG on 2 cores a spinning vCPU (perftest
# busy-polls) otherwise holds the core while the device waits a scheduler
# slice: ib_write_lat's mean 99-133 -> 58-64 usec, its 99th percentile
# 1.0-1.9 -> 0.6-0.8 ms (bench/device_priority.py, docs/verbs-bench.md).
DEVICE_THREAD_NICE = -10
UNIX_PATH_MAX = 100   # sun_path is 108 bytes; ssh adds a suffix while binding
# One ssh probe of a booting host: a probe past it is killed and counts as
# "not up yet" (the next one is tried until the boot timeout). Under load
# (make test beside the lab) a probe took longer than 60 s and its
# TimeoutExpired ended `labctl up` with a traceback after 295 s.
SSH_PROBE_TIMEOUT = 60.0
SSH_PROBE_INTERVAL = 2.0
# `ssh -O exit` to a kept connection's master (a local socket)
SSH_CONTROL_TIMEOUT = 30.0


def device_opts() -> str:
    """Extra properties of the adapter from VFWARP_DEVICE_OPTS (benchmarks and
    experiments, e.g. "line-rate=12000000"); checked, since they reach
    QEMU's command line."""
    opts = os.environ.get("VFWARP_DEVICE_OPTS", "").strip()
    if not opts:
        return ""
    if not re.fullmatch(r"[a-z0-9-]+=[A-Za-z0-9.]+(,[a-z0-9-]+=[A-Za-z0-9.]+)*", opts):
        raise LabError(f"VFWARP_DEVICE_OPTS: '{opts}' is not prop=value[,prop=value...]")
    return "," + opts


@dataclass
class HostSpec:
    name: str
    index: int
    ssh_port: int
    mem_mb: int = 2048
    cpus: int = 1
    pid: int = 0
    extra: list = field(default_factory=list)

    @property
    def uplink_mac(self) -> str:
        return f"02:00:00:00:{self.index:02x}:00"

    @property
    def mgmt_mac(self) -> str:
        return f"52:54:00:00:00:{self.index:02x}"


def _port_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie child still answers kill(0); reap it if it is ours.
    try:
        done, _ = os.waitpid(pid, os.WNOHANG)
        return done == 0
    except ChildProcessError:
        stat = Path(f"/proc/{pid}/stat")
        return stat.exists() and stat.read_text().split()[2] != "Z"


def _runs_in(pid: int, state: Path) -> bool:
    """Is `pid` a live process of the lab in `state`? Guards against pid
    reuse after a crash: every lab process names the state dir in its argv."""
    if not _alive(pid):
        return False
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return False
    return str(state) in cmdline


class Lab:
    """A set of emulated hosts sharing one state directory."""

    def __init__(self, state: Path = DEFAULT_STATE, image: Image = None, log=None):
        self.state = Path(state).absolute()
        self._image = image
        self.log = log or (lambda msg: print(msg, file=sys.stderr, flush=True))
        self.hosts = {}
        self.hub_pid = 0
        self._load()

    # ---- persistent state -------------------------------------------------
    @property
    def state_file(self) -> Path:
        return self.state / "lab.json"

    @property
    def image(self) -> Image:
        if self._image is None:
            self._image = Image.default()
        return self._image

    def _load(self):
        if self.state_file.exists():
            data = json.loads(self.state_file.read_text())
            self.hosts = {h["name"]: HostSpec(**h) for h in data.get("hosts", [])}
            self.hub_pid = data.get("hub_pid", 0)
            if data.get("image"):
                self._image = self._image or Image(Path(data["image"]))

    def _save(self):
        self.state.mkdir(parents=True, exist_ok=True)
        data = {"hosts": [asdict(h) for h in self.hosts.values()],
                "hub_pid": self.hub_pid, "image": str(self.image.path)}
        tmp = self.state_file.with_suffix(".tmp")
        tmp.write_text(json.dumps(data, indent=1))
        tmp.replace(self.state_file)

    # ---- lifecycle ----------------------------------------------------------
    def up(self, count: int = 2, ssh_port_base: int = 0, mem_mb: int = 2048,
           cpus: int = 1, boot_timeout: float = 600.0, virtio_wire: bool = False) -> list:
        """Boot `count` hosts h1..hN and wait until each answers ssh.

        virtio_wire (two hosts only; benchmarks): also join the hosts with a
        virtio-net NIC each (MAC 52:54:00:01:00:<n>) on a second wire, as the
        software-switched baseline next to the adapter."""
        if virtio_wire and count != 2:
            raise LabError("virtio_wire needs exactly 2 hosts")
        if count < 1 or count > 16:
            raise LabError(f"host count must be 1..16, not {count}")
        if any(_runs_in(h.pid, self.state) for h in self.hosts.values()):
            raise LabError(f"a lab is already running in {self.state}: run 'down' first")
        image = self.image           # fails early, with one line, if missing
        qemu = qemu_binary()
        self.state.mkdir(parents=True, exist_ok=True)
        self.hosts = {}
        names = [f"h{i}" for i in range(1, count + 1)]
        ports = []
        for i in range(count):
            if ssh_port_base:
                port = ssh_port_base + i
                if not _port_free(port):
                    raise LabError(f"ssh port {port} on 127.0.0.1 is in use: pick another base")
            else:
                port = _free_port()
            ports.append(port)
        try:
            if count > 2:
                self._start_hub(names)
            for i, name in enumerate(names):
                spec = HostSpec(name=name, index=i + 1, ssh_port=ports[i],
                                mem_mb=mem_mb, cpus=cpus)
                if virtio_wire:
                    other = names[1 - i]
                    vl, vr = (self.state / f"wire-v-{h}.sock" for h in (name, other))
                    if vl.exists():
                        vl.unlink()
                    spec.extra = [
                        "-netdev", f"dgram,id=vwire,local.type=unix,local.path={vl},"
                                   f"remote.type=unix,remote.path={vr}",
                        "-device", f"virtio-net-pci,netdev=vwire,mac=52:54:00:01:00:{i + 1:02x},"
                                   "romfile="]
                self._start_qemu(qemu, image, spec, names)
                self.hosts[name] = spec
                self._save()
            self._wait_all_ssh(names, boot_timeout)
        except BaseException:
            self.down()
            raise
        return names

    def _start_hub(self, names):
        log = open(self.state / "wire-hub.log", "wb")
        proc = subprocess.Popen([sys.executable, "-m", "vfwarp_lab.wire", str(self.state), *names],
                                cwd=Path(__file__).resolve().parents[1], stdout=log,
                                stderr=subprocess.STDOUT, start_new_session=True)
        self.hub_pid = proc.pid

    def qemu_argv(self, qemu: Path, image: Image, spec: HostSpec, names: list) -> list:
        st = self.state
        argv = [str(qemu)]
        for d in FIRMWARE_DIRS:
            argv += ["-L", d]
        argv += [
            "-name", f"vfwarp-{spec.name}",
            "-machine", "q35,kernel-irqchip=split", "-accel", "tcg",
            "-cpu", "max", "-smp", str(spec.cpus), "-m", str(spec.mem_mb),
            "-device", "intel-iommu,intremap=on,caching-mode=on",
            "-kernel", str(image.kernel), "-initrd", str(image.initrd),
            # no_timer_check: under TCG on a loaded machine the kernel's
            # IO-APIC timer probe can miss its window and panic ("timer
            # doesn't work through Interrupt-remapped IO-APIC"); seen here.
            # tsc=reliable: no clocksource watchdog on the TSC. Under load a
            # watchdog read was 31 ms late (the vCPU descheduled), the kernel
            # marked the TSC unstable and moved to the HPET mid-run (CI-style
            # run 2026-11-29, h1 at 1,696 s of uptime). QEMU keeps TCG's TSC
            # monotonic (it follows the host clock). perftest's rows of 0.00
            # are not this: its own clock sampling failing under load
            # (tests/lab/lib/perftest.py PERFTEST_UNCALIBRATED), seen with it too.
            "-append", f"root=/dev/vda rw console=ttyS0 intel_iommu=on no_timer_check tsc=reliable "
                       f"{LEAN_KERNEL_ARGS} vfwarp.host={spec.name}",
            "-drive", f"file={image.disk},if=virtio,format=raw,snapshot=on",
            "-netdev", f"user,id=mgmt,hostfwd=tcp:127.0.0.1:{spec.ssh_port}-:22",
            "-device", f"virtio-net-pci,netdev=mgmt,mac={spec.mgmt_mac},romfile=",
            "-device", "pcie-root-port,id=rp0,chassis=1,slot=0",
            "-netdev", wire.netdev_arg(st, spec.name, names),
            "-device", f"vfwarp,bus=rp0,netdev=uplink,mac={spec.uplink_mac}" + device_opts(),
            "-virtfs", f"local,path={guest_share_dir()},mount_tag=vfwarp,"
                       "security_model=none,readonly=on",
            "-serial", f"file:{st / (spec.name + '.serial.log')}",
            "-monitor", f"unix:{st / (spec.name + '.monitor')},server,nowait",
            "-display", "none", "-vga", "none", "-nodefaults",
        ]
        return argv + spec.extra

    def _start_qemu(self, qemu, image, spec, names):
        st = self.state
        for p in (wire.port_path(st, spec.name), st / f"{spec.name}.monitor"):
            if p.exists():
                p.unlink()
        argv = self.qemu_argv(qemu, image, spec, names)
        (st / f"{spec.name}.cmdline").write_text(" ".join(argv) + "\n")
        err = open(st / f"{spec.name}.qemu.log", "wb")
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=err,
                                stderr=subprocess.STDOUT, start_new_session=True)
        spec.pid = proc.pid
        self.log(f"{spec.name}: QEMU pid {proc.pid} booting (serial log {st / (spec.name + '.serial.log')})")

    def _qemu_error(self, spec) -> str:
        path = self.state / f"{spec.name}.qemu.log"
        lines = path.read_text(errors="replace").strip().splitlines() if path.exists() else []
        return lines[-1] if lines else "no message"

    def _prioritize_device(self, spec):
        """The main thread (thread id = process id) above the vCPUs; without
        the right to raise a priority (not root) the lab runs as before."""
        try:
            os.setpriority(os.PRIO_PROCESS, spec.pid, DEVICE_THREAD_NICE)
        except PermissionError:
            self.log(f"{spec.name}: cannot raise the device thread's priority (not root): "
                     "RDMA latency figures will show host scheduling stalls")

    def _probe_ssh(self, spec, timeout: float) -> str:
        """One ssh round trip to a host: "" when it answered, else what
        happened (for the error when the boot timeout passes)."""
        try:
            r = subprocess.run(self._ssh_argv(spec, "true"), capture_output=True,
                               text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return f"ssh probe timed out after {round(timeout, 1):g}s"
        if r.returncode == 0:
            return ""
        err = (r.stderr or r.stdout or "").strip().splitlines()
        return f"ssh exited {r.returncode}" + (f": {err[-1]}" if err else "")

    def _wait_all_ssh(self, names, boot_timeout):
        """Wait until every host answers ssh; fail fast if any QEMU dies.
        A probe that fails or outlasts SSH_PROBE_TIMEOUT means "not up
        yet"; no probe runs past the boot timeout, and when it passes the
        error names the host and its last probe's outcome."""
        start = time.monotonic()
        deadline = start + boot_timeout
        waiting = list(names)
        last = {name: "no ssh probe answered yet" for name in names}
        last_note = start
        while waiting:
            for name in list(waiting):
                spec = self.hosts[name]
                for other in waiting:
                    if not _alive(self.hosts[other].pid):
                        raise LabError(f"{other}: QEMU died at boot: "
                                       f"{self._qemu_error(self.hosts[other])}")
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                last[name] = self._probe_ssh(spec, max(1.0, min(SSH_PROBE_TIMEOUT, left)))
                if not last[name]:
                    waiting.remove(name)
                    self._prioritize_device(spec)
                    self.log(f"{name}: up in {time.monotonic() - start:.0f}s, "
                             f"ssh -p {spec.ssh_port} root@127.0.0.1")
            now = time.monotonic()
            if waiting and now >= deadline:
                name = waiting[0]
                raise LabError(f"{name}: no ssh answer within {boot_timeout:.0f}s; last probe: "
                               f"{last[name]} (serial log: {self.state / (name + '.serial.log')})")
            if waiting and now - last_note >= 30:
                self.log(f"    ... waiting for {', '.join(waiting)} to boot: {now - start:.0f}s")
                last_note = now
            if waiting:
                time.sleep(max(0.0, min(SSH_PROBE_INTERVAL, deadline - now)))

    def down(self) -> int:
        """Stop every QEMU and the hub; remove sockets. Returns processes stopped."""
        stopped = 0
        for name in list(self.hosts):
            self.close_ssh(name)
        pids = [h.pid for h in self.hosts.values()] + [self.hub_pid]
        pids = [pid for pid in pids if _runs_in(pid, self.state)]
        for pid in pids:
            os.killpg(pid, signal.SIGTERM)
            stopped += 1
        deadline = time.monotonic() + 10
        for pid in pids:
            while _alive(pid) and time.monotonic() < deadline:
                time.sleep(0.1)
            if _alive(pid):
                os.killpg(pid, signal.SIGKILL)
        for pattern in ("wire-*.sock", "*.monitor"):
            for p in self.state.glob(pattern):
                p.unlink()
        self.hosts = {}
        self.hub_pid = 0
        if self.state.exists():
            self._save()
        return stopped

    def power_off(self, name: str):
        """Pull the plug of one host: its QEMU is killed at once, the guest gets
        no shutdown (fault tests: a peer gone mid-transfer)."""
        spec = self.host(name)
        self.close_ssh(name)
        if _runs_in(spec.pid, self.state):
            os.killpg(spec.pid, signal.SIGKILL)
            deadline = time.monotonic() + 10
            while _alive(spec.pid) and time.monotonic() < deadline:
                time.sleep(0.1)
        spec.pid = 0
        self._save()

    def power_on(self, name: str, boot_timeout: float = 600.0):
        """Boot a host that was powered off again, on its old ports and wire,
        from a fresh copy of the image (the disk is a snapshot per boot)."""
        spec = self.host(name)
        if _runs_in(spec.pid, self.state):
            raise LabError(f"{name}: already running (pid {spec.pid})")
        self._start_qemu(qemu_binary(), self.image, spec, list(self.hosts))
        self._save()
        self._wait_all_ssh([name], boot_timeout)

    def status(self) -> list:
        rows = []
        for h in self.hosts.values():
            rows.append({"host": h.name, "pid": h.pid, "running": _runs_in(h.pid, self.state),
                         "ssh": f"127.0.0.1:{h.ssh_port}", "uplink_mac": h.uplink_mac})
        return rows

    # ---- reaching hosts -----------------------------------------------------
    def host(self, name: str) -> HostSpec:
        if name not in self.hosts:
            known = ", ".join(self.hosts) or "none: the lab is down"
            raise LabError(f"unknown host '{name}' (hosts: {known})")
        return self.hosts[name]

    def _ssh_argv(self, spec, command: str) -> list:
        return ["ssh", "-i", str(self.image.key), "-p", str(spec.ssh_port), *SSH_OPTS,
                "root@127.0.0.1", command]

    def _mux_path(self, spec):
        """The control socket of the connection kept open to a host, or None
        when the state directory's path is too long for a Unix socket."""
        path = self.state / f"mux-{spec.name}-{spec.ssh_port}.ctl"
        return path if len(str(path)) + 20 < UNIX_PATH_MAX else None

    def _mux_argv(self, spec, command: str) -> list:
        """Like _ssh_argv, over one connection per host kept open. A fresh
        ssh session costs ~0.8 s of key exchange and authentication in a
        TCG guest, a channel on an open connection ~0.04 s; the lab tier
        runs many hundreds of commands."""
        path = self._mux_path(spec)
        if path is None:
            return self._ssh_argv(spec, command)
        mux = ["-o", "ControlMaster=auto", "-o", f"ControlPath={path}",
               "-o", "ControlPersist=600", "-o", "ServerAliveInterval=5",
               "-o", "ServerAliveCountMax=6"]
        argv = self._ssh_argv(spec, command)
        return argv[:-2] + mux + argv[-2:]

    def close_ssh(self, name: str):
        """End the kept connection to a host (before its power goes, or when
        the lab is taken down: nothing of the lab outlives `down`)."""
        spec = self.hosts.get(name)
        path = self._mux_path(spec) if spec else None
        if path is not None and path.exists():
            try:
                subprocess.run(["ssh", "-o", f"ControlPath={path}", "-O", "exit", "host"],
                               capture_output=True, timeout=SSH_CONTROL_TIMEOUT)
            except subprocess.TimeoutExpired:
                # a master that does not answer: the next command starts a
                # connection of its own, and `down` goes on to stop QEMU
                path.unlink(missing_ok=True)
                self.log(f"{name}: the kept ssh connection did not close within "
                         f"{SSH_CONTROL_TIMEOUT:.0f}s; its socket removed")

    def ssh(self, name: str, command: str, timeout: float = 300, check: bool = True,
            capture: bool = True) -> subprocess.CompletedProcess:
        spec = self.host(name)
        if not _runs_in(spec.pid, self.state):
            raise LabError(f"host '{name}' is not running")
        if not capture:   # a person's command (labctl ssh): output as it comes
            r = subprocess.run(self._ssh_argv(spec, command), text=True, timeout=timeout)
        else:
            r = subprocess.run(self._mux_argv(spec, command), capture_output=True,
                               text=True, timeout=timeout)
            if r.returncode == 255 and MUX_FAILED.search(r.stderr or ""):
                self.close_ssh(name)
                r = subprocess.run(self._ssh_argv(spec, command), capture_output=True,
                                   text=True, timeout=timeout)
        if check and r.returncode != 0:
            raise LabError(f"{name}: '{command}' exited {r.returncode}: "
                           f"{(r.stderr or r.stdout or '').strip()[-500:]}")
        return r
