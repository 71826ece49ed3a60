"""`mhcdoctor fleet` input errors: one line on stderr and exit 2, in well under Ray's own connection retries."""

from __future__ import annotations

import socket
import time

import doctor


def _free_loopback_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_no_cluster_at_the_address_is_one_line_and_exit_2() -> None:
    address = f"127.0.0.1:{_free_loopback_port()}"
    start = time.monotonic()
    proc = doctor.spawn("fleet", "--address", address, "--json", timeout=60)
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr.splitlines() == [
        f"mhcdoctor: error: no Ray cluster at {address}: Connection refused (start one with `ray start --head`)"
    ]
    assert time.monotonic() - start < 15


def test_an_address_without_a_port_number_is_one_line_and_exit_2() -> None:
    proc = doctor.run("fleet", "--address", "127.0.0.1:head")
    assert (proc.returncode, proc.stderr) == (2, "mhcdoctor: error: --address 127.0.0.1:head is not HOST:PORT\n")
