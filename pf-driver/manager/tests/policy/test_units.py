"""Rates and MACs: exact conversion to what each kernel interface holds."""
import pytest

from vfwarp_manager.policy import units


@pytest.mark.parametrize("text,target,bits", [
    ("100mbit", "ip_link", 100 * 10**6), ("2.5gbit", "ip_link", 2500 * 10**6),
    ("1Gbit", "ip_link", 10**9), ("125MBps", "ip_link", 10**9),
    ("1001Bps", "devlink", 8008), ("1kibit", "devlink", 1024), ("1.5KiBps", "tc", 12288),
])
def test_rates(text, target, bits):
    assert units.parse_rate(text, target) == bits


@pytest.mark.parametrize("text,target,rule", [
    ("100", "devlink", "rate-unit"), ("100mbps", "devlink", "rate-unit-ambiguous"),
    ("100Mbps", "devlink", "rate-unit-ambiguous"), ("1kbit", "ip_link", "rate-inexact"),
    ("0.1bit", "devlink", "rate-inexact"), ("4bit", "devlink", "rate-inexact"),
    ("4294967296mbit", "ip_link", "range"), ("0gbit", "tc", "rate-zero"),
    ("fast", "tc", "rate-syntax"), ("10 furlongs", "tc", "rate-syntax"),
])
def test_rates_refused(text, target, rule):
    with pytest.raises(units.UnitError) as e:
        units.parse_rate(text, target)
    assert e.value.rule == rule


def test_ambiguous_unit_names_the_byte_reading():
    with pytest.raises(units.UnitError) as e:
        units.parse_rate("100mbps", "tc")
    assert "MBps" in str(e.value) and "mbit" in str(e.value)


def test_format_rate_round_trips():
    for bits in (10**9, 2500 * 10**6, 8008, 1024):
        assert units.parse_rate(units.format_rate(bits), "devlink") == bits


@pytest.mark.parametrize("text,rule", [("ff:ff:ff:ff:ff:ff", "mac-multicast"),
                                       ("33:33:00:00:00:01", "mac-multicast"),
                                       ("00:00:00:00:00:00", "mac-zero"),
                                       ("02:00:00:00:00", "mac-syntax"), ("02-00-00-00-00-01", "mac-syntax")])
def test_macs_refused(text, rule):
    with pytest.raises(units.UnitError) as e:
        units.parse_mac(text)
    assert e.value.rule == rule


def test_mac_round_trip():
    assert units.format_mac(units.parse_mac("02:AA:bb:00:00:01")) == "02:aa:bb:00:00:01"
