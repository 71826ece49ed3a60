"""Which TCP/UDP sockets a set of processes holds, read from /proc (no psutil): to prove nothing leaves loopback."""

from __future__ import annotations

import ipaddress
import os
import socket
import struct
from pathlib import Path


def descendants(root: int) -> set[int]:
    """Every live process whose parent chain leads to `root` (not `root` itself)."""
    parent: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        parent[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    found: set[int] = set()
    for pid in parent:
        p = pid
        while p in parent and p not in (0, 1):
            p = parent[p]
            if p == root:
                found.add(pid)
                break
    return found


def _socket_inodes(pid: int) -> set[str]:
    inodes: set[str] = set()
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return inodes
    for fd in fds:
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    return inodes


def _address(hex_addr: str) -> str:
    host, port = hex_addr.split(":")
    raw = bytes.fromhex(host)
    if len(raw) == 4:
        return f"{socket.inet_ntop(socket.AF_INET, raw[::-1])}:{int(port, 16)}"
    words = struct.unpack("<4I", raw)  # /proc prints IPv6 as four host-order 32-bit words
    return f"[{socket.inet_ntop(socket.AF_INET6, struct.pack('>4I', *words))}]:{int(port, 16)}"


def inet_sockets(pids: set[int]) -> list[tuple[int, str, str, str]]:
    """(pid, protocol, local, remote) of every IPv4/IPv6 TCP and UDP socket the processes hold."""
    by_inode = {inode: pid for pid in pids for inode in _socket_inodes(pid)}
    out: list[tuple[int, str, str, str]] = []
    for proto in ("tcp", "tcp6", "udp", "udp6"):
        seen: set[str] = set()
        for pid in sorted(pids):
            try:
                lines = Path(f"/proc/{pid}/net/{proto}").read_text().splitlines()[1:]
            except OSError:
                continue
            for line in lines:
                fields = line.split()
                inode = fields[9]
                if inode in by_inode and inode not in seen:
                    seen.add(inode)
                    out.append((by_inode[inode], proto, _address(fields[1]), _address(fields[2])))
            break  # one network namespace: every process sees the same table
    return out


def is_loopback(address: str) -> bool:
    """127.0.0.0/8, ::1 or ::ffff:127.x; an unconnected peer (0.0.0.0:0 / [::]:0) counts as no peer."""
    host, port = address.rsplit(":", 1)
    ip = ipaddress.ip_address(host.strip("[]"))
    if ip.is_unspecified and port == "0":
        return True
    mapped = getattr(ip, "ipv4_mapped", None)
    return bool((mapped or ip).is_loopback)
