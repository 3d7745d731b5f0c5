# -*- coding: utf-8 -*-
# Copyright: vfwarp contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Pure logic of the vfwarp_libvirt_network module, free of Ansible imports so
the repo's native tests (tests/provisioning/) exercise it directly:

- a network's XML as the user wrote it and as libvirt returns it, brought to
  one canonical form (whitespace, number and boolean spellings, element order
  where libvirt reorders),
- what libvirt adds by itself (uuid, the bridge's MAC, bridge defaults, the VF
  list it fills in from a <pf dev>) left out of the comparison unless the user
  asked for it, so a network is "unchanged" exactly when libvirt holds what
  the user specified and nothing the user dropped,
- the XML to define for an update: the user's, with the existing network's
  uuid (libvirt refuses a second network of a name with another uuid) and
  bridge MAC (kept stable across updates).
"""
from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re
import xml.etree.ElementTree as ET


class NetworkXMLError(Exception):
    pass


# Paths (from the <network> root) of what libvirt generates when the user does
# not give it; compared only when the user's XML has them. Attributes as
# "path/@name".
GENERATED = (
    "uuid",
    "mac",
    "@connections",
    "bridge/@stp",
    "bridge/@delay",
    "bridge/@macTableManager",
    "forward/interface",        # the <pf dev>'s VF netdevs, on a started network
    "forward/address",          # ... or its VFs' PCI addresses
)
# libvirt names a NAT/route/isolated network's bridge itself (virbrN): the
# <bridge> element is generated when the user gave none.
GENERATED_WHEN_ABSENT = ("bridge",)

# Children whose order means something: a hostdev pool hands out its VFs in
# the order of its <address>/<interface> list. Everything else is compared as
# a set (libvirt writes elements in its own schema order).
ORDERED = {("forward", "address"), ("forward", "interface"), ("forward", "pf")}

HEX_ATTRS = {"domain", "bus", "slot", "function"}
BOOL_WORDS = {"yes": "yes", "on": "yes", "true": "yes", "no": "no", "off": "no", "false": "no"}
MAC_RE = re.compile(r"^[0-9a-fA-F]{2}(:[0-9a-fA-F]{2}){5}$")
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]{0,63}$")


def parse(text, what="XML"):
    if not isinstance(text, str) or not text.strip():
        raise NetworkXMLError("%s is empty" % what)
    try:
        root = ET.fromstring(text.strip())
    except ET.ParseError as e:
        raise NetworkXMLError("%s is not well-formed: %s" % (what, e))
    return root


def check_name(name):
    if not NAME_RE.match(name or ""):
        raise NetworkXMLError("network name %r: letters, digits, '_', '.', '+', '-' "
                              "(at most 64, not starting with a sign)" % (name,))
    return name


def desired_root(xml, name):
    """The user's <network>, checked: its <name> is `name` (added when absent)."""
    root = parse(xml, "the network XML")
    if root.tag != "network":
        raise NetworkXMLError("the XML's root is <%s>, not <network>" % root.tag)
    check_name(name)
    el = root.find("name")
    if el is None:
        el = ET.Element("name")
        el.text = name
        root.insert(0, el)
    elif (el.text or "").strip() != name:
        raise NetworkXMLError("the XML names network %r, the task %r"
                              % ((el.text or "").strip(), name))
    return root


def _value(attr, value):
    v = value.strip()
    if attr in HEX_ATTRS:
        try:
            return "0x%x" % int(v, 0)
        except ValueError:
            return v
    if MAC_RE.match(v):
        return v.lower()
    return BOOL_WORDS.get(v.lower(), v)


def canonical(el):
    """(tag, sorted attributes, text, children) with values in one spelling;
    children in libvirt's reordering-proof order (see ORDERED)."""
    attrs = tuple(sorted((k, _value(k, v)) for k, v in el.attrib.items()))
    text = (el.text or "").strip()
    kids = [canonical(c) for c in el]
    seen = {}
    keyed = []
    for c in kids:
        if (el.tag, c[0]) in ORDERED:
            n = seen.get(c[0], 0)
            seen[c[0]] = n + 1
            keyed.append(((c[0], 0, n, ""), c))
        else:
            keyed.append(((c[0], 1, 0, repr(c)), c))
    keyed.sort(key=lambda kc: kc[0])
    return (el.tag, attrs, text, tuple(kc[1] for kc in keyed))


def _strip_generated(have, want, path=""):
    """A copy of element `have` without what libvirt generated and `want`
    (the user's element at the same place, or None) does not mention."""
    out = ET.Element(have.tag)
    for k, v in have.attrib.items():
        p = (path + "/@" + k).lstrip("/")
        if p in GENERATED and (want is None or k not in want.attrib):
            continue
        out.set(k, v)
    out.text = have.text
    wanted_tags = {c.tag for c in want} if want is not None else set()
    used = {}
    for c in have:
        p = (path + "/" + c.tag).lstrip("/")
        if c.tag not in wanted_tags and (p in GENERATED or p in GENERATED_WHEN_ABSENT):
            continue
        # the user's child of the same tag, in order (for nested generated parts)
        same = [w for w in (want if want is not None else ()) if w.tag == c.tag]
        i = used.get(c.tag, 0)
        used[c.tag] = i + 1
        out.append(_strip_generated(c, same[i] if i < len(same) else
                                    (same[0] if same else None), p))
    return out


def compare(have_xml, want_root):
    """(equal, have_view, want_view): libvirt's XML of the network (inactive
    definition) against the user's, both as canonical pretty text for a diff."""
    have = parse(have_xml, "libvirt's XML")
    view = _strip_generated(have, want_root)
    h, w = canonical(view), canonical(want_root)
    return h == w, render(h), render(w)


def render(c, indent=0):
    """Canonical form back to indented XML text (the diff's lines)."""
    tag, attrs, text, kids = c
    pad = "  " * indent
    a = "".join(" %s='%s'" % (k, v.replace("'", "&apos;")) for k, v in attrs)
    if not kids and not text:
        return "%s<%s%s/>\n" % (pad, tag, a)
    if not kids:
        return "%s<%s%s>%s</%s>\n" % (pad, tag, a, _esc(text), tag)
    inner = "".join(render(k, indent + 1) for k in kids)
    return "%s<%s%s>\n%s%s</%s>\n" % (pad, tag, a, inner, pad, tag)


def _esc(s):
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def define_xml(want_root, have_xml=None):
    """The XML to define: the user's, carrying over the existing network's
    uuid and bridge MAC when the user gave none (same name, other uuid: libvirt
    refuses the definition; a new MAC would change the bridge's address)."""
    root = ET.fromstring(ET.tostring(want_root))
    if have_xml:
        have = parse(have_xml, "libvirt's XML")
        for tag in ("uuid", "mac"):
            h = have.find(tag)
            if h is not None and root.find(tag) is None:
                root.insert(1, ET.fromstring(ET.tostring(h)))
        hu, wu = have.find("uuid"), root.find("uuid")
        if hu is not None and (wu.text or "").strip().lower() != (hu.text or "").strip().lower():
            raise NetworkXMLError("the XML gives uuid %s, the existing network has %s: a "
                                  "network's uuid cannot change (remove it first)"
                                  % ((wu.text or "").strip(), (hu.text or "").strip()))
    for el in root.iter():
        el.tail = None
        if len(el):
            el.text = None
    return ET.tostring(root, encoding="unicode")


def connections(live_xml):
    """How many interfaces use a started network (libvirt's connections=)."""
    try:
        return int(parse(live_xml, "libvirt's XML").get("connections", "0"))
    except ValueError:
        return 0


def pretty(root):
    """Canonical indented text of an element (a diff's side)."""
    return render(canonical(root))
