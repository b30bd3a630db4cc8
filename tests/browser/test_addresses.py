"""Which addresses are refused as destinations (plasmate_nb.browser.addresses): registry rows,
IPv4 carried in IPv6, literal parsing. Pure: no browser, no network (addresses are only data)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from ipaddress import IPv4Address, IPv6Address, IPv6Network, ip_address
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from plasmate_nb.browser import addresses
from plasmate_nb.browser.addresses import (
    DECIDED_BY_EMBEDDED_IPV4,
    REFUSED_ALTHOUGH_REACHABLE,
    SPECIAL_PURPOSE,
    Entry,
    embedded_ipv4,
    embedded_ipv4s,
    is_blocked,
    parse_address,
    special_purpose_entry,
)

ipv4s = st.integers(0, 2**32 - 1).map(IPv4Address)


def _entry_id(entry: Entry) -> str:
    return f"{entry.network} {entry.name}"


def _always_blocked(entry: Entry) -> bool:
    """Blocked whatever address of it is asked (the carried IPv4 decides the other forms)."""
    if entry.network in DECIDED_BY_EMBEDDED_IPV4:
        return False
    return entry.globally_reachable is not True or entry.network in REFUSED_ALTHOUGH_REACHABLE


def _inner(entry: Entry) -> list[Entry]:
    """The entries strictly inside ``entry`` (they decide their own addresses)."""
    return [
        other
        for other in SPECIAL_PURPOSE
        if other.network.version == entry.network.version
        and other.network != entry.network
        and other.network.subnet_of(entry.network)
    ]


# --- one case per table entry ---------------------------------------------------------------


@pytest.mark.parametrize("entry", SPECIAL_PURPOSE, ids=_entry_id)
def test_first_middle_and_last_address_of_every_entry(entry: Entry) -> None:
    network = entry.network
    samples = {network[0], network[network.num_addresses // 2], network[-1]}
    inner = _inner(entry)
    own = [one for one in samples if not any(one in other.network for other in inner)]
    assert own, "every entry decides at least one of its first, middle and last addresses"
    for address in own:
        assert special_purpose_entry(address) == entry
        if network in DECIDED_BY_EMBEDDED_IPV4:
            carried = embedded_ipv4s(address)
            assert carried
            expected = any(is_blocked(one) for one in carried)
        else:
            expected = _always_blocked(entry)
        assert is_blocked(address) is expected, address


def test_table_has_one_entry_per_network() -> None:
    networks = [entry.network for entry in SPECIAL_PURPOSE]
    assert len(networks) == len(set(networks))
    assert REFUSED_ALTHOUGH_REACHABLE.issubset(networks)
    assert DECIDED_BY_EMBEDDED_IPV4.issubset(networks)
    assert all(
        entry.globally_reachable is True
        for entry in SPECIAL_PURPOSE
        if entry.network in REFUSED_ALTHOUGH_REACHABLE
    )


# --- the rules named one by one (an oracle that does not read the table) ---------------------

BLOCKED = [
    "0.0.0.0",
    "0.1.2.3",
    "10.0.0.1",
    "100.64.0.1",
    "100.127.255.255",
    "127.0.0.1",
    "127.255.255.254",
    "169.254.0.1",
    "172.16.0.1",
    "172.31.255.255",
    "192.168.1.1",
    "192.0.0.1",
    "192.0.0.8",
    "192.0.0.170",
    "192.0.0.171",
    "192.0.0.255",
    "192.0.2.1",
    "198.18.0.1",
    "198.19.255.255",
    "198.51.100.7",
    "203.0.113.9",
    "192.88.99.1",
    "192.88.99.2",
    "224.0.0.1",
    "239.255.255.250",
    "240.0.0.1",
    "255.255.255.255",
    "::",
    "::1",
    "fc00::1",
    "fdff:ffff::1",
    "fe80::1",
    "febf:ffff::1",
    "fec0::1",
    "feff:ffff::1",
    "ff02::1",
    "ff0e::fb",
    "100::1",
    "100::ffff:ffff:ffff:ffff",
    "100:0:0:1::1",
    "2001:db8::1",
    "3fff::1",
    "3fff:fff:ffff::1",
    "2001:2::1",
    "2001:10::1",
    "5f00::1",
    "64:ff9b:1::1",
    "2001:5::1",
    "2001:1::4",
    "4000::1",
    "::8:0:0:1",
    "e000::1",
    # decisions: anycast of the local operator, host identity tags
    "192.0.0.9",
    "192.0.0.10",
    "2001:1::1",
    "2001:1::2",
    "2001:1::3",
    "2001:20::1",
    "2001:30::1",
]
ALLOWED = [
    "1.1.1.1",
    "8.8.8.8",
    "9.9.9.9",
    "93.184.215.14",
    "100.63.255.255",
    "100.128.0.0",
    "172.32.0.1",
    "192.0.1.1",
    "192.31.196.1",
    "192.52.193.1",
    "192.175.48.6",
    "198.17.255.255",
    "198.20.0.0",
    "223.255.255.255",
    "2606:4700:4700::1111",
    "2001:4860:4860::8888",
    "2620:fe::fe",
    "2001:3::1",
    "2001:4:112::1",
    "2620:4f:8000::6",
    "2001:200::1",
    "2003::1",
    "2a00:1450::1",
]
METADATA = ["169.254.169.254", "fd00:ec2::254"]


@pytest.mark.parametrize("text", BLOCKED + METADATA)
def test_blocked(text: str) -> None:
    assert is_blocked(ip_address(text))


@pytest.mark.parametrize("text", ALLOWED)
def test_allowed(text: str) -> None:
    assert not is_blocked(ip_address(text))


def test_scope_id_changes_nothing() -> None:
    assert is_blocked(IPv6Address("fe80::1%eth0"))
    assert not is_blocked(IPv6Address("2606:4700:4700::1111%eth0"))


# --- IPv4 carried in IPv6 ---------------------------------------------------------------------

NAT64 = int(IPv6Address("64:ff9b::"))
NAT64_LOCAL = int(IPv6Address("64:ff9b:1::"))


def mapped(v4: IPv4Address) -> IPv6Address:
    return IPv6Address(0xFFFF << 32 | int(v4))


def translated(v4: IPv4Address) -> IPv6Address:
    return IPv6Address(0xFFFF << 48 | int(v4))


def compatible(v4: IPv4Address) -> IPv6Address:
    return IPv6Address(int(v4))


def nat64(v4: IPv4Address) -> IPv6Address:
    return IPv6Address(NAT64 | int(v4))


def nat64_local(v4: IPv4Address) -> IPv6Address:
    """RFC 6052 for a /48 prefix: 16 bits of IPv4, the zero octet u (bits 64-71), 16 bits."""
    value = int(v4)
    return IPv6Address(NAT64_LOCAL | (value >> 16) << 64 | (value & 0xFFFF) << 40)


def six_to_four(v4: IPv4Address) -> IPv6Address:
    return IPv6Address(0x2002 << 112 | int(v4) << 80 | 1)


def teredo(server: IPv4Address, client: IPv4Address) -> IPv6Address:
    """Flags 0x8000 and an obfuscated port, the client address inverted (RFC 4380)."""
    return IPv6Address(
        0x20010000 << 96 | int(server) << 64 | 0x8000 << 48 | 0xC3FF << 32 | int(client) ^ 0xFFFFFFFF
    )


GLOBAL_V4 = IPv4Address("93.184.215.14")
BLOCKED_V4 = [IPv4Address(text) for text in ("127.0.0.1", "10.0.0.1", "169.254.169.254", "100.64.0.1")]
FORMS: dict[str, Callable[[IPv4Address], IPv6Address]] = {
    "mapped": mapped,
    "translated": translated,
    "compatible": compatible,
    "nat64-96": nat64,
    "6to4": six_to_four,
    "teredo-client": lambda v4: teredo(GLOBAL_V4, v4),
    "teredo-server": lambda v4: teredo(v4, GLOBAL_V4),
}


@pytest.mark.parametrize("v4", [*BLOCKED_V4, GLOBAL_V4], ids=str)
@pytest.mark.parametrize("form", FORMS, ids=str)
def test_carried_ipv4_decides(form: str, v4: IPv4Address) -> None:
    address = FORMS[form](v4)
    assert v4 in embedded_ipv4s(address)
    assert is_blocked(address) is (v4 != GLOBAL_V4)


@pytest.mark.parametrize("v4", [*BLOCKED_V4, GLOBAL_V4], ids=str)
def test_local_use_nat64_is_blocked_and_decoded(v4: IPv4Address) -> None:
    address = nat64_local(v4)
    assert embedded_ipv4(address) == v4
    assert is_blocked(address)


@pytest.mark.parametrize(
    ("text", "carried"),
    [
        ("2002:a9fe:a9fe::", ["169.254.169.254"]),  # 6to4 of the cloud metadata address
        ("2002:a9fe:a9fe:1234:5678::1", ["169.254.169.254"]),
        ("::ffff:169.254.169.254", ["169.254.169.254"]),
        ("::ffff:0:169.254.169.254", ["169.254.169.254"]),
        ("::169.254.169.254", ["169.254.169.254"]),
        ("64:ff9b::a9fe:a9fe", ["169.254.169.254"]),
        ("64:ff9b:1:a9fe:a9:fe00::", ["169.254.169.254", "0.0.0.0"]),  # /48 layout, then /96
        ("64:ff9b:1:a9fe:a9:fe00:a9fe:a9fe", ["169.254.169.254"]),
        ("2001:0:4136:e378:8000:63bf:3fff:fdd2", ["192.0.2.45", "65.54.227.120"]),  # RFC 4380 sample
        ("2001:0:7f00:1:8000:c3ff:a2c1:fefe", ["93.62.1.1", "127.0.0.1"]),
    ],
)
def test_literal_forms(text: str, carried: list[str]) -> None:
    address = IPv6Address(text)
    assert [str(one) for one in embedded_ipv4s(address)] == carried
    assert embedded_ipv4(address) == IPv4Address(carried[0])
    assert is_blocked(address)


@pytest.mark.parametrize("text", ["::", "::1", "2606:4700:4700::1111", "fe80::1", "2001:3::1", "2003::1"])
def test_no_carried_ipv4(text: str) -> None:
    assert embedded_ipv4s(IPv6Address(text)) == ()
    assert embedded_ipv4(IPv6Address(text)) is None


def test_6to4_and_teredo_of_global_ipv4_are_allowed() -> None:
    assert not is_blocked(six_to_four(IPv4Address("8.8.8.8")))
    assert not is_blocked(teredo(IPv4Address("8.8.8.8"), GLOBAL_V4))
    assert not is_blocked(IPv6Address("2002:808:808::1"))


@settings(max_examples=300, deadline=None)
@given(ipv4s)
def test_carrying_forms_follow_the_ipv4_address(v4: IPv4Address) -> None:
    blocked = is_blocked(v4)
    for form in (mapped, translated, compatible, nat64, six_to_four):
        address = form(v4)
        assert is_blocked(address) is blocked, address
        assert embedded_ipv4(address) == v4 or int(v4) <= 1  # :: and ::1 carry nothing
    assert is_blocked(nat64_local(v4))
    assert embedded_ipv4(nat64_local(v4)) == v4


@settings(max_examples=300, deadline=None)
@given(ipv4s, ipv4s)
def test_teredo_is_blocked_when_either_address_is(server: IPv4Address, client: IPv4Address) -> None:
    address = teredo(server, client)
    assert embedded_ipv4s(address) == tuple(dict.fromkeys((client, server)))
    assert is_blocked(address) is (is_blocked(server) or is_blocked(client))


# --- every address of a blocked network -------------------------------------------------------

ALWAYS_BLOCKED = [entry for entry in SPECIAL_PURPOSE if _always_blocked(entry)]


@pytest.mark.parametrize("entry", ALWAYS_BLOCKED, ids=_entry_id)
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_every_address_of_a_blocked_network_is_blocked(entry: Entry, data: st.DataObject) -> None:
    network = entry.network
    last = network.num_addresses - 1
    offset = data.draw(st.integers(0, last) | st.integers(0, last).map(lambda low: last - low))  # both ends
    address = network[offset]
    if any(address in other.network for other in _inner(entry) if not _always_blocked(other)):
        return  # an entry inside it decides its own addresses (tested per entry above)
    assert is_blocked(address)


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 2**128 - 1).map(IPv6Address))
def test_outside_global_unicast_only_carried_ipv4_can_pass(address: IPv6Address) -> None:
    if address not in IPv6Network("2000::/3") and not is_blocked(address):
        carried = embedded_ipv4s(address)
        assert carried and not any(is_blocked(one) for one in carried)


# --- parse_address ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("127.0.0.1", "127.0.0.1"),
        ("93.184.215.14", "93.184.215.14"),
        ("::1", "::1"),
        ("[::1]", "::1"),
        ("[2606:4700:4700::1111]", "2606:4700:4700::1111"),
        ("::FFFF:169.254.169.254", "::ffff:a9fe:a9fe"),
        ("fe80::1%eth0", "fe80::1"),
        ("fe80::1%25eth0", "fe80::1"),  # RFC 6874 spelling in a URL
        ("[fe80::1%eth0]", "fe80::1"),
        ("fe80::1%1", "fe80::1"),
    ],
)
def test_parse_literals(text: str, expected: str) -> None:
    parsed = parse_address(text)
    assert parsed == ip_address(expected)
    assert str(parsed) == str(ip_address(expected))  # the zone is gone


@pytest.mark.parametrize(
    "text",
    [
        "",
        "localhost",
        "host.test",
        "[]",
        "[::1",
        "::1]",
        "[1.2.3.4]",
        "1.2.3.4%eth0",
        "fe80::1%",
        "[::1]:80",
        "::1/128",
        "10.0.0.0/8",
        "127.1",
        "0x7f.0.0.1",
        "2130706433",
        "01.2.3.4",
        " 1.2.3.4",
        "1.2.3.4.",
        "1.2.3.4.5",
        "256.0.0.1",
        ":::",
    ],
)
def test_parse_non_addresses(text: str) -> None:
    assert parse_address(text) is None


def test_module_needs_no_browser_no_io() -> None:
    """Loaded on its own, with Playwright, asyncio and socket unavailable."""
    code = (
        "import importlib.util, sys\n"
        "for name in ('playwright', 'asyncio', 'socket'): sys.modules[name] = None\n"
        f"spec = importlib.util.spec_from_file_location('addresses', {str(Path(addresses.__file__))!r})\n"
        "module = importlib.util.module_from_spec(spec)\n"
        "spec.loader.exec_module(module)\n"
        "assert module.is_blocked(module.parse_address('2002:a9fe:a9fe::'))\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)
