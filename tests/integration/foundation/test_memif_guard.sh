#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The memif guard's premise (lib/dp/memif_guard.c), on the PMD itself: a memif server holds the
# lock the guard found while its client is killed with SIGKILL; the PMD must keep the client's
# shared memory mapped in the server until the lock is let go, and a burst meanwhile must
# return nothing. Then the control: without the lock, the memory goes as soon as the link is
# down. (memif_guard_check.c prints what it counted.)
source "$(dirname "$0")/../lib/hosts.sh"
sl_require_root
check=$SL_BUILD/tests/integration/foundation/memif_guard_check
[ -x "$check" ] || sl_fail "$check not built"

run() { # run [--no-guard]: one server and one client; the server's exit status
    local sock=$SL_TMP/memif-$#.sock server client rc=0
    "$check" --no-huge -m 256 --no-pci --file-prefix "$SL_ID-s" --log-level=lib.eal:error \
        --vdev "net_memif0,role=server,id=0,socket=$sock" -l 0 -- server "$@" \
        >"$SL_TMP/server.out" 2>"$SL_TMP/server.log" &
    server=$!
    # DPDK's memif client does not retry a socket that refuses it: wait for the server to say
    # it listens (the socket file appears at bind, before the listen).
    for _ in $(seq 300); do
        grep -q listening "$SL_TMP/server.out" 2>/dev/null && break
        kill -0 "$server" 2>/dev/null || break
        sleep 0.1
    done
    "$check" --no-huge -m 256 --no-pci --file-prefix "$SL_ID-c" --log-level=lib.eal:error \
        --vdev "net_memif0,role=client,id=0,socket=$sock" -l 1 -- client \
        >"$SL_TMP/client.out" 2>"$SL_TMP/client.log" &
    client=$!
    for _ in $(seq 100); do
        grep -q holding "$SL_TMP/server.out" 2>/dev/null && break
        kill -0 "$server" 2>/dev/null || break
        sleep 0.1
    done
    grep -q holding "$SL_TMP/server.out" ||
        { cat "$SL_TMP/server.log" >&2; kill -KILL "$client"; sl_fail "the server never connected"; }
    kill -KILL "$client"
    wait "$client" 2>/dev/null || true
    wait "$server" || rc=$?
    grep '^{' "$SL_TMP/server.out" || cat "$SL_TMP/server.log" >&2
    return "$rc"
}
run || sl_fail "with the lock held, the PMD unmapped the peer's memory (or a burst read it)"
run --no-guard || sl_fail "control: without the lock the peer's memory stayed mapped"
echo "PASS: the PMD unmaps a killed peer's memory only once the guard's lock is free"
