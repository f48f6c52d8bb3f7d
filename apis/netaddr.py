"""Listen addresses: ``host:port`` parsed as Go's ``net.SplitHostPort`` reads it, and the URL a client on this
machine reaches a bound server at (what a program announces once it listens)."""

from __future__ import annotations

__all__ = ["local_url", "parse_address"]

_WILDCARD_TO_LOOPBACK = {"0.0.0.0": "127.0.0.1", "": "127.0.0.1", "::": "::1"}


def parse_address(address: str) -> tuple[str, int]:
    """``host:port`` → ``(host, port)``, as Go's ``net.SplitHostPort``: ``:8080`` = all interfaces, an IPv6 host must
    be bracketed (``[::1]:8080``), the port is 0..65535 in plain digits (0: the system picks a free one)."""
    if not isinstance(address, str) or ":" not in address:
        raise ValueError(f"invalid address {address!r}: expected host:port")
    if address.startswith("["):
        host, sep, port_text = address[1:].partition("]:")
        if not sep or not host or "]" in host or "[" in host:
            raise ValueError(f"invalid address {address!r}: expected [ipv6-host]:port")
    else:
        host, _, port_text = address.rpartition(":")
        if ":" in host or "[" in host or "]" in host:
            raise ValueError(f"invalid address {address!r}: an IPv6 host must be in brackets, e.g. [::1]:8080")
    if not (port_text.isascii() and port_text.isdigit()):
        raise ValueError(f"invalid address {address!r}: port {port_text!r} is not a number")
    port = int(port_text)
    if port > 65535:
        raise ValueError(f"invalid address {address!r}: port out of range 0..65535")
    return host or "0.0.0.0", port


def local_url(scheme: str, host: str, port: int) -> str:
    """``scheme://host:port`` a client on this machine connects to: a wildcard host becomes the loopback address of
    its family; an IPv6 host is bracketed."""
    host = _WILDCARD_TO_LOOPBACK.get(host, host)
    return f"{scheme}://[{host}]:{port}" if ":" in host else f"{scheme}://{host}:{port}"
