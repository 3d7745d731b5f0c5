"""Rates and MAC addresses as the policy format writes them.

Rates carry a unit, always: the suffixes are iproute2's (lib/utils_math.c,
the table behind `tc` and `devlink ... rate`), SI and IEC, bits and bytes.
iproute2 matches them case-insensitively, so `tc` reads "100mbps" as
100 megaBYTES per second (800 Mbit/s); the policy format refuses spellings
whose meaning depends on case, and accepts the byte units only as written
in the table (capital B: "Bps", "MBps", "MiBps").

A rate is kept as an exact integer of bits per second (Fraction arithmetic,
never float), and each target interface says what it can hold exactly:
  ip_link  `ip link set PF vf N max_tx_rate/min_tx_rate`: whole Mbit/s (u32)
  devlink  devlink rate tx_share/tx_max: whole bytes/s (u64)
  tc       tc police rate: whole bytes/s (u64 with rate64)
  kbit     dcb maxrate (dcbnl's tc_maxrate) and the devlink param line_rate_kbps:
           whole kbit/s (u32)
"""
import re
from fractions import Fraction

from .errors import quoted

_BIT = {"bit": 1, "kbit": 10**3, "mbit": 10**6, "gbit": 10**9, "tbit": 10**12,
        "kibit": 2**10, "mibit": 2**20, "gibit": 2**30, "tibit": 2**40}
_BYTE = {"Bps": 8, "KBps": 8 * 10**3, "MBps": 8 * 10**6, "GBps": 8 * 10**9,
         "TBps": 8 * 10**12, "KiBps": 8 * 2**10, "MiBps": 8 * 2**20,
         "GiBps": 8 * 2**30, "TiBps": 8 * 2**40}
RATE_UNITS = sorted(_BIT) + sorted(_BYTE)
# The JSON Schema pattern editors use; the validator below is the authority.
RATE_PATTERN = r"^[0-9]+(\.[0-9]+)?([KkMmGgTt]?[Ii]?[Bb][Ii][Tt]|[KMGT]?i?Bps)$"
MAX_NUMBER_CHARS = 40     # 2**64 bytes/s in bit/s has 21 digits; with decimals, room to spare
_RATE_RE = re.compile(r"^([0-9]+(?:\.[0-9]+)?)([A-Za-z]*)$")   # no space: tc takes none

TARGETS = {
    # name: (bits per unit step, largest value in bits, how the target is called)
    "ip_link": (10**6, (2**32 - 1) * 10**6, "ip link max_tx_rate/min_tx_rate (whole Mbit/s)"),
    "devlink": (8, (2**64 - 1) * 8, "devlink rate (whole bytes/s)"),
    "tc": (8, (2**64 - 1) * 8, "tc police (whole bytes/s)"),
    "kbit": (10**3, (2**32 - 1) * 10**3, "dcb maxrate / line_rate_kbps (whole kbit/s, u32)"),
}


class UnitError(ValueError):
    """A value the format refuses; .rule is the stable rule name."""

    def __init__(self, rule, message):
        super().__init__(message)
        self.rule = rule


def parse_rate(text, target):
    """'2.5gbit' -> 2500000000 (bits/s), checked against the target interface."""
    m = _RATE_RE.match(text)
    if not m:
        raise UnitError("rate-syntax", f"{quoted(text)} is not a rate: a number and a unit, e.g. 100mbit")
    num, unit = m.groups()
    if len(num) > MAX_NUMBER_CHARS:
        # Fraction() of a number of over 4,300 digits raises (Python's limit on
        # converting text to int); far past any rate, refused by its length.
        raise UnitError("range", f"a rate of {len(num)} digits is larger than any interface can hold")
    if not unit:
        raise UnitError("rate-unit", f"rate {quoted(text)} has no unit; write e.g. {num}mbit "
                        f"(units: {', '.join(RATE_UNITS)})")
    if unit.lower() in _BIT:
        scale = _BIT[unit.lower()]
    elif unit in _BYTE:
        scale = _BYTE[unit]
    elif unit.lower().endswith("bps"):
        raise UnitError("rate-unit-ambiguous",
                        f"unit {quoted(unit)} is ambiguous: tc and devlink read {quoted(unit)} as "
                        f"{_guess_byte_unit(unit)} (bytes per second); write "
                        f"{unit[:-3].lower() or ''}bit for bits or "
                        f"{_guess_byte_unit(unit)} for bytes")
    else:
        raise UnitError("rate-unit", f"unknown rate unit {quoted(unit)} (units: {', '.join(RATE_UNITS)})")
    bits = Fraction(num) * scale
    if bits.denominator != 1:
        raise UnitError("rate-inexact", f"{quoted(text)} is not a whole number of bits per second")
    bits = int(bits)
    if bits == 0:
        raise UnitError("rate-zero", f"rate {quoted(text)} is zero; leave the key out for no limit")
    step, top, what = TARGETS[target]
    if bits % step:
        raise UnitError("rate-inexact", f"{quoted(text)} = {bits} bit/s cannot be held exactly by {what}")
    if bits > top:
        raise UnitError("range", f"{quoted(text)} is larger than {what} can hold")
    return bits


def _guess_byte_unit(unit):
    p = unit[:-3].upper()
    return (p[:1] + ("i" if p[1:2] == "I" else "") + "Bps") if p else "Bps"


def format_rate(bits):
    """Bits/s as the shortest exact SI text: 2500000000 -> '2500mbit', 10**9 -> '1gbit'."""
    for unit, scale in (("tbit", 10**12), ("gbit", 10**9), ("mbit", 10**6), ("kbit", 10**3)):
        if bits % scale == 0:
            return f"{bits // scale}{unit}"
    return f"{bits}bit"


MAC_PATTERN = r"^[0-9A-Fa-f]{2}(:[0-9A-Fa-f]{2}){5}$"
_MAC_RE = re.compile(MAC_PATTERN)


def parse_mac(text):
    """'02:AA:...' -> 48-bit int; refuses malformed, zero and multicast/broadcast."""
    if not _MAC_RE.match(text):
        raise UnitError("mac-syntax", f"{quoted(text)} is not a MAC address (six hex octets, xx:xx:xx:xx:xx:xx)")
    value = int(text.replace(":", ""), 16)
    if value == 0:
        raise UnitError("mac-zero", "MAC 00:00:00:00:00:00 is not a station address")
    if (value >> 40) & 1:
        raise UnitError("mac-multicast", f"MAC {text.lower()} is multicast (the first octet is odd); "
                        "a VF needs a unicast address")
    return value


def format_mac(value):
    return ":".join(f"{(value >> s) & 0xff:02x}" for s in range(40, -1, -8))
