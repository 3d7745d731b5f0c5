"""Policy format version 1: the host file and the tenant file (docs/policy.md).

This module is the format's single definition: the validator checks files
against it and schema/vfwarp-policy-v1.schema.json is generated from it
(`vfwarpctl schema`).
"""
from .model import (Bool, Const, ConstInt, Enum, Field, Int, IntRange, List, Mac, Obj, Rate,
                    Str, Subnet)

MAX_VFS = 256            # above any SR-IOV PF we target (the adapter has 128)
# devlink rate's tx_weight and tx_priority are u32s; the adapter's scheduler
# takes weights 1..1000 and priorities 0..7 (include/vfwarp/vfwarp_admin.h
# VFW_QOS_MAX_WEIGHT, VFW_QOS_MAX_PRIO) and vfwarp_pf refuses the rest with
# EINVAL halfway through an apply: the format holds a file to them instead.
MAX_WEIGHT = 1000
MAX_PRIORITY = 7
NAME_RE = r"^[a-z][a-z0-9-]{0,30}$"      # in devlink node, libvirt network and cookie names
IFNAME_RE = r"^[A-Za-z0-9_.-]{1,15}$"    # IFNAMSIZ - 1, no '/' or ':'

VERSION = Field(ConstInt(1, doc="format version; this reference describes 1"), required=True)

TRAFFIC_CLASS = Obj({
    "tc": Field(Int(0, 7, doc="traffic class number (dcb ets tc-tsa)"), required=True),
    "name": Field(Str(NAME_RE, 31, doc="a name for the class", hint="lowercase letters, digits, '-'"),
                  required=True),
    "tsa": Field(Enum(("ets", "strict"), doc="transmission selection: ETS share or strict priority"),
                 required=True),
    "bandwidth": Field(Int(1, 100, doc="ETS share in percent (ets classes only); shares sum to 100")),
    "maxrate": Field(Rate("kbit", doc="cap of the class (dcb maxrate tc-maxrate, whole kbit/s)")),
})

DSCP_PRIO = Obj({
    "dscp": Field(Int(0, 63, doc="DSCP code point"), required=True),
    "priority": Field(Int(0, 7, doc="802.1p priority the code point maps to (dcb app dscp-prio)"),
                      required=True),
})

HOST = Obj({
    "version": VERSION,
    "kind": Field(Const(("host",), doc="this file describes the host"), required=True),
    "adapter": Field(Obj({
        "pf": Field(Str(IFNAME_RE, 15, doc="netdev name of the PF", hint="an interface name"),
                    required=True),
        "num_vfs": Field(Int(0, MAX_VFS, doc="VFs to create (sysfs sriov_numvfs)"), required=True),
        "eswitch_mode": Field(Enum(("legacy", "switchdev"),
                                   doc="devlink eswitch mode; rate nodes and ACLs need switchdev"),
                              default="legacy"),
        "line_rate": Field(Rate("devlink", doc="uplink line rate: guarantees must fit in it"),
                           required=True),
        "enforce_line_rate": Field(Bool(doc="the adapter's scheduler holds the uplink to "
                                        "line_rate (devlink param line_rate_kbps); false: "
                                        "line_rate only bounds the checks"), default=False),
    }, doc="the PF and its VF pool"), required=True),
    "traffic_classes": Field(List(TRAFFIC_CLASS, 1, 8, doc="DCB traffic classes (dcb ets)")),
    "prio_tc": Field(List(Int(0, 7), 8, 8, doc="traffic class of each 802.1p priority 0..7 "
                          "(dcb ets prio-tc)")),
    "dscp_prio": Field(List(DSCP_PRIO, 1, 64, doc="DSCP to priority table (dcb app dscp-prio)")),
    "apptrust": Field(Enum(("pcp", "dscp"), doc="what classifies frames: their 802.1p priority "
                           "or their DSCP through dscp_prio (dcb apptrust order)")),
}, doc="vfwarp host policy, format version 1")

VF_RATE = Obj({
    "tx_max": Field(Rate("ip_link", doc="per-VF cap (ip link max_tx_rate, whole Mbit/s)")),
    "tx_share": Field(Rate("ip_link", doc="per-VF guarantee (ip link min_tx_rate, whole Mbit/s)")),
    "tx_weight": Field(Int(1, MAX_WEIGHT, doc="weight among the VF's siblings (devlink rate leaf)")),
    "tx_priority": Field(Int(0, MAX_PRIORITY, doc="strict priority among the VF's siblings "
                             "(devlink rate leaf)")),
})

VF_OVERRIDE = Obj({
    "index": Field(Int(0, MAX_VFS - 1, doc="VF number on the PF; one of the tenant's VFs"),
                   required=True),
    "mac": Field(Mac(doc="MAC of this VF (ip link ... mac)")),
    "tx_max": Field(Rate("ip_link", doc="cap of this VF (whole Mbit/s)")),
    "tx_share": Field(Rate("ip_link", doc="guarantee of this VF (whole Mbit/s)")),
    "tx_weight": Field(Int(1, MAX_WEIGHT, doc="weight of this VF (devlink rate leaf)")),
    "tx_priority": Field(Int(0, MAX_PRIORITY, doc="strict priority of this VF (devlink rate leaf)")),
    "trust": Field(Bool(doc="trusted VF (ip link ... trust)")),
    "spoofchk": Field(Bool(doc="source MAC check (ip link ... spoofchk)")),
})

POLICE = Obj({
    "rate": Field(Rate("tc", doc="police rate (whole bytes/s)"), required=True),
    "burst": Field(Int(1, 1 << 30, doc="burst in bytes"), required=True),
})

ACL_RULE = Obj({
    "action": Field(Enum(("allow", "deny", "police", "mirror"), doc="what to do with a match"),
                    required=True),
    "direction": Field(Enum(("egress", "ingress"), doc="egress: sent by the tenant's VFs "
                            "(the only direction the adapter enforces); ingress: delivered to "
                            "them (refused: acl-direction)"), default="egress"),
    "protocol": Field(Enum(("ipv4", "ipv6", "tcp", "udp", "icmp", "any"), doc="what the rule matches"),
                      default="any"),
    "src": Field(Subnet(doc="source subnet")),
    "dst": Field(Subnet(doc="destination subnet")),
    "dst_port": Field(IntRange(1, 65535, "port", doc="destination port or range (tcp/udp)")),
    "police": Field(POLICE),
    "mirror_to": Field(Int(0, MAX_VFS - 1, doc="VF (one of the tenant's) that receives the copies")),
})

TENANT = Obj({
    "version": VERSION,
    "kind": Field(Const(("tenant",), doc="this file describes one tenant"), required=True),
    "name": Field(Str(NAME_RE, 31, doc="tenant name", hint="lowercase letters, digits and '-', "
                      "starting with a letter, at most 31"), required=True),
    "vfs": Field(Obj({
        "range": Field(IntRange(0, MAX_VFS - 1, "vf-range", doc="VFs N-M of the PF")),
        "indices": Field(List(Int(0, MAX_VFS - 1), 1, MAX_VFS, doc="these VFs of the PF")),
        "count": Field(Int(1, MAX_VFS, doc="this many VFs drawn from the free pool")),
    }, exactly_one=[("range", "indices", "count")], doc="the tenant's VFs"), required=True),
    "mac_base": Field(Mac(doc="the tenant's k-th VF gets this MAC + k")),
    "vlan": Field(Int(1, 4094, doc="port VLAN of every VF (ip link ... vlan)")),
    "vlan_priority": Field(Int(0, 7, doc="802.1p priority of that VLAN (ip link ... qos)")),
    "trust": Field(Bool(doc="trusted VFs"), default=False),
    "spoofchk": Field(Bool(doc="source MAC check"), default=True),
    "link_state": Field(Enum(("auto", "enable", "disable"), doc="VF link state"), default="auto"),
    "vf_rate": Field(VF_RATE),
    "rate": Field(Obj({
        "tx_max": Field(Rate("devlink", doc="cap of the whole tenant (whole bytes/s)")),
        "tx_share": Field(Rate("devlink", doc="guarantee of the whole tenant (whole bytes/s)")),
        "tx_priority": Field(Int(0, MAX_PRIORITY, doc="strict priority among siblings (devlink 6.2+)")),
        "tx_weight": Field(Int(1, MAX_WEIGHT, doc="weight among siblings (devlink 6.2+)")),
    }, doc="tenant rate node (devlink rate node vfw-NAME, parent of the tenant's VFs)")),
    "vf": Field(List(VF_OVERRIDE, 1, MAX_VFS, doc="per-VF settings")),
    "acl": Field(List(ACL_RULE, 1, 256, doc="ACL rules, in order (tc flower on the "
                      "representors; switchdev)")),
    "rdma": Field(Obj({
        "dscp": Field(Int(0, 63, doc="DSCP of the tenant's RDMA traffic; its class follows "
                          "dscp_prio and prio_tc")),
        "quotas": Field(Obj({
            "qps": Field(Int(1, 1 << 20)),
            "cqs": Field(Int(1, 1 << 20)),
            "mrs": Field(Int(1, 1 << 20)),
        }, doc="RDMA resource quotas per VF (compiled once the device's quota "
               "command is reachable from the host)")),
    })),
}, doc="vfwarp tenant policy, format version 1")

KINDS = {"host": HOST, "tenant": TENANT}


def json_schema():
    """The JSON Schema (draft 2020-12) for both file kinds, for editors."""
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "urn:vfwarp:policy:v1",
        "title": "vfwarp policy file, format version 1",
        "description": "Generated by `vfwarpctl schema` from vfwarp_manager/format_v1.py; "
                       "the validator (vfwarpctl validate) also checks rules across files.",
        "oneOf": [HOST.schema(), TENANT.schema()],
    }
