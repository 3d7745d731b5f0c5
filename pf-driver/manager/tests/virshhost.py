"""A stand-in for libvirt's network driver behind `virsh`, for the network
layer's native tests: this machine has no libvirt (and libvirt's own test
driver, `test:///default`, forgets everything between two virsh processes).
tests/lab/test_manager.py runs the same layer against the real libvirt of a
lab host.

It keeps what libvirt keeps and refuses what libvirt refuses, as seen on
the lab host (libvirt 11.3, Debian 13) and in libvirt's network driver:
  - a persistent definition and, while the network runs, the definition it
    was started with: `net-define` of a running network changes the
    inactive XML only, until `net-destroy` + `net-start`;
  - a definition whose <address>es are not all VFs of the host is refused
    (libvirt checks each when it defines a hostdev pool);
  - `sriov_numvfs` written (N -> M only through 0) re-creates the VFs;
  - a definition without <uuid> gets a new one, or the existing network's;
    one with another uuid for an existing name is refused;
  - `net-start` of a running network, `net-destroy` of a stopped one, any
    command on an unknown network: refused (exit 1, libvirt's message);
  - commands of the run's virsh co-process (Runner.virsh; virsh_session.py
    speaks virsh's shell and is tested against a real virsh in
    test_virsh_session.py), each with its own result, a failure printed on
    stderr as "error: ..."; a name after `--` is data, never an option;
    a virsh started as a process of its own is an error of the test;
  - `net-list --name [--all] [--autostart]`, `net-dumpxml [--inactive]`
    (a running network's XML carries `connections` when domains use it),
    `list --name`, `dumpxml DOM`.
Anything else is an error of the test: the layer asked for a command it
should not need.
"""
import copy
import json
import xml.etree.ElementTree as ET

from vfwarp_manager.runner import Replay, Result
from vfwarp_manager.virsh_session import command_line, writable

PF_PCI = "0000:01:00.0"


def vf_pci(n):
    """VF n's PCI address as vfwarp_pf's VFs get them (offset 1, stride 1)."""
    f = n + 1
    return "0000:01:%02x.%x" % (f // 8, f % 8)


class Net:
    def __init__(self, xml, uuid):
        self.config = xml
        self.running = None           # the definition it runs, while active
        self.autostart = False
        self.uuid = uuid


class VirshHost(Replay):
    def __init__(self, pf="enp1s0", numvfs=4, uri="qemu:///system"):
        super().__init__({}, tools=("virsh",))
        self.pf, self.uri = pf, uri
        self.nets = {}
        self.domains = {}             # running domains: {name: domain XML}
        self.uses = {}                # {domain: network it has a VF of}
        self.virsh_cmds = []          # every virsh command run
        self.sessions = set()         # URIs a virsh co-process was asked on
        self.processes = []           # commands virsh could not take on its shell's line
        self._uuids = 0
        self.set_numvfs(numvfs)

    def set_numvfs(self, n):
        dev = f"/sys/class/net/{self.pf}/device"
        self.files = {f"{dev}/sriov_numvfs": f"{n}\n", f"{dev}/sriov_totalvfs": "128\n"}
        self.links = {dev: PF_PCI}
        self.links.update({f"{dev}/virtfn{i}": vf_pci(i) for i in range(n)})

    # ---- set-up by the tests (what a host has before vfwarpctl runs) ----

    def add(self, xml, active=True, autostart=True):
        root = ET.fromstring(xml)
        name = root.findtext("name").strip()
        xml = _fmt(xml)
        n = Net(xml, (root.findtext("uuid") or "").strip() or self._uuid())
        self.nets[name] = n
        n.autostart = autostart
        if active:
            n.running = xml
        return name

    def use(self, domain, network):
        """A running domain with an interface from `network`'s pool: libvirt's
        live XML shows it as a hostdev interface on the VF it was given (the
        pool's first address here), not by the network's name."""
        addr = ET.fromstring(self.nets[network].config).find("forward/address")
        attrs = " ".join(f"{k}='{addr.get(k)}'" for k in ("type", "domain", "bus", "slot", "function"))
        self.uses[domain] = network
        self.domains[domain] = (f"<domain type='qemu'><name>{domain}</name><devices>"
                                f"<interface type='hostdev' managed='yes'><source><address {attrs}/>"
                                "</source></interface></devices></domain>")

    def state(self):
        """Everything the stand-in holds (for before/after comparisons)."""
        return {n: (x.config, x.running, x.autostart, x.uuid) for n, x in sorted(self.nets.items())}

    def write_file(self, path, text):
        """sriov_numvfs as the PCI core takes it: N -> M only through 0."""
        super().write_file(path, text)
        assert path == f"/sys/class/net/{self.pf}/device/sriov_numvfs", path
        n, have = int(text), int(self.files[path])
        if n and have:
            raise OSError(16, "Device or resource busy")
        self.set_numvfs(n)

    def _ip_link(self):
        """The PF's VFs at the driver's defaults, as `ip -j -d link` prints them."""
        n = int(self.files[f"/sys/class/net/{self.pf}/device/sriov_numvfs"])
        return json.dumps([{"ifname": self.pf, "vfinfo_list": [
            {"vf": i, "address": "00:00:00:00:00:00", "vlan_list": [{}],
             "rate": {"max_tx": 0, "min_tx": 0}, "spoofchk": True, "trust": False,
             "link_state": "auto"} for i in range(n)]}])

    # ---- virsh ----

    def _uuid(self):
        self._uuids += 1
        return "00000000-0000-4000-8000-%012d" % self._uuids

    def run(self, argv, stdin=None):
        argv = tuple(str(a) for a in argv)
        self.calls.append(argv if stdin is None else argv + (stdin,))
        if argv[:1] == ("devlink",):           # a PF without devlink (plan probes it)
            return Result(argv, 1, "", "Failed to connect to devlink Netlink\n")
        if argv == ("ip", "-j", "-d", "link", "show", "dev", self.pf):
            return Result(argv, 0, self._ip_link(), "")
        if argv[:1] == ("virsh",):
            raise AssertionError(f"a virsh process of its own: {argv} (every libvirt command "
                                 "goes through the run's virsh co-process, Runner.virsh)")
        raise AssertionError(f"unexpected command {argv}")

    def virsh(self, uri, args, stdin=None):
        """A command of the virsh co-process (virsh_session.py): as virsh's
        shell runs it, its own result, the session going on after it."""
        args = [str(a) for a in args]
        assert uri == self.uri, uri
        argv = ("virsh", "-q", "-c", uri, *args)
        self.calls.append(argv if stdin is None else argv + (stdin,))
        if writable(args):
            command_line(args)
            self.sessions.add(uri)
        else:
            self.processes.append(argv)       # Runner.virsh: a process of its own
        rc, out, err = self._one(args[0], args[1:], stdin)
        return Result(argv, rc, out, err)

    def _one(self, cmd, args, stdin):
        """virsh's parser: `--x` before a `--` is an option, the rest data."""
        self.virsh_cmds.append((cmd, *args))
        opts, data = [], []
        for i, a in enumerate(args):
            if a == "--":
                data += args[i + 1:]
                break
            (opts if a.startswith("--") else data).append(a)
        fn = getattr(self, "_" + cmd.replace("-", "_"), None)
        if fn is None:
            raise AssertionError(f"unexpected virsh command {cmd} {args}")
        try:
            return 0, fn(opts, data, stdin) or "", ""
        except VirshError as e:
            return 1, "", f"error: {e}\n"

    def _net(self, name):
        if name not in self.nets:
            raise VirshError(f"failed to get network '{name}'\nerror: Network not found: no "
                             f"network with matching name '{name}'")
        return self.nets[name]

    def _net_list(self, args, data, _):
        assert "--name" in args and not data, (args, data)
        out = [n for n, x in sorted(self.nets.items())
               if ("--all" in args or x.running is not None) and
               ("--autostart" not in args or x.autostart)]
        return "".join(n + "\n" for n in out) + "\n"

    def _net_dumpxml(self, args, data, _):
        name, = data
        n = self._net(name)
        if "--inactive" in args or n.running is None:
            return _fmt(n.config)
        users = sum(1 for net in self.uses.values() if net == name)
        root = ET.fromstring(n.running)
        if users:
            root.set("connections", str(users))
        return _fmt(ET.tostring(root, encoding="unicode"))

    def _net_define(self, args, data, stdin):
        assert data == ["/dev/stdin"] and not args and stdin, (args, data, stdin)
        root = ET.fromstring(stdin)
        name = root.findtext("name").strip()
        uuid = (root.findtext("uuid") or "").strip()
        vfs = {v for k, v in self.links.items() if "/virtfn" in k}
        for a in root.findall("forward/address"):
            addr = "%04x:%02x:%02x.%x" % tuple(int(a.get(k), 16) for k in
                                                ("domain", "bus", "slot", "function"))
            if addr not in vfs:
                raise VirshError(f"unsupported configuration: device '/sys/bus/pci/devices/{addr}'"
                                 f" in network '{name}' is not an SR-IOV Virtual Function")
        old = self.nets.get(name)
        if old and uuid and uuid != old.uuid:
            raise VirshError(f"operation failed: network '{name}' is already defined with uuid "
                             f"{old.uuid}")
        uuid = uuid or (old.uuid if old else self._uuid())
        if root.find("uuid") is None:
            el = ET.Element("uuid")
            el.text = uuid
            root.insert(1, el)
        xml = _fmt(ET.tostring(root, encoding="unicode"))    # libvirt keeps its own format
        if old:
            old.config = xml
        else:
            self.nets[name] = Net(xml, uuid)
        return f"Network {name} defined from /dev/stdin\n"

    def _net_start(self, args, data, _):
        n = self._net(data[0])
        if n.running is not None:
            raise VirshError("Failed to start network " + data[0] + "\nerror: Requested operation "
                             "is not valid: network is already active")
        n.running = n.config

    def _net_destroy(self, args, data, _):
        n = self._net(data[0])
        if n.running is None:
            raise VirshError("Failed to destroy network " + data[0] + "\nerror: Requested "
                             "operation is not valid: network is not active")
        n.running = None

    def _net_undefine(self, args, data, _):
        n = self._net(data[0])
        if n.running is not None:
            raise AssertionError("the layer undefines a running network (it would stay, transient)")
        del self.nets[data[0]]

    def _net_autostart(self, args, data, _):
        self._net(data[0]).autostart = "--disable" not in args

    def _list(self, args, data, _):
        assert args == ["--name"] and not data, args
        return "".join(d + "\n" for d in sorted(self.domains)) + "\n"

    def _dumpxml(self, args, data, _):
        if data[0] not in self.domains:
            raise VirshError(f"failed to get domain '{data[0]}'")
        return self.domains[data[0]]


class VirshError(Exception):
    pass


def _fmt(xml):
    """libvirt prints its XML indented by two, attributes in single quotes."""
    root = copy.deepcopy(ET.fromstring(xml))
    ET.indent(root, "  ")
    return ET.tostring(root, encoding="unicode").replace('"', "'") + "\n"
