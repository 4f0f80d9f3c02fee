# SPDX-License-Identifier: BSD-3-Clause
"""Telemetry from Python test code: one host's DPDK telemetry socket, kept open.

The protocol is sluice-telemetry's (app/sluice-telemetry/main.c): a greeting that names the
largest reply, then one command per message and one {"<command>": <data>} reply. A test that
polls often or snapshots many QPs at once keeps one connection per host instead of starting a
process per query.
"""
import json
import socket


class Tel:
    """The telemetry socket of the sluiced started with EAL --file-prefix `prefix` (as root)."""

    def __init__(self, prefix, timeout_s=2.0):
        self.s = None
        self.timeout_s = timeout_s
        self.path = f"/var/run/dpdk/{prefix}/dpdk_telemetry.v2"

    def query(self, cmd):
        """The data of the reply to cmd, or None while the host does not answer."""
        try:
            if self.s is None:
                s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
                s.settimeout(self.timeout_s)
                s.connect(self.path)
                self.max = json.loads(s.recv(1 << 16).decode()).get("max_output_len", 1 << 16)
                self.s = s
            self.s.send(cmd.encode())
            return json.loads(self.s.recv(self.max).decode())[cmd.split(",")[0]]
        except (OSError, ValueError, KeyError):
            if self.s is not None:
                self.s.close()
            self.s = None
            return None
