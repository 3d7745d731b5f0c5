"""Tenant VMs (L2) on the lab's hosts, through each host's own libvirt.

A tenant is a nested guest that the host's libvirt starts with its stock
QEMU under KVM (DOMAIN_TYPE) from the tenant image (lab/build-tenant.sh: the guest kernel and
an initramfs root with vfwarp_vf, rdma-core + the vfwarp provider, perftest,
iperf3, sshd). VFs reach tenants the way operators give them: libvirt XML
(`<interface type='hostdev'>`, `<hostdev>`, or an interface drawn from a VF
pool network), at definition time or by `virsh attach-device --live`.

Tenants are reached like the hosts, by ssh: through the host (ProxyCommand,
`ssh -W`) to the tenant's address on the host's management bridge
`vfwmgmt0` (libvirt network `vfwarp-mgmt`, 10.200.0.0/24, no DHCP or DNS:
the address comes on the kernel command line). The management network is
for control only; the tenants' data goes through their VFs.

Why KVM works in a lab host: the lab's QEMU (TCG) gives each host the CPU
model `max`, an AMD one with SVM and nested paging, so the host's kvm_amd
loads and /dev/kvm is there. A tenant's instructions are then translated
once, by the lab's TCG, instead of twice (TCG in TCG): a tenant answers ssh
about 33 s after `virsh start` on a quiet machine, against 600 s (2026-11-28,
docs/tenants.md). Type 'qemu' (TCG inside the host) is still rendered for
a host without /dev/kvm.

The XML renderers are plain functions so the PF manager (issue 19) and the
Ansible collection can reuse them.
"""
import fcntl
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import threading
import time
import xml.etree.ElementTree as ET
from xml.sax.saxutils import escape, quoteattr

from .hosts import SSH_CONTROL_TIMEOUT
from .paths import LEAN_KERNEL_ARGS, LabError, guest_share_dir

MGMT_NET = "vfwarp-mgmt"
MGMT_BRIDGE = "vfwmgmt0"
MGMT_PREFIX = "10.200.0"
IMAGE_DIR = "/var/lib/libvirt/images/vfwarp-tenant"
SHARE = "/mnt/vfwarp/tenant"
VIRSH = "virsh -q -c qemu:///system"
# Kernel arguments of a tenant. Under nested TCG every instruction counts:
#  quiet                 each console character is an emulated UART access
#  tsc=reliable          no clocksource watchdog, no fallback to the HPET,
#  no_timer_check          whose every read is an MMIO exit two levels down
#  cryptomgr.notests     no self-test of each crypto algorithm at boot
#  LEAN_KERNEL_ARGS      paths.py: no allocation zeroing, no mitigations, three
#                        self-test initcalls skipped (76 s of a nested boot)
#  rcupdate.rcu_expedited=1  grace periods by IPI, not by waiting for ticks:
#                        each module load waits for some (rdma_ucm: 3.3 -> 1.8 s)
# The role guest's guest_boot_args carries the same words (a YAML default).
BOOT_ARGS = ("console=ttyS0 quiet tsc=reliable no_timer_check cryptomgr.notests "
             f"{LEAN_KERNEL_ARGS} rcupdate.rcu_expedited=1")
# The tenant's CPU: qemu64 with RDRAND (TCG emulates it). Without it the kernel's
# random pool was first seeded 66 s after init had started (by the jitter loop a
# blocking getrandom() runs), and sshd waited for it: with it the pool is ready at boot.
CPU_XML = {
    "kvm": "<cpu mode='host-passthrough'/>",
    "qemu": "<cpu mode='custom'><model>qemu64</model><feature policy='require' name='rdrand'/></cpu>",
}
# A tenant boot takes ~35 s under KVM on a quiet machine (TCG inside the host:
# 5-10 minutes, 11 seen with a second lab sharing the cores): allow the slow case.
BOOT_TIMEOUT = 1200.0
DOMAIN_TYPE = "kvm"
# ssh's own failures to reach a tenant, as opposed to a command's exit 255
SSH_SETUP_FAILED = re.compile(r"banner exchange|Connection (timed out|closed|refused|reset)|"
                              r"mux_client|control master|kex_exchange")
# Spare PCIe root ports in every tenant: q35 hot-plugs one device per port.
HOTPLUG_PORTS = 4


def mgmt_address(host_index: int, slot: int) -> str:
    """Tenant `slot` (0..9) of host `host_index` (1..): 10.200.0.<10*h+slot+1>.
    Unique across hosts, so a tenant address says where it runs."""
    if not 0 <= slot <= 9:
        raise LabError(f"tenant slot {slot} out of range 0..9")
    return f"{MGMT_PREFIX}.{host_index * 10 + slot + 1}"


# ---- libvirt XML -------------------------------------------------------------
def _pci_address_xml(bdf: str) -> str:
    """<address> of a host PCI device given as DDDD:BB:SS.F."""
    try:
        dom, bus, rest = bdf.split(":")
        slot, fn = rest.split(".")
        vals = [int(dom, 16), int(bus, 16), int(slot, 16), int(fn, 8)]
    except ValueError:
        raise LabError(f"not a PCI address (DDDD:BB:SS.F): {bdf!r}") from None
    return ("<address type='pci' domain='0x%04x' bus='0x%02x' slot='0x%02x' "
            "function='0x%x'/>" % tuple(vals))


def _vlan_xml(vlan) -> str:
    return f"<vlan><tag id='{int(vlan)}'/></vlan>" if vlan else ""


def hostdev_interface_xml(bdf: str, mac: str, vlan: int = 0) -> str:
    """A VF as a network interface: libvirt programs MAC and VLAN through
    the PF (`ip link set PF vf N mac .. vlan ..`) before VFIO takes it."""
    return (f"<interface type='hostdev' managed='yes'><mac address={quoteattr(mac)}/>"
            f"<source>{_pci_address_xml(bdf)}</source>{_vlan_xml(vlan)}</interface>")


def hostdev_xml(bdf: str) -> str:
    """A VF as a plain PCI device: libvirt binds it to vfio-pci and touches
    nothing else; MAC and VLAN stay as the host set them."""
    return (f"<hostdev mode='subsystem' type='pci' managed='yes'>"
            f"<source>{_pci_address_xml(bdf)}</source></hostdev>")


def pool_network_xml(name: str, pf_netdev: str) -> str:
    """A libvirt network that is a pool of the PF's VFs: an interface of
    type 'network' on it gets a free VF, or the start fails when none is."""
    return (f"<network><name>{escape(name)}</name>"
            f"<forward mode='hostdev' managed='yes'><pf dev={quoteattr(pf_netdev)}/></forward>"
            f"</network>")


def pool_interface_xml(network: str, mac: str, vlan: int = 0) -> str:
    return (f"<interface type='network'><source network={quoteattr(network)}/>"
            f"<mac address={quoteattr(mac)}/>{_vlan_xml(vlan)}</interface>")


def mgmt_network_xml() -> str:
    return (f"<network><name>{MGMT_NET}</name><bridge name='{MGMT_BRIDGE}' stp='off'/>"
            f"<dns enable='no'/><ip address='{MGMT_PREFIX}.1' prefix='24'/></network>")


def domain_xml(name: str, mgmt_ip: str, devices: tuple = (), mem_mb: int = 512,
               domain_type: str = DOMAIN_TYPE) -> str:
    """A tenant: direct kernel boot of the tenant image, the management NIC,
    the serial console into a file (boot progress), spare hot-plug ports,
    and `devices` (XML of VFs given at definition). `domain_type` 'kvm' (the
    lab hosts' KVM, DOMAIN_TYPE) or 'qemu' (TCG inside the host)."""
    if domain_type not in CPU_XML:
        raise ValueError(f"domain type {domain_type!r}: 'kvm' or 'qemu'")
    ports = "".join(f"<controller type='pci' index='{i}' model='pcie-root-port'/>"
                    for i in range(1, HOTPLUG_PORTS + 1 + len(devices)))
    cmdline = f"{BOOT_ARGS} vfwarp.host={name} vfwarp.mgmt={mgmt_ip}/24"
    return f"""<domain type='{domain_type}'>
  <name>{escape(name)}</name>
  <memory unit='MiB'>{int(mem_mb)}</memory>
  <vcpu>1</vcpu>
  <os>
    <type arch='x86_64' machine='q35'>hvm</type>
    <kernel>{IMAGE_DIR}/vmlinuz</kernel>
    <initrd>{IMAGE_DIR}/initrd.cpio</initrd>
    <cmdline>{escape(cmdline)}</cmdline>
  </os>
  <features><acpi/></features>
  {CPU_XML[domain_type]}
  <clock offset='utc'/>
  <on_poweroff>destroy</on_poweroff>
  <on_crash>destroy</on_crash>
  <devices>
    <controller type='pci' index='0' model='pcie-root'/>
    <controller type='usb' model='none'/>
    {ports}
    <interface type='network'><source network='{MGMT_NET}'/><model type='virtio'/></interface>
    {''.join(devices)}
    <serial type='file'><source path='/var/log/libvirt/qemu/{escape(name)}-serial.log'/><target port='0'/></serial>
    <memballoon model='none'/>
  </devices>
</domain>
"""


# ---- tenants on lab hosts -----------------------------------------------------
class Tenants:
    """Tenant VMs of a running Lab: set-up of a host's libvirt for tenants,
    start/stop, VF attach/detach, and ssh into a tenant."""

    def __init__(self, lab, progress=None):
        self.lab = lab
        self.progress = progress or (lambda msg: print(msg, file=sys.stderr, flush=True))
        # tenant name -> (host, address), kept in the lab's state directory
        # so separate labctl calls find the tenants
        self._file = lab.state / "tenants.json"
        self.where = self._load()

    def _load(self) -> dict:
        if not self._file.exists():
            return {}
        return {k: tuple(v) for k, v in json.loads(self._file.read_text() or "{}").items()}

    def _remember(self, name: str, host: str = None, addr: str = None):
        """Record (or with host None, forget) a tenant. Several labctl calls
        may run at once (`make demo` starts a tenant per host in parallel):
        read, change and write the file under a lock, so none is lost."""
        with open(self._file.with_suffix(".lock"), "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            self.where = self._load()
            if host is None:
                self.where.pop(name, None)
            else:
                self.where[name] = (host, addr)
            self._file.write_text(json.dumps(self.where, indent=1))

    # host side
    def prepare_host(self, host: str):
        """Idempotent: the tenant image copied in (when its key changed),
        vfio-pci loaded, the management network defined and running. A host
        without /dev/kvm is refused before anything is done."""
        key = (guest_share_dir() / "tenant" / "key")
        if not key.exists():
            raise LabError("no tenant image in build/guest/tenant: run 'make tenant' "
                           "(lab/build-tenant.sh)")
        if self.lab.ssh(host, "test -c /dev/kvm", check=False).returncode != 0:
            raise LabError(f"{host} has no /dev/kvm: tenants are KVM domains (DOMAIN_TYPE); "
                           "load kvm_amd or kvm_intel there")
        script = f"""set -e
mkdir -p {IMAGE_DIR} /var/lib/libvirt/dnsmasq
if ! cmp -s {SHARE}/key {IMAGE_DIR}/key; then
  cp {SHARE}/vmlinuz {SHARE}/initrd.cpio {IMAGE_DIR}/ && cp {SHARE}/key {IMAGE_DIR}/key
fi
modprobe vfio-pci
if ! {VIRSH} net-info {MGMT_NET} >/dev/null 2>&1; then
  cat >/tmp/{MGMT_NET}.xml <<'XML'
{mgmt_network_xml()}
XML
  {VIRSH} net-define /tmp/{MGMT_NET}.xml >/dev/null
fi
{VIRSH} net-info {MGMT_NET} | grep -q '^Active: *yes' || {VIRSH} net-start {MGMT_NET} >/dev/null
"""
        self.lab.ssh(host, script, timeout=300)

    def virsh(self, host: str, args: str, check: bool = True, stdin_xml: str = None,
              timeout: float = 300) -> subprocess.CompletedProcess:
        """`virsh ARGS` on host; with stdin_xml, the XML is written to a file
        on the host first and ARGS may name it as {xml}."""
        cmd = f"{VIRSH} {args}"
        if stdin_xml is not None:
            path = "/tmp/vfwarp-%d.xml" % time.monotonic_ns()
            cmd = (f"cat >{path} <<'XML'\n{stdin_xml}\nXML\n" +
                   f"{VIRSH} {args.format(xml=path)}; rc=$?; rm -f {path}; exit $rc")
        return self.lab.ssh(host, cmd, check=check, timeout=timeout)

    def adopt(self, host: str, name: str, slot: int):
        """Reach a tenant that is already running (started by an earlier run)."""
        self._remember(name, host, mgmt_address(self.lab.host(host).index, slot))

    def define(self, host: str, name: str, slot: int, devices: tuple = (), mem_mb: int = 512):
        addr = mgmt_address(self.lab.host(host).index, slot)
        self.virsh(host, "define {xml}", stdin_xml=domain_xml(name, addr, devices, mem_mb))
        self._remember(name, host, addr)
        return addr

    def start(self, host: str, name: str, slot: int, devices: tuple = (), mem_mb: int = 512,
              timeout: float = BOOT_TIMEOUT) -> float:
        """Define and start a tenant, wait until it answers ssh; returns the
        seconds from `virsh start` to a shell, printing progress meanwhile."""
        self.define(host, name, slot, devices, mem_mb)
        t0 = time.monotonic()
        self.virsh(host, f"start {name}")
        return self.wait_ssh(name, timeout, t0)

    def wait_ssh(self, name: str, timeout: float = BOOT_TIMEOUT, t0: float = None) -> float:
        """Seconds until the tenant runs a command over ssh, printing progress.
        An attempt that reached sshd is not given up early: sshd forks and
        execs a process per connection that sends the banner, which under
        nested TCG took 51-92 s on a quiet machine and longer loaded (a
        domain of type qemu; under KVM seconds); an
        attempt abandoned after a fixed time and made again would start it from
        nothing each time (one boot: sshd up 330 s after the kernel, ssh
        answered 250 s later with 60-s attempts). So each attempt may use what
        is left of `timeout`."""
        t0 = t0 if t0 is not None else time.monotonic()
        host, _ = self.where[name]
        next_note = 30

        def note_progress(took):
            nonlocal next_note
            if took >= next_note:
                self.progress(f"    ... {host}/{name} booting: {took:.0f}s")
                next_note += 30

        while True:
            left = max(30.0, timeout - (time.monotonic() - t0))
            done = {}

            def probe():
                try:
                    done["r"] = self.ssh(name, "true", check=False, timeout=left,
                                         connect_timeout=left)
                except BaseException as e:     # told in this thread, below
                    done["error"] = e
            attempt = threading.Thread(target=probe, daemon=True)
            attempt.start()
            while attempt.is_alive():
                attempt.join(5)
                if attempt.is_alive():
                    note_progress(time.monotonic() - t0)
            took = time.monotonic() - t0
            error = done.get("error")
            if isinstance(error, subprocess.TimeoutExpired):
                # a step of the attempt (closing a stale kept connection) ran
                # out of time: not up yet, like an attempt that failed
                done["r"] = subprocess.CompletedProcess("true", 124, "", str(error))
            elif error is not None:
                raise error
            if done["r"].returncode == 0:
                self.progress(f"{host}/{name}: up in {took:.0f}s")
                return took
            if took > timeout:
                log = self.lab.ssh(host, f"tail -n 20 /var/log/libvirt/qemu/{name}-serial.log",
                                   check=False).stdout
                raise LabError(f"{host}/{name}: no ssh after {took:.0f}s; console:\n{log}")
            note_progress(took)
            time.sleep(5)

    def vf_devices(self, host: str, name: str) -> list:
        """XML of the VFs (hostdev interfaces and PCI hostdevs) a running
        tenant holds, as libvirt reports them."""
        r = self.virsh(host, f"dumpxml {name}", check=False)
        if r.returncode != 0:
            return []
        devices = ET.fromstring(r.stdout).find("devices")
        vfs = []
        for e in devices:
            pool = (e.tag == "interface" and e.get("type") == "network" and
                    e.find("source") is not None and e.find("source").get("network") != MGMT_NET)
            if e.tag == "hostdev" or (e.tag == "interface" and e.get("type") == "hostdev") or pool:
                vfs.append(ET.tostring(e, encoding="unicode"))
        return vfs

    @staticmethod
    def _source(xml: str) -> str:
        """What identifies an attached VF: its PCI address, or for a pool
        interface its MAC."""
        e = ET.fromstring(xml)
        a = e.find("source/address")
        if a is not None:
            return ":".join(a.get(k, "") for k in ("domain", "bus", "slot", "function"))
        m = e.find("mac")
        return "" if m is None else m.get("address", "")

    def ensure_pool_network(self, host: str, name: str, pf_netdev: str):
        """The VF pool network of a PF, defined and active (idempotent)."""
        if self.virsh(host, f"net-info {name}", check=False).returncode != 0:
            self.virsh(host, "net-define {xml}", stdin_xml=pool_network_xml(name, pf_netdev))
        if not re.search(r"^Active:\s+yes", self.virsh(host, f"net-info {name}").stdout, re.M):
            self.virsh(host, f"net-start {name}")

    def detach(self, host: str, name: str, xml: str, wait: float = 180.0) -> float:
        """`virsh detach-device --live` and wait until the tenant has let the
        device go (the guest acknowledges the unplug: slow under nested
        TCG, so libvirt's own wait often ends first). Returns seconds."""
        t0 = time.monotonic()
        r = self.virsh(host, f"detach-device {name} {{xml}} --live", stdin_xml=xml, check=False)
        if r.returncode != 0:
            raise LabError(f"{host}/{name}: detach-device: {(r.stderr or r.stdout).strip()}")
        src = self._source(xml)

        def attached():
            try:
                return any(self._source(d) == src for d in self.vf_devices(host, name))
            except subprocess.TimeoutExpired:
                return True     # libvirt did not answer in time: not gone yet
        while attached():
            if time.monotonic() - t0 > wait:
                raise LabError(f"{host}/{name}: device {src} still attached after {wait:.0f}s")
            time.sleep(3)
        return time.monotonic() - t0

    def detach_vfs(self, host: str, name: str):
        """Detach every VF of a running tenant (live) and wait for each."""
        for xml in self.vf_devices(host, name):
            self.detach(host, name, xml)

    def destroy(self, host: str, name: str, undefine: bool = True):
        self.close_ssh(name)
        self.virsh(host, f"destroy {name}", check=False)
        if undefine:
            self.virsh(host, f"undefine {name}", check=False)
            self._remember(name)

    def start_many(self, specs, mem_mb: int = 512, timeout: float = BOOT_TIMEOUT) -> dict:
        """Start tenants [(host, name, slot[, devices]), ...] together (their
        boots overlap) and wait for each; returns {name: seconds to a shell}.
        `devices`: XML of what the definition holds at start (a pool VF)."""
        t0 = time.monotonic()
        for host, name, slot, *devices in specs:
            self.destroy(host, name)        # a leftover of an interrupted run
            self.define(host, name, slot, tuple(devices[0]) if devices else (), mem_mb)
            self.virsh(host, f"start {name}")
        return {spec[1]: self.wait_ssh(spec[1], timeout, t0) for spec in specs}

    def close(self):
        """Close the kept ssh connections (tenants stay as they are)."""
        for name in list(self.where):
            self.close_ssh(name)

    # reaching a tenant
    def _control_path(self, name: str):
        return self.lab.state / f"ssh-{name}.ctl"

    def close_ssh(self, name: str):
        """End the kept connection to a tenant: one to a destroyed tenant
        would hang the next command."""
        ctl = self._control_path(name)
        if ctl.exists():
            try:
                subprocess.run(["ssh", "-o", f"ControlPath={ctl}", "-O", "exit", "tenant"],
                               capture_output=True, timeout=SSH_CONTROL_TIMEOUT)
            except subprocess.TimeoutExpired:
                # a master that does not answer: the next command starts a
                # connection of its own instead of queueing behind it
                ctl.unlink(missing_ok=True)

    def ssh_argv(self, name: str, command: str, connect_timeout: float = 90) -> list:
        if name not in self.where:
            raise LabError(f"unknown tenant '{name}' (known: {', '.join(self.where) or 'none'})")
        host, addr = self.where[name]
        hop = self.lab._ssh_argv(self.lab.host(host), "")[:-2]   # ssh -i key -p port opts
        proxy = " ".join(shlex.quote(a) for a in hop) + f" root@127.0.0.1 -W {addr}:22"
        # One connection per tenant, kept open: a new ssh session costs tens
        # of seconds of key exchange under nested TCG, a channel on an open
        # one a fraction of that.
        control = self._control_path(name)
        return ["ssh", "-i", str(self.lab.image.key), "-o", f"ProxyCommand={proxy}",
                "-o", "ControlMaster=auto", "-o", f"ControlPath={control}",
                "-o", "ControlPersist=900", "-o", "ServerAliveInterval=15",
                "-o", "ServerAliveCountMax=4",
                "-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null",
                "-o", "BatchMode=yes", "-o", f"ConnectTimeout={int(connect_timeout)}",
                "-o", "LogLevel=ERROR",
                f"root@{addr}", command]

    def ssh(self, name: str, command: str, timeout: float = 300,
            check: bool = True, connect_timeout: float = 90) -> subprocess.CompletedProcess:
        """`command` in the tenant. connect_timeout: ssh's ConnectTimeout, which
        also bounds the wait for sshd's banner."""
        end = time.monotonic() + timeout
        for attempt in range(3):
            # A session of its own: on a timeout the ProxyCommand ssh dies
            # with it (it would hold the output pipes open, hanging the wait).
            p = subprocess.Popen(self.ssh_argv(name, command, connect_timeout),
                                 stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True,
                                 start_new_session=True)
            try:
                out, err = p.communicate(timeout=max(1.0, end - time.monotonic()))
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.communicate()
                if check:
                    raise LabError(f"{name}: '{command}' timed out after {timeout}s") from None
                return subprocess.CompletedProcess(command, 124, "", "timeout")
            # ssh itself failed before the command ran (a busy tenant is slow
            # to answer): try again while there is time
            if p.returncode == 255 and SSH_SETUP_FAILED.search(err) and \
                    time.monotonic() < end - 30:
                self.close_ssh(name)
                continue
            break
        r = subprocess.CompletedProcess(command, p.returncode, out, err)
        if check and r.returncode != 0:
            raise LabError(f"{name}: '{command}' exited {r.returncode}: "
                           f"{(r.stderr or r.stdout or '').strip()[-500:]}")
        return r
