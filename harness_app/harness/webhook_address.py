"""Which addresses a webhook may reach: public internet addresses, plus the networks a
deployer allows explicitly (``HAT_WEBHOOK_ALLOWED_NETWORKS``).

A merchant-supplied URL must never reach the console's own network: loopback, private
(RFC 1918, CGNAT 100.64/10), link-local (169.254/16, where cloud metadata lives), unique-local
and link-local IPv6, unspecified, multicast and reserved ranges are refused, including IPv4
addresses hidden inside IPv6 (``::ffff:127.0.0.1``, 6to4, Teredo, NAT64). Save time checks
the URL text (literal addresses, well-known internal names); connect time checks every
address the host resolves to (``inference.tools.webhook``), so DNS cannot smuggle one in.
Pure Python: no Django, no network.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterable
from dataclasses import dataclass

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_SHARED = ipaddress.ip_network("100.64.0.0/10")
_LOOPBACK = (ipaddress.ip_address("127.0.0.1"), ipaddress.ip_address("::1"))
_METADATA = (ipaddress.ip_address("169.254.169.254"), ipaddress.ip_address("fd00:ec2::254"))
# Names that always mean the machine itself or the cloud metadata service, whatever DNS says.
_KNOWN_NAMES: dict[str, tuple[IPAddress, ...]] = {
    "localhost": _LOOPBACK,
    "localhost.localdomain": _LOOPBACK,
    "ip6-localhost": _LOOPBACK,
    "ip6-loopback": _LOOPBACK,
    "metadata": _METADATA,
    "metadata.google.internal": _METADATA,
    "instance-data": _METADATA,
    "instance-data.ec2.internal": _METADATA,
}


class AddressNotAllowed(Exception):
    """The webhook's host is, or resolves to, an address outside the allowed ones."""


def parse_networks(values: Iterable[str]) -> tuple[IPNetwork, ...]:
    """CIDR strings (``10.20.0.0/16``, ``127.0.0.1/32``) as networks; ValueError on a bad one."""
    return tuple(ipaddress.ip_network(v.strip(), strict=False) for v in values if v.strip())


def _embedded_ipv4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip.teredo is not None:
        return ip.teredo[1]
    if ip in _NAT64:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


def _is_public(ip: IPAddress) -> bool:
    if isinstance(ip, ipaddress.IPv6Address):
        inner = _embedded_ipv4(ip)
        if inner is not None and not _is_public(inner):
            return False
    return ip.is_global and not (
        ip.is_multicast
        or ip.is_private
        or ip.is_loopback
        or ip.is_link_local
        or ip.is_reserved
        or ip.is_unspecified
    )


@dataclass(frozen=True)
class AddressPolicy:
    """Public addresses, plus ``allowed_networks`` (a production network, or loopback in
    tests). An address inside an allowed network is allowed even if it is private."""

    allowed_networks: tuple[IPNetwork, ...] = ()

    def allows(self, ip: IPAddress) -> bool:
        candidates = [ip]
        if isinstance(ip, ipaddress.IPv6Address):
            inner = _embedded_ipv4(ip)
            if inner is not None:
                candidates.append(inner)
        for candidate in candidates:
            for network in self.allowed_networks:
                if candidate.version == network.version and candidate in network:
                    return True
        return _is_public(ip)

    def check_resolved(self, addresses: Iterable[str]) -> list[str]:
        """``addresses`` (all of them must be allowed), or AddressNotAllowed."""
        checked = []
        for text in addresses:
            ip = ipaddress.ip_address(text.split("%", 1)[0])  # drop an IPv6 zone id
            if not self.allows(ip):
                raise AddressNotAllowed(str(ip))
            checked.append(str(ip))
        if not checked:
            raise AddressNotAllowed("no address")
        return checked

    def host_problem(self, host: str) -> str:
        """Why ``host`` (a URL's host, as typed) is refused without resolving it, or ""."""
        name = host.strip().strip("[]").rstrip(".").lower()
        addresses = literal_addresses(name)
        if addresses is None:
            loopback_name = name.endswith(".localhost")
            addresses = _LOOPBACK if loopback_name else _KNOWN_NAMES.get(name, ())
        for ip in addresses:
            if not self.allows(ip):
                return (
                    f"webhook host {host!r} is an internal address ({describe(ip)}); webhooks "
                    f"may only call public addresses or the networks the operator allows"
                )
        return ""


def literal_addresses(host: str) -> tuple[IPAddress, ...] | None:
    """The address ``host`` spells, if it is a literal: dotted or IPv6, and also the legacy
    IPv4 spellings the resolver accepts (``127.1``, ``2130706433``, ``0x7f.0.0.1``)."""
    try:
        return (ipaddress.ip_address(host.split("%", 1)[0]),)
    except ValueError:
        pass
    if host and all(c in "0123456789abcdefx." for c in host) and host[0].isdigit():
        try:
            return (ipaddress.IPv4Address(socket.inet_aton(host)),)
        except OSError:
            return None
    return None


def describe(ip: IPAddress) -> str:
    inner = _embedded_ipv4(ip) if isinstance(ip, ipaddress.IPv6Address) else None
    if inner is not None and inner != ip:
        return f"{ip}, which is {describe(inner)}"
    for label, flag in (
        ("unspecified", ip.is_unspecified),
        ("loopback", ip.is_loopback),
        ("link-local", ip.is_link_local),
        ("multicast", ip.is_multicast),
        ("shared (CGNAT)", ip.version == 4 and ip in _SHARED),
        ("private", ip.is_private),
        ("reserved", ip.is_reserved),
    ):
        if flag:
            return f"{ip}, {label}"
    return f"{ip}, not a public address"
