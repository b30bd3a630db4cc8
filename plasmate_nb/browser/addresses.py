"""Whether an IP address may be the destination of an outbound connection: only globally reachable ones.

Rule: find the most specific entry of :data:`SPECIAL_PURPOSE` that holds the address. An IPv6
form that carries IPv4 addresses (:func:`embedded_ipv4s`) is blocked when any carried address
is; in the forms listed in :data:`DECIDED_BY_EMBEDDED_IPV4` the carried addresses alone decide.
Otherwise the entry decides: blocked unless the registry calls it globally reachable (and it is
not in :data:`REFUSED_ALTHOUGH_REACHABLE`). An address that no entry holds is allowed.

Pure: the standard library's :mod:`ipaddress` only (its ``is_global`` is not used: its tables
differ from one Python release to the next).
"""

from __future__ import annotations

import ipaddress
from typing import NamedTuple

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network


class Entry(NamedTuple):
    network: Network
    globally_reachable: bool | None  # the registry's column; None: "N/A" or empty (terminated)
    name: str


def _e(cidr: str, globally_reachable: bool | None, name: str) -> Entry:
    return Entry(ipaddress.ip_network(cidr), globally_reachable, name)


# IANA IPv4 and IPv6 Special-Purpose Address Registries (RFC 6890, RFC 8190), every row, as
# published in 2025 (newest row: 100:0:0:1::/64, 2025-04), then additions that are in neither.
SPECIAL_PURPOSE: tuple[Entry, ...] = (
    # IPv4 Special-Purpose Address Registry
    _e("0.0.0.0/8", False, '"This network"'),
    _e("0.0.0.0/32", False, '"This host on this network"'),
    _e("10.0.0.0/8", False, "Private-Use"),
    _e("100.64.0.0/10", False, "Shared Address Space"),
    _e("127.0.0.0/8", False, "Loopback"),
    _e("169.254.0.0/16", False, "Link Local"),  # holds the cloud metadata 169.254.169.254
    _e("172.16.0.0/12", False, "Private-Use"),
    _e("192.0.0.0/24", False, "IETF Protocol Assignments"),
    _e("192.0.0.0/29", False, "IPv4 Service Continuity Prefix"),
    _e("192.0.0.8/32", False, "IPv4 dummy address"),
    _e("192.0.0.9/32", True, "Port Control Protocol Anycast"),
    _e("192.0.0.10/32", True, "Traversal Using Relays around NAT Anycast"),
    _e("192.0.0.170/32", False, "NAT64/DNS64 Discovery"),
    _e("192.0.0.171/32", False, "NAT64/DNS64 Discovery"),
    _e("192.0.2.0/24", False, "Documentation (TEST-NET-1)"),
    _e("192.31.196.0/24", True, "AS112-v4"),
    _e("192.52.193.0/24", True, "AMT"),
    _e("192.88.99.0/24", None, "Deprecated (6to4 Relay Anycast)"),
    _e("192.88.99.2/32", False, "6a44-relay anycast address"),
    _e("192.168.0.0/16", False, "Private-Use"),
    _e("192.175.48.0/24", True, "Direct Delegation AS112 Service"),
    _e("198.18.0.0/15", False, "Benchmarking"),
    _e("198.51.100.0/24", False, "Documentation (TEST-NET-2)"),
    _e("203.0.113.0/24", False, "Documentation (TEST-NET-3)"),
    _e("240.0.0.0/4", False, "Reserved"),
    _e("255.255.255.255/32", False, "Limited Broadcast"),
    # IPv6 Special-Purpose Address Registry
    _e("::1/128", False, "Loopback Address"),
    _e("::/128", False, "Unspecified Address"),
    _e("::ffff:0:0/96", False, "IPv4-mapped Address"),
    _e("64:ff9b::/96", True, "IPv4-IPv6 Translat."),
    _e("64:ff9b:1::/48", False, "IPv4-IPv6 Translat. (local use)"),
    _e("100::/64", False, "Discard-Only Address Block"),
    _e("100:0:0:1::/64", False, "Dummy IPv6 Prefix"),
    _e("2001::/23", False, "IETF Protocol Assignments"),
    _e("2001::/32", None, "TEREDO"),
    _e("2001:1::1/128", True, "Port Control Protocol Anycast"),
    _e("2001:1::2/128", True, "Traversal Using Relays around NAT Anycast"),
    _e("2001:1::3/128", True, "DNS-SD Service Registration Protocol Anycast"),
    _e("2001:2::/48", False, "Benchmarking"),
    _e("2001:3::/32", True, "AMT"),
    _e("2001:4:112::/48", True, "AS112-v6"),
    _e("2001:10::/28", None, "Deprecated (previously ORCHID)"),
    _e("2001:20::/28", True, "ORCHIDv2"),
    _e("2001:30::/28", True, "Drone Remote ID Protocol Entity Tags (DETs) Prefix"),
    _e("2001:db8::/32", False, "Documentation"),
    _e("2002::/16", None, "6to4"),
    _e("2620:4f:8000::/48", True, "Direct Delegation AS112 Service"),
    _e("3fff::/20", False, "Documentation"),
    _e("5f00::/16", False, "Segment Routing (SRv6) SIDs"),
    _e("fc00::/7", False, "Unique-Local"),  # holds the cloud metadata fd00:ec2::254
    _e("fe80::/10", False, "Link-Local Unicast"),
    # Additions: multicast (its own registries), IPv4-carrying forms outside the registry, and
    # the IPv6 Address Space registry's blocks outside 2000::/3 global unicast.
    _e("224.0.0.0/4", False, "Multicast"),
    _e("ff00::/8", False, "Multicast"),
    _e("fec0::/10", False, "Site-Local (deprecated, RFC 3879; some stacks still route it)"),
    _e("::/96", False, "IPv4-compatible Address (deprecated, RFC 4291)"),
    _e("::ffff:0:0:0/96", False, "IPv4-translated Address (RFC 2765)"),
    *(
        _e(cidr, False, "Reserved by IETF (IPv6 Address Space)")
        for cidr in (
            "::/8",
            "100::/8",
            "200::/7",
            "400::/6",
            "800::/5",
            "1000::/4",
            "4000::/3",
            "6000::/3",
            "8000::/3",
            "a000::/3",
            "c000::/3",
            "e000::/4",
            "f000::/5",
            "f800::/6",
            "fe00::/9",
        )
    ),
)

# Forms where the carried IPv4 addresses decide alone, whatever the entry's column says: the
# packets end up at that IPv4 host (the socket API unmaps ::ffff:a.b.c.d; SIIT, NAT64 and old
# IPv4-compatible tunnels translate; a 6to4 relay and a Teredo relay forward to it over IPv4).
# So 6to4 and Teredo holding only global IPv4 addresses are allowed, like the IPv4 host itself;
# the local-use NAT64 prefix 64:ff9b:1::/48 is not in this list: always blocked.
DECIDED_BY_EMBEDDED_IPV4: frozenset[ipaddress.IPv6Network] = frozenset(
    ipaddress.IPv6Network(cidr)
    for cidr in ("::ffff:0:0/96", "::ffff:0:0:0/96", "::/96", "64:ff9b::/96", "2002::/16", "2001::/32")
)

# Globally reachable per the registry, refused anyway (no web content can live there):
REFUSED_ALTHOUGH_REACHABLE: frozenset[Network] = frozenset(
    ipaddress.ip_network(cidr)
    for cidr in (
        # Anycast answered by the nearest operator's server: the local gateway, CGN or
        # enterprise relay (RFC 7723, RFC 8155, RFC 9665) — infrastructure of the local network.
        "192.0.0.9/32",
        "192.0.0.10/32",
        "2001:1::1/128",
        "2001:1::2/128",
        "2001:1::3/128",
        # Host identity tags (ORCHIDv2, RFC 7343; DETs are hierarchical HITs, RFC 9374):
        # identifiers for a HIP layer, "should not appear in actual IPv6 headers".
        "2001:20::/28",
        "2001:30::/28",
    )
)

_MAPPED = ipaddress.IPv6Network("::ffff:0:0/96")
_TRANSLATED = ipaddress.IPv6Network("::ffff:0:0:0/96")
_COMPATIBLE = ipaddress.IPv6Network("::/96")
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
_NAT64_LOCAL = ipaddress.IPv6Network("64:ff9b:1::/48")
_SIX_TO_FOUR = ipaddress.IPv6Network("2002::/16")
_TEREDO = ipaddress.IPv6Network("2001::/32")
_LOW32 = 0xFFFFFFFF


def _index(version: int) -> tuple[tuple[int, int, dict[int, Entry]], ...]:
    """(prefix length, mask, {network address: entry}) of one IP version, longest prefix first."""
    by_length: dict[int, dict[int, Entry]] = {}
    for entry in SPECIAL_PURPOSE:
        if entry.network.version == version:
            by_length.setdefault(entry.network.prefixlen, {})[int(entry.network.network_address)] = entry
    bits = 32 if version == 4 else 128
    return tuple(
        (length, ((1 << length) - 1) << (bits - length), by_length[length])
        for length in sorted(by_length, reverse=True)
    )


_INDEX = {4: _index(4), 6: _index(6)}


def parse_address(text: str) -> IPAddress | None:
    """The IP literal ``text`` (IPv6 also as ``[…]`` and with a ``%zone``, which is dropped), or None.

    Only the standard spellings count: ``127.1`` or ``0x7f.0.0.1`` are names (a resolver's
    answer for them is checked like any other)."""
    bracketed = text.startswith("[") and text.endswith("]")
    if bracketed:
        text = text[1:-1]
    address, percent, zone = text.partition("%")
    if percent and not zone:
        return None
    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:
        return None
    if parsed.version == 4 and (bracketed or percent):
        return None
    return parsed


def embedded_ipv4s(address: ipaddress.IPv6Address) -> tuple[ipaddress.IPv4Address, ...]:
    """Every IPv4 address ``address`` carries, the one its packets are delivered to first.

    IPv4-mapped ``::ffff:0:0/96``, -translated ``::ffff:0:0:0/96``, -compatible ``::/96`` (not
    ``::`` or ``::1``) and NAT64 ``64:ff9b::/96``: the low 32 bits. Local-use NAT64
    ``64:ff9b:1::/48``: the RFC 6052 layout for a /48 prefix (bits 48-63, then 72-87; bits
    64-71 are the zero octet), then the /96 layout, which RFC 8215 lets an operator use inside
    the /48. 6to4 ``2002::/16``: bits 16-47. Teredo ``2001::/32``: the client (bits 96-127
    inverted), then the server (bits 32-63)."""
    value = int(address)
    found: tuple[int, ...] = ()
    if address in _MAPPED or address in _TRANSLATED or address in _NAT64:
        found = (value & _LOW32,)
    elif address in _COMPATIBLE:
        found = (value & _LOW32,) if value > 1 else ()
    elif address in _NAT64_LOCAL:
        found = (((value >> 64) & 0xFFFF) << 16 | (value >> 40) & 0xFFFF, value & _LOW32)
    elif address in _SIX_TO_FOUR:
        found = ((value >> 80) & _LOW32,)
    elif address in _TEREDO:
        found = ((value & _LOW32) ^ _LOW32, (value >> 64) & _LOW32)
    return tuple(ipaddress.IPv4Address(one) for one in dict.fromkeys(found))


def embedded_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The first of :func:`embedded_ipv4s` (the host the packets reach), or None."""
    carried = embedded_ipv4s(address)
    return carried[0] if carried else None


def special_purpose_entry(address: IPAddress) -> Entry | None:
    """The most specific entry of :data:`SPECIAL_PURPOSE` holding ``address``, or None."""
    value = int(address)
    for _length, mask, networks in _INDEX[address.version]:
        entry = networks.get(value & mask)
        if entry is not None:
            return entry
    return None


def is_blocked(address: IPAddress) -> bool:
    """True when ``address`` must not be a destination (see the module's rule)."""
    if isinstance(address, ipaddress.IPv6Address):
        address = ipaddress.IPv6Address(int(address))  # a scope id changes nothing
        carried = embedded_ipv4s(address)
        if any(is_blocked(one) for one in carried):
            return True
    entry = special_purpose_entry(address)
    if entry is None:
        return False
    if entry.network in DECIDED_BY_EMBEDDED_IPV4:
        return False  # every carried IPv4 address is allowed (checked above)
    return entry.globally_reachable is not True or entry.network in REFUSED_ALTHOUGH_REACHABLE
