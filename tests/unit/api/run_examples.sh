#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# run_examples.sh H_SLUICED PINGPONG WRITE_IMM READ: each example as a server and a client, two
# processes on one fake daemon (h_sluiced), over the loopback out-of-band exchange; both sides
# must exit 0 (every byte and immediate checked).
set -euo pipefail
fake=$1 pingpong=$2 write_imm=$3 read=$4
dir=$(mktemp -d /tmp/sl_examples.XXXXXX)
sock=$dir/sluiced.sock
"$fake" "$sock" >"$dir/fake.out" & fake_pid=$!
trap 'kill $fake_pid 2>/dev/null; wait $fake_pid 2>/dev/null; rm -rf "$dir"' EXIT
# Not the socket file: it appears at bind(), and a client connecting before listen() is refused.
for _ in $(seq 200); do grep -q listening "$dir/fake.out" && break; sleep 0.05; done

run() { # run NAME BINARY ARGS...: server and client
	local name=$1 bin=$2 port=$((20000 + RANDOM % 40000)) server_pid
	shift 2
	"$bin" -S "$sock" -p "$port" "$@" & server_pid=$!
	if ! "$bin" -S "$sock" -p "$port" "$@" 127.0.0.1; then
		echo "$name: the client failed" >&2
		kill "$server_pid" 2>/dev/null
		exit 1
	fi
	wait "$server_pid" || { echo "$name: the server failed" >&2; exit 1; }
}

run pingpong "$pingpong" -s 4096 -n 500
run pingpong-1B "$pingpong" -s 1 -n 50
run write_imm "$write_imm" -s 100000
run read "$read" -s 65536
echo "examples: all passed"
