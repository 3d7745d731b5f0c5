"""A stand-in for vfwarp_pf's QoS behind the standard tools, for unit tests
of the rate and DCB layers' ordering and undo (no kernel with devlink rate
or dcbnl runs natively here; the real proof is tests/lab/test_manager.py).

It answers the exact commands vfwarpctl runs (ip, devlink, dcb) with the
JSON the tools print (shapes as captured on a lab host) and enforces the
device's rules from docs/qos.md on every change, refusing a command (exit
1, nothing changed) as the driver does:
  - a parent's children's guarantees (a node's: its tx_share, or its
    children's if more) within its tx_share, else its tx_max; at the root
    within the line rate (0: no line rate)
  - tx_share <= tx_max (0: none), weights 0..1000, priorities 0..7
  - a node with children is not deleted; a VF leaf's rates are whole Mbit/s
    and the same values as its ip link min/max_tx_rate
  - ETS shares of ETS classes sum to 100
"""
import copy
import json

from vfwarp_manager.runner import Result, Runner

PF, BDF = "enp1s0", "0000:01:00.0"
DEV = f"pci/{BDF}"
MBIT = 125000
SYS = f"/sys/class/net/{PF}/device"


class Refused(Exception):
    pass


class QosDevice(Runner):
    def __init__(self, numvfs=0, total=8):
        self.total = total
        self.st = {"numvfs": 0, "vfs": {}, "leaves": {}, "nodes": {}, "line": 0,
                   "ets": {"tc_tsa": ["ets"] * 8, "tc_bw": [12, 12, 12, 12, 13, 13, 13, 13],
                           "prio_tc": list(range(8))},
                   "maxrate": [0] * 8, "app": {}, "trust": ["pcp"], "eswitch": "legacy"}
        self.log = []
        self.batches = []       # (argv, stdin) of each batch process
        self._numvfs(numvfs)

    # ---- the rules ----
    def rules(self):
        s = self.st
        for n, lf in s["leaves"].items():
            vf = s["vfs"][n]
            if vf["max"] and vf["min"] > vf["max"]:
                raise Refused(f"vf {n}: tx_share above tx_max")
        for name, nd in s["nodes"].items():
            if nd["tx_max"] and nd["tx_share"] > nd["tx_max"]:
                raise Refused(f"{name}: tx_share above tx_max")
            if not 0 <= nd["tx_weight"] <= 1000 or not 0 <= nd["tx_priority"] <= 7:
                raise Refused("value out of range")
        for lf in s["leaves"].values():
            if not 0 <= lf["tx_weight"] <= 1000 or not 0 <= lf["tx_priority"] <= 7:
                raise Refused("value out of range")
        # As the device's check_shares (vswitch/src/qos_cfg.c): what a node
        # needs guaranteed is its tx_share, or its children's needs if more;
        # the children's needs must fit in the parent's tx_share, else its
        # tx_max, and at the root in the line rate.
        def need(p):
            nd = s["nodes"][p]
            return max(nd["tx_share"], children(p))

        def children(p):
            return sum(s["vfs"][n]["min"] * MBIT for n, lf in s["leaves"].items() if lf["parent"] == p) \
                + sum(need(q) for q, nd in s["nodes"].items() if nd["parent"] == p)

        for p, nd in s["nodes"].items():
            cap = nd["tx_share"] or nd["tx_max"]
            if cap and children(p) > cap:
                raise Refused(f"guarantees oversubscribed under {p}")
        if s["line"] and children("") > s["line"] * 125:
            raise Refused("guarantees oversubscribed under the root")
        bw = sum(b for t, b in zip(s["ets"]["tc_tsa"], s["ets"]["tc_bw"]) if t == "ets")
        if "ets" in s["ets"]["tc_tsa"] and bw != 100:
            raise Refused(f"ETS shares sum to {bw}%")

    def _change(self, fn):
        saved = copy.deepcopy(self.st)
        try:
            fn()
            self.rules()
        except Refused:
            self.st = saved
            raise

    def _numvfs(self, n):
        s = self.st
        if s["numvfs"] and n and s["numvfs"] != n:
            raise OSError(16, "Device or resource busy")
        s["numvfs"] = n
        s["vfs"] = {i: {"mac": "00:00:00:00:00:00", "vlan": 0, "qos": 0, "spoofchk": True,
                        "trust": False, "state": "auto", "min": 0, "max": 0} for i in range(n)}
        s["leaves"] = {i: {"parent": "", "tx_weight": 0, "tx_priority": 0} for i in range(n)}

    # ---- Runner ----
    def read_file(self, path):
        if path == f"{SYS}/sriov_numvfs":
            return f"{self.st['numvfs']}\n"
        if path == f"{SYS}/sriov_totalvfs":
            return f"{self.total}\n"
        raise FileNotFoundError(path)

    def write_file(self, path, text):
        assert path == f"{SYS}/sriov_numvfs", path
        self.log.append(("write", path, str(text)))
        self._numvfs(int(text))

    def link_target_name(self, path):
        assert path == SYS, path
        return BDF

    def run(self, argv, stdin=None):
        argv = tuple(str(a) for a in argv)
        if stdin is not None:
            return self._batch(argv, stdin)
        try:
            out = self._run(list(argv))
        except Refused as e:
            return Result(argv, 1, "", f"Error: {e}\n")
        if "-j" not in argv and "-V" not in argv:
            self.log.append(argv)           # the commands that change something
        return Result(argv, 0, out, "")

    def _batch(self, argv, stdin):
        """`ip|devlink [-force] -batch -` as iproute2's batch(): each line one
        command; at a failing line "Command failed -:N" on stderr, then stop
        (without -force) or go on; exit 1 if any line failed."""
        # as each tool spells them (devlink: getopt_long, ip: its own parser)
        flags = {"ip": ("-force", "-batch"), "devlink": ("--force", "--batch")}[argv[0]]
        assert argv[-2:] == (flags[1], "-") and set(argv[1:-2]) <= {flags[0]}, argv
        force = flags[0] in argv
        self.batches.append((argv, stdin))
        err, rc = "", 0
        for n, line in enumerate(stdin.splitlines(), 1):
            r = self.run((argv[0],) + tuple(line.split()))
            if r.returncode:
                err, rc = err + r.stderr + f"Command failed -:{n}\n", 1
                if not force:
                    break
        return Result(argv, rc, "", err)

    def _run(self, a):
        s = self.st
        if a == ["ip", "-j", "-d", "link", "show", "dev", PF]:
            return json.dumps([{"ifname": PF, "vfinfo_list": [
                {"vf": n, "address": v["mac"], "vlan_list": [{"vlan": v["vlan"], "qos": v["qos"]}
                                                             if v["vlan"] else {}],
                 "rate": {"max_tx": v["max"], "min_tx": v["min"]}, "spoofchk": v["spoofchk"],
                 "link_state": v["state"], "trust": v["trust"]} for n, v in sorted(s["vfs"].items())]}])
        if a == ["devlink", "-j", "port", "show", DEV]:
            ports = {f"{DEV}/0": {"flavour": "pcipf", "pfnum": 0}}
            ports.update({f"{DEV}/{1 + n}": {"flavour": "pcivf", "pfnum": 0, "vfnum": n}
                          for n in s["vfs"]})
            return json.dumps({"port": ports})
        if a == ["devlink", "-j", "dev", "eswitch", "show", DEV]:
            return json.dumps({"dev": {DEV: {"mode": s["eswitch"]}}})
        if a[:2] == ["udevadm", "settle"]:          # after a mode change: representors named
            return ""
        if a[:4] == ["devlink", "dev", "eswitch", "set"] and a[4:6] == [DEV, "mode"]:
            return self._change(lambda: s.update(eswitch=a[6])) or ""
        if a == ["devlink", "-j", "port", "function", "rate", "show"]:
            return json.dumps({"rate": self._rates()})
        if a == ["devlink", "-j", "dev", "param", "show", DEV, "name", "line_rate_kbps"]:
            return json.dumps({"param": {DEV: [{"name": "line_rate_kbps", "type": "driver-specific",
                                                "values": [{"cmode": "runtime", "value": s["line"]}]}]}})
        if a[:3] == ["ip", "link", "set"]:
            return self._change(lambda: self._ip(a[6:])) or ""
        if a[:5] == ["devlink", "port", "function", "rate", "set"]:
            return self._change(lambda: self._rate_set(a[5], a[6:])) or ""
        if a[:5] == ["devlink", "port", "function", "rate", "add"]:
            return self._change(lambda: self._rate_add(a[5], a[6:])) or ""
        if a[:5] == ["devlink", "port", "function", "rate", "del"]:
            return self._change(lambda: self._rate_del(a[5])) or ""
        if a[:4] == ["devlink", "dev", "param", "set"]:
            assert a[4:8] == [DEV, "name", "line_rate_kbps", "value"] and a[9:] == ["cmode", "runtime"]
            return self._change(lambda: s.update(line=int(a[8]))) or ""
        if a == ["dcb", "-V"]:
            return "dcb utility, iproute2-6.15.0\n"
        if a[:2] == ["dcb", "-j"] and a[3:] == ["show", "dev", PF]:
            return json.dumps({"ets": dict(s["ets"], ets_cap=8, willing=False),
                               "maxrate": {"tc_maxrate": s["maxrate"]},
                               "app": {"dscp_prio": [[d, p, " "] for d, p in sorted(s["app"].items())]},
                               "apptrust": {"order": s["trust"]}}[a[2]])
        if a[:2] == ["dcb", "ets"] and a[2:5] == ["set", "dev", PF]:
            return self._change(lambda: self._ets(a[5:])) or ""
        if a[:2] == ["dcb", "maxrate"] and a[2:6] == ["set", "dev", PF, "tc-maxrate"]:
            def mr():
                for m in a[6:]:
                    t, v = m.split(":")
                    s["maxrate"][int(t)] = int(v[:-3]) if v.endswith("bps") else int(v)
            return self._change(mr) or ""
        if a[:2] == ["dcb", "app"] and a[3:6] == ["dev", PF, "dscp-prio"]:
            def app():
                for e in a[6:]:
                    d, p = map(int, e.split(":"))
                    if a[2] == "add":
                        s["app"][d] = p          # one priority per DSCP, as vfwarp_pf
                    elif s["app"].get(d) == p:
                        del s["app"][d]
                    else:
                        raise Refused("no such app entry")
            return self._change(app) or ""
        if a[:3] == ["dcb", "apptrust", "set"] and a[3:6] == ["dev", PF, "order"]:
            return self._change(lambda: s.update(trust=a[6:])) or ""
        raise AssertionError(f"unexpected command {a}")

    def _rates(self):
        s, out = self.st, {f"{DEV}/0": {"type": "leaf"}}          # the PF's own leaf
        for name, nd in s["nodes"].items():
            out[f"{DEV}/{name}"] = dict({"type": "node"}, **{k: v for k, v in nd.items() if v})
        for n, lf in s["leaves"].items():
            d = {"type": "leaf", "tx_share": s["vfs"][n]["min"] * MBIT,
                 "tx_max": s["vfs"][n]["max"] * MBIT, **lf}
            out[f"{DEV}/{1 + n}"] = {k: v for k, v in d.items() if v}
        return out

    def _ip(self, a):
        vf = self.st["vfs"][int(a[0])]
        keys = {"mac": "mac", "vlan": "vlan", "qos": "qos", "spoofchk": "spoofchk",
                "trust": "trust", "state": "state", "min_tx_rate": "min", "max_tx_rate": "max"}
        for k, v in zip(a[1::2], a[2::2]):
            vf[keys[k]] = (v == "on") if k in ("spoofchk", "trust") else \
                v if k in ("mac", "state") else int(v)

    def _leaf_or_node(self, handle):
        dev, _, name = handle.rpartition("/")
        assert dev == DEV, handle
        if name.isdigit():
            n = int(name) - 1
            if n not in self.st["leaves"]:
                raise Refused("no such port")
            return "leaf", n
        if name not in self.st["nodes"]:
            raise Refused("No such device")
        return "node", name

    def _attrs(self, a):
        out, i = {}, 0
        while i < len(a):
            if a[i] == "noparent":
                out["parent"], i = "", i + 1
                continue
            k, v = a[i], a[i + 1]
            if k in ("tx_share", "tx_max"):
                assert v == "0" or v.endswith("bit"), v
                bits = int(v[:-3]) if v.endswith("bit") else 0
                assert bits % 8 == 0
                v = bits // 8
            elif k in ("tx_weight", "tx_priority"):
                v = int(v)
            out[k], i = v, i + 2
        return out

    def _rate_set(self, handle, a):
        kind, key = self._leaf_or_node(handle)
        attrs = self._attrs(a)
        if attrs.get("parent") and attrs["parent"] not in self.st["nodes"]:
            raise Refused("No such device")
        if kind == "leaf":
            vf = self.st["vfs"][key]
            for k, f in (("tx_share", "min"), ("tx_max", "max")):
                if k in attrs:
                    if attrs[k] % MBIT:
                        raise Refused("a VF's rates are whole Mbit/s")
                    vf[f] = attrs.pop(k) // MBIT
            self.st["leaves"][key].update(attrs)
        else:
            self.st["nodes"][key].update(attrs)

    def _rate_add(self, handle, a):
        dev, _, name = handle.rpartition("/")
        if name in self.st["nodes"]:
            raise Refused("File exists")
        self.st["nodes"][name] = {"tx_share": 0, "tx_max": 0, "tx_priority": 0, "tx_weight": 0,
                                  "parent": ""}
        self._rate_set(handle, a)

    def _rate_del(self, handle):
        _, name = self._leaf_or_node(handle)
        if any(lf["parent"] == name for lf in self.st["leaves"].values()) or \
                any(nd["parent"] == name for nd in self.st["nodes"].values()):
            raise Refused("Node has children")
        del self.st["nodes"][name]

    def _ets(self, a):
        e, key = self.st["ets"], None
        names = {"tc-tsa": "tc_tsa", "tc-bw": "tc_bw", "prio-tc": "prio_tc"}
        for x in a:
            if x in names:
                key = names[x]
                continue
            t, v = x.split(":")
            e[key][int(t)] = v if key == "tc_tsa" else int(v)
