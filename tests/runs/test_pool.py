"""A Ray address is tried before anything is written: one that does not answer fails
within the time given, naming the address."""

from __future__ import annotations

import socket
import time

import pytest

from agentproc.errors import ConfigError
from agentproc.runs.pool import answers


def test_an_address_something_listens_at_answers():
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        answers(f"127.0.0.1:{port}", 2)
        answers(f"ray://127.0.0.1:{port}", 2)
    answers("auto", 0.1)  # left to Ray: a cluster found on this machine


def test_an_address_nothing_listens_at_fails_at_once():
    start = time.monotonic()
    with pytest.raises(ConfigError, match=r"--address 127\.0\.0\.1:1: no Ray cluster answers"):
        answers("127.0.0.1:1", 5)
    assert time.monotonic() - start < 5


@pytest.mark.parametrize("address", ["nohost", "127.0.0.1", "127.0.0.1:port", ":6379"])
def test_an_address_that_is_not_host_and_port_is_refused(address):
    with pytest.raises(ConfigError, match="expected host:port"):
        answers(address, 1)
