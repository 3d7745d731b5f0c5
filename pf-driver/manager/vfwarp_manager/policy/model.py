"""A small declarative model of the policy format: one definition that both
checks a file's node tree (with positions) and generates the JSON Schema
editors use (schema/vfwarp-policy-v1.schema.json), so the two cannot drift.

Each spec's check() takes a YAML node and a Context, returns the plain Python
value, and reports problems to the Context; it never raises on bad input.
"""
import difflib
import ipaddress
import re

from . import units
from .errors import PolicyError, quoted, shown
from .source import is_mapping, is_scalar, is_sequence, scalar_value, where

INT_TAG = "tag:yaml.org,2002:int"
BOOL_TAG = "tag:yaml.org,2002:bool"
STR_TAG = "tag:yaml.org,2002:str"
MAX_LIST = 4096          # bound on any list in a file (128 VFs; ACLs are short)


class Context:
    """Collects errors and the position of every value, keyed by its path."""

    def __init__(self, path):
        self.path = path
        self.errors = []
        self.locs = {}           # path tuple -> Where of the value

    def error(self, node, rule, message, other=None):
        self.errors.append(PolicyError(where(self.path, node), rule, message, other))

    def at(self, node):
        return where(self.path, node)


def _describe(node):
    if is_mapping(node):
        return "a mapping"
    if is_sequence(node):
        return "a list"
    kind = {INT_TAG: "an integer", BOOL_TAG: "a boolean", STR_TAG: "a string",
            "tag:yaml.org,2002:float": "a number", "tag:yaml.org,2002:null": "nothing (null)"}
    return f"{kind.get(node.tag, 'a scalar')} {quoted(node.value)}"


# Integers the format takes: written the same way YAML 1.1 (PyYAML) and
# YAML 1.2 (editors, most other tools) read as the same number.
_DECIMAL = re.compile(r"[-+]?(0|[1-9][0-9]*)\Z")
_HEX = re.compile(r"[-+]?0x[0-9a-fA-F]+\Z")
_LEADING_ZERO = re.compile(r"[-+]?0[0-9]+\Z")
# Every integer of the format is below 2**32 (10 digits); a longer one is out
# of range whatever it is, and Python refuses to convert one of over 4,300
# digits (sys.get_int_max_str_digits): it is refused by its length.
MAX_INT_DIGITS = 20


def _integer(node, ctx, lo, hi):
    """The value of an integer scalar, or None after reporting why the
    text is refused: the forms YAML 1.1 and YAML 1.2 read differently."""
    text = node.value
    digits = text.lstrip("+-")
    if len(digits) > MAX_INT_DIGITS:
        ctx.error(node, "range", f"a {len(digits)}-digit number is out of range {lo}..{hi}")
        return None
    if ":" in text:
        # YAML 1.1's base 60 (1:40 = 100); a string to YAML 1.2
        ctx.error(node, "int-base-60", f"YAML 1.1 reads {text} as the base-60 number "
                  f"{scalar_value(node)}, YAML 1.2 as a string; write the number in decimal")
        return None
    if _LEADING_ZERO.match(text):
        v12 = int(text, 10)
        if node.tag == INT_TAG:
            v11 = int(text, 8)
            read11 = f"as the octal {v11}"
            write = f"write {v12} (or {v11}) without the leading zero"
        else:
            read11 = "as a string"
            write = f"write {v12} without the leading zero"
        ctx.error(node, "int-leading-zero", f"YAML 1.1 reads {text} {read11}, YAML 1.2 as {v12}; {write}")
        return None
    if not (_DECIMAL.match(text) or _HEX.match(text)):
        # 1_000 and 0b101: integers to YAML 1.1 only
        ctx.error(node, "int-syntax", f"YAML 1.1 reads {text} as {scalar_value(node)}, YAML 1.2 as "
                  "a string; write the number in decimal")
        return None
    return int(text, 0)


class Spec:
    doc = ""

    def check(self, node, ctx, path):
        raise NotImplementedError

    def schema(self):
        raise NotImplementedError

    def _with_doc(self, s):
        if self.doc:
            s["description"] = self.doc
        return s


class Int(Spec):
    def __init__(self, lo, hi, doc=""):
        self.lo, self.hi, self.doc = lo, hi, doc

    def check(self, node, ctx, path):
        if is_scalar(node) and node.tag == STR_TAG and _LEADING_ZERO.match(node.value):
            # 089 is a string to YAML 1.1 (no octal 8 or 9) and 89 to YAML 1.2:
            # refused as int-leading-zero, not as a string where a number goes
            _integer(node, ctx, self.lo, self.hi)
            return None
        if not is_scalar(node) or node.tag != INT_TAG:
            ctx.error(node, "type", f"expected an integer, found {_describe(node)}")
            return None
        v = _integer(node, ctx, self.lo, self.hi)
        if v is not None and not self.lo <= v <= self.hi:
            ctx.error(node, "range", f"{v} is out of range {self.lo}..{self.hi}")
            return None
        return v

    def schema(self):
        return self._with_doc({"type": "integer", "minimum": self.lo, "maximum": self.hi})


class Bool(Spec):
    SPELLINGS = ("true", "false")

    def __init__(self, doc=""):
        self.doc = doc

    def check(self, node, ctx, path):
        if not is_scalar(node) or node.tag != BOOL_TAG:
            ctx.error(node, "type", f"expected true or false, found {_describe(node)}")
            return None
        if node.value.lower() not in self.SPELLINGS:
            # YAML 1.1 reads yes/no/on/off as booleans, YAML 1.2 (and most
            # editors' schema checks) as strings: only true/false mean one thing.
            ctx.error(node, "bool-spelling", f"write true or false, not {quoted(node.value)} "
                      "(YAML 1.1 and 1.2 disagree on it)")
            return None
        return scalar_value(node)

    def schema(self):
        return self._with_doc({"type": "boolean"})


class Str(Spec):
    def __init__(self, pattern, max_len, doc="", hint=""):
        self.pattern, self.max_len, self.doc, self.hint = pattern, max_len, doc, hint
        self._re = re.compile(pattern)

    def check(self, node, ctx, path):
        if not is_scalar(node) or node.tag != STR_TAG:
            ctx.error(node, "type", f"expected a string, found {_describe(node)}")
            return None
        v = node.value
        if len(v) > self.max_len or not self._re.match(v):
            ctx.error(node, "syntax", f"{quoted(v)} is not valid here{': ' + self.hint if self.hint else ''}")
            return None
        return v

    def schema(self):
        return self._with_doc({"type": "string", "pattern": self.pattern, "maxLength": self.max_len})


class Enum(Spec):
    def __init__(self, choices, doc=""):
        self.choices, self.doc = tuple(choices), doc

    def check(self, node, ctx, path):
        if not is_scalar(node) or node.tag != STR_TAG:
            ctx.error(node, "type", f"expected one of {', '.join(self.choices)}, found {_describe(node)}")
            return None
        if node.value not in self.choices:
            ctx.error(node, "enum", f"{quoted(node.value)} is not one of {', '.join(self.choices)}")
            return None
        return node.value

    def schema(self):
        return self._with_doc({"type": "string", "enum": list(self.choices)})


class Const(Enum):
    def schema(self):
        return self._with_doc({"const": self.choices[0]})


class ConstInt(Spec):
    def __init__(self, value, doc=""):
        self.value, self.doc = value, doc

    def check(self, node, ctx, path):
        v = None
        if is_scalar(node) and node.tag == INT_TAG and len(node.value) <= MAX_INT_DIGITS:
            v = _integer(node, ctx, self.value, self.value)
            if v is None:
                return None
        if v != self.value:
            ctx.error(node, "version", f"unsupported format version "
                      f"{shown(node.value) if is_scalar(node) else '?'}"
                      f"; this vfwarpctl reads version {self.value}")
            return None
        return self.value

    def schema(self):
        return self._with_doc({"const": self.value})


class Rate(Spec):
    """A rate with a unit, exact for the interface it compiles to (units.TARGETS)."""

    def __init__(self, target, doc=""):
        self.target, self.doc = target, doc

    def check(self, node, ctx, path):
        if is_scalar(node) and node.tag in (INT_TAG, "tag:yaml.org,2002:float"):
            n = node.value if len(node.value) <= MAX_INT_DIGITS else "100"
            ctx.error(node, "rate-unit", f"rate {shown(node.value)} has no unit; write e.g. "
                      f"{n}mbit (units: {', '.join(units.RATE_UNITS)})")
            return None
        if not is_scalar(node) or node.tag != STR_TAG:
            ctx.error(node, "type", f"expected a rate such as 100mbit, found {_describe(node)}")
            return None
        try:
            return units.parse_rate(node.value, self.target)
        except units.UnitError as e:
            ctx.error(node, e.rule, str(e))
            return None

    def schema(self):
        return self._with_doc({"type": "string", "pattern": units.RATE_PATTERN})


class Mac(Spec):
    def __init__(self, doc=""):
        self.doc = doc

    def check(self, node, ctx, path):
        if is_scalar(node) and node.tag == INT_TAG and ":" in node.value:
            ctx.error(node, "mac-quoted", f"put the MAC {shown(node.value)} in quotes: YAML 1.1 reads it "
                      "as a base-60 number")
            return None
        if not is_scalar(node) or node.tag != STR_TAG:
            ctx.error(node, "type", f"expected a MAC address in quotes, found {_describe(node)}")
            return None
        try:
            return units.parse_mac(node.value)
        except units.UnitError as e:
            ctx.error(node, e.rule, str(e))
            return None

    def schema(self):
        return self._with_doc({"type": "string", "pattern": units.MAC_PATTERN})


class Subnet(Spec):
    """An IPv4 or IPv6 network in CIDR form, host bits clear."""

    def __init__(self, doc=""):
        self.doc = doc

    def check(self, node, ctx, path):
        if not is_scalar(node) or node.tag != STR_TAG:
            ctx.error(node, "type", f"expected a subnet such as 10.0.0.0/24, found {_describe(node)}")
            return None
        try:
            return ipaddress.ip_network(node.value, strict=True)
        except ValueError as e:
            ctx.error(node, "subnet", f"{quoted(node.value)} is not a subnet: {e}")
            return None

    def schema(self):
        return self._with_doc({"type": "string", "pattern": r"^[0-9A-Fa-f:.]+/[0-9]{1,3}$"})


class IntRange(Spec):
    """N or 'N-M' (inclusive), within lo..hi: VF ranges, port ranges."""

    def __init__(self, lo, hi, rule, doc=""):
        self.lo, self.hi, self.rule, self.doc = lo, hi, rule, doc

    def check(self, node, ctx, path):
        if is_scalar(node) and node.tag == INT_TAG:
            a = b = _integer(node, ctx, self.lo, self.hi)
            if a is None:
                return None
        elif is_scalar(node) and node.tag == STR_TAG:
            m = re.match(r"^\s*([0-9]+)\s*-\s*([0-9]+)\s*$", node.value)
            if not m:
                ctx.error(node, self.rule + "-syntax", f"{quoted(node.value)} is not N or N-M")
                return None
            if max(len(m.group(1)), len(m.group(2))) > MAX_INT_DIGITS:
                ctx.error(node, "range", f"{quoted(node.value)} is out of range {self.lo}..{self.hi}")
                return None
            a, b = int(m.group(1)), int(m.group(2))
            if a > b:
                ctx.error(node, self.rule + "-order", f"range {quoted(node.value)} runs backwards; write {b}-{a}")
                return None
        else:
            ctx.error(node, "type", f"expected N or 'N-M', found {_describe(node)}")
            return None
        if a < self.lo or b > self.hi:
            ctx.error(node, "range", f"{quoted(node.value)} is out of range {self.lo}..{self.hi}")
            return None
        return (a, b)

    def schema(self):
        return self._with_doc({"oneOf": [{"type": "integer", "minimum": self.lo, "maximum": self.hi},
                                         {"type": "string", "pattern": r"^\s*[0-9]+\s*-\s*[0-9]+\s*$"}]})


class List(Spec):
    def __init__(self, item, min_items=0, max_items=MAX_LIST, doc=""):
        self.item, self.min_items, self.max_items, self.doc = item, min_items, max_items, doc

    def check(self, node, ctx, path):
        if not is_sequence(node):
            ctx.error(node, "type", f"expected a list, found {_describe(node)}")
            return None
        n = len(node.value)
        if not self.min_items <= n <= self.max_items:
            ctx.error(node, "list-length", f"list has {n} items; it needs {self.min_items}..{self.max_items}")
            return None
        out = []
        for i, child in enumerate(node.value):
            ctx.locs[path + (i,)] = ctx.at(child)
            out.append(self.item.check(child, ctx, path + (i,)))
        return out

    def schema(self):
        return self._with_doc({"type": "array", "items": self.item.schema(),
                               "minItems": self.min_items, "maxItems": self.max_items})


class Field:
    def __init__(self, spec, required=False, default=None):
        self.spec, self.required, self.default = spec, required, default


class Obj(Spec):
    """A mapping with known keys. Unknown and repeated keys are errors;
    `exactly_one` lists groups of keys of which one must be given."""

    def __init__(self, fields, exactly_one=(), doc=""):
        self.fields, self.exactly_one, self.doc = fields, tuple(exactly_one), doc

    def check(self, node, ctx, path):
        if not is_mapping(node):
            ctx.error(node, "type", f"expected a mapping, found {_describe(node)}")
            return None
        seen = {}
        out = {}
        suggested = set()       # keys an unknown key was probably meant to be
        for knode, vnode in node.value:
            if not is_scalar(knode) or knode.tag != STR_TAG:
                ctx.error(knode, "type", f"keys are names; found {_describe(knode)}")
                continue
            key = knode.value
            if key in seen:
                ctx.error(knode, "duplicate-key", f"key {quoted(key)} is given twice", other=seen[key])
                continue
            seen[key] = ctx.at(knode)
            f = self.fields.get(key)
            if f is None:
                near = difflib.get_close_matches(key, self.fields, n=1)
                suggested.update(near)
                hint = f"; did you mean '{near[0]}'?" if near else \
                    f"; known keys: {', '.join(self.fields)}"
                ctx.error(knode, "unknown-key", f"unknown key {quoted(key)}{hint}")
                continue
            ctx.locs[path + (key,)] = ctx.at(vnode)
            out[key] = f.spec.check(vnode, ctx, path + (key,))
        for key, f in self.fields.items():
            if key not in seen:
                if f.required and key not in suggested:   # one typo, one error
                    ctx.error(node, "missing-key", f"required key '{key}' is missing")
                out[key] = f.default
        for group in self.exactly_one:
            given = [k for k in group if k in seen]
            if len(given) != 1:
                at = node if not given else node.value[[k.value for k, _ in node.value].index(given[1])][0]
                ctx.error(at, "one-of", f"give exactly one of {', '.join(group)}"
                          f"{' (found ' + ', '.join(given) + ')' if given else ''}")
        return out

    def schema(self):
        s = {"type": "object", "additionalProperties": False,
             "properties": {k: f.spec.schema() for k, f in self.fields.items()}}
        req = [k for k, f in self.fields.items() if f.required]
        if req:
            s["required"] = req
        if self.exactly_one:
            s["allOf"] = [{"oneOf": [{"required": [k]} for k in group]} for group in self.exactly_one]
        return self._with_doc(s)
