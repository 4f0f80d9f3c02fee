# SPDX-License-Identifier: BSD-3-Clause
# hosts.sh - two-host topologies for sluice's integration tests and demo. Source it, then:
#
#   sl_require_root                      exit 77 ("skipped: needs root") unless root
#   sl_topo_veth                         hosts a and b: two netns joined by a veth pair
#   sl_topo_router                       hosts a and b in two subnets through a router netns
#   sl_start a CONFIG KIND [EAL...] [-- DAEMON_ARGS...]
#                                        start sluiced as host a; KIND is af_xdp, af_packet,
#                                        memif_server or memif_client (the port's --vdev);
#                                        on its own core (a: 0, b: 1) unless EAL names lcores;
#                                        memory is --no-huge -m 512 unless SL_EAL_MEM says
#                                        otherwise (e.g. "--huge-dir DIR -m 256"); SL_WRAP
#                                        runs it under a tool (e.g. "valgrind --tool=callgrind")
#   sl_wait_peer_up a TIMEOUT_S          wait until host a reports its peer up
#   sl_start_memif_pair                  b (memif server, core 1) then a (client, core 0) from
#                                        $SL_TMP/{a,b}.ini, both ready and a's peer up
#   sl_tel a COMMAND [KEY]               one telemetry query to host a
#   sl_stacks a                          host a's threads' stacks (gdb, when installed)
#   sl_stop a                            SIGTERM, wait, check exit 0; report in $SL_TMP/a.out
#   sl_report_field a KEY                a field of host a's exit report (JSON)
#   SL_AT_EXIT+=(COMMAND)                undo a test's own set-up at exit, after the daemons
#
# Everything is removed on exit (trap): daemons killed, namespaces deleted. On failure the
# daemons' logs are printed. Every wait has a timeout. Each process gets a unique
# --file-prefix, each run unique namespace names, so runs never collide.
set -euo pipefail

SL_BUILD=${SLUICE_BUILD_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)/build}
SL_SRC=${SLUICE_SOURCE_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)}
SL_SLUICED=$SL_BUILD/app/sluiced/sluiced
SL_TELEMETRY=$SL_BUILD/app/sluice-telemetry/sluice-telemetry
SL_XDP_PROG=$SL_BUILD/drivers/bpf/xdp_steer.o
SL_ID=sl$$
SL_TMP=$(mktemp -d "/tmp/sluice-$SL_ID.XXXX")
SL_NS_LIST=()
declare -A SL_PID SL_NS SL_IF SL_MAC SL_IP
SL_OK=0
SL_FAILED=

sl_log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
# A failure's reason is said again after the daemons' logs (sl_cleanup): a CI log is read from its
# end, and make test shows a failed test's last lines only.
sl_fail() { SL_FAILED=$*; sl_log "FAIL: $*"; exit 1; }

sl_require_root() {
    if [ "$(id -u)" -ne 0 ]; then
        echo "skipped: needs root (network namespaces, AF_XDP)"
        exit 77
    fi
}

# Commands a test adds for its own set-up (a mount, a sysctl), run at exit once the daemons are
# gone; each may fail without hiding the test's status. A test that sources this file sets no
# EXIT trap of its own.
SL_AT_EXIT=()

sl_cleanup() {
    local rc=$? c
    for h in "${!SL_PID[@]}"; do
        kill -KILL "${SL_PID[$h]}" 2>/dev/null || true
    done
    # Daemons started in a subshell ($(...) of a script's function) are not in SL_PID here, and
    # a subshell that fails runs no EXIT trap: every process of this run's file prefixes goes.
    pkill -KILL -f -- "--file-prefix $SL_ID-" 2>/dev/null || true
    # The daemons are reaped before the test's own undoing; everything else after it, since
    # what a test started in the background (an attacker told to stop by SIGTERM) may run
    # until its SL_AT_EXIT command stops it.
    # ("${#SL_PID[@]}" is an unbound variable to set -u before the first daemon starts.)
    if [ -n "${SL_PID[*]-}" ]; then
        wait "${SL_PID[@]}" 2>/dev/null || true
    fi
    for c in "${SL_AT_EXIT[@]}"; do
        eval "$c" || true
    done
    wait 2>/dev/null || true
    if [ "$rc" -ne 0 ] && [ "$SL_OK" -eq 0 ]; then
        for f in "$SL_TMP"/*.log "$SL_TMP"/*.out; do
            [ -s "$f" ] || continue
            echo "---- $f" >&2
            tail -n 40 "$f" >&2
        done
        [ -z "$SL_FAILED" ] || sl_log "FAIL (said above, before the logs): $SL_FAILED"
    fi
    for ns in "${SL_NS_LIST[@]}"; do
        ip netns del "$ns" 2>/dev/null || true
    done
    # A daemon killed above leaves its interface claim (lib/dp/xdp_claim.c) unlocked behind.
    rm -rf "$SL_TMP" "/var/run/dpdk/$SL_ID"-* /run/sluice/xdp-*-"$SL_ID"-*.lock 2>/dev/null || true
    exit "$rc"
}
trap sl_cleanup EXIT
trap 'exit 130' INT TERM

# Hosts a and b in their own namespaces, a veth pair between them, with MAC and IPv4 addresses
# (the IPs let tests show the kernel stack keeps working beside sluice).
sl_topo_veth() {
    local a=$SL_ID-a b=$SL_ID-b
    ip netns add "$a"; SL_NS_LIST+=("$a")
    ip netns add "$b"; SL_NS_LIST+=("$b")
    ip link add "$SL_ID-va" type veth peer name "$SL_ID-vb"
    ip link set "$SL_ID-va" netns "$a"
    ip link set "$SL_ID-vb" netns "$b"
    SL_NS[a]=$a; SL_IF[a]=$SL_ID-va; SL_MAC[a]=02:00:00:00:00:0a; SL_IP[a]=10.199.0.1
    SL_NS[b]=$b; SL_IF[b]=$SL_ID-vb; SL_MAC[b]=02:00:00:00:00:0b; SL_IP[b]=10.199.0.2
    for h in a b; do
        ip -n "${SL_NS[$h]}" link set lo up
        ip -n "${SL_NS[$h]}" link set "${SL_IF[$h]}" address "${SL_MAC[$h]}"
        ip -n "${SL_NS[$h]}" addr add "${SL_IP[$h]}/30" dev "${SL_IF[$h]}"
        ip -n "${SL_NS[$h]}" link set "${SL_IF[$h]}" up
    done
}

# Hosts a and b in two subnets, each joined by a veth pair to a router namespace r that forwards
# between them (kernel IPv4 forwarding): a 10.199.1.0/24 on r's ra, b 10.199.2.0/24 on r's rb.
# The hosts' kernel interfaces hold no address (their sluiced owns SL_IP[h], the kernel must not
# answer its frames) and no IPv6. Each host's router address is SL_GW[h] (its MAC SL_GW_MAC[h]);
# r finds the hosts' sluiced addresses by ARP, which sluiced answers (lib/dp/neigh.c).
declare -A SL_GW_MAC SL_GW
SL_NS_R=
sl_topo_router() {
    local a=$SL_ID-a b=$SL_ID-b r=$SL_ID-r h
    SL_NS_R=$r
    for ns in "$a" "$b" "$r"; do
        ip netns add "$ns"; SL_NS_LIST+=("$ns")
        ip -n "$ns" link set lo up
    done
    SL_NS[a]=$a; SL_IF[a]=$SL_ID-va; SL_MAC[a]=02:00:00:00:00:0a; SL_IP[a]=10.199.1.1
    SL_NS[b]=$b; SL_IF[b]=$SL_ID-vb; SL_MAC[b]=02:00:00:00:00:0b; SL_IP[b]=10.199.2.1
    SL_GW_MAC[a]=02:00:00:00:01:0a SL_GW_MAC[b]=02:00:00:00:01:0b
    for h in a b; do
        ip link add "${SL_IF[$h]}" type veth peer name "$SL_ID-r$h"
        ip link set "${SL_IF[$h]}" netns "${SL_NS[$h]}"
        ip link set "$SL_ID-r$h" netns "$r"
        ip netns exec "${SL_NS[$h]}" sysctl -qw "net.ipv6.conf.${SL_IF[$h]}.disable_ipv6=1"
        ip -n "${SL_NS[$h]}" link set "${SL_IF[$h]}" address "${SL_MAC[$h]}" up
        ip netns exec "$r" sysctl -qw "net.ipv6.conf.$SL_ID-r$h.disable_ipv6=1"
        ip -n "$r" link set "$SL_ID-r$h" address "${SL_GW_MAC[$h]}" up
    done
    SL_GW[a]=10.199.1.254 SL_GW[b]=10.199.2.254
    ip -n "$r" addr add "${SL_GW[a]}/24" dev "$SL_ID-ra"
    ip -n "$r" addr add "${SL_GW[b]}/24" dev "$SL_ID-rb"
    ip netns exec "$r" sysctl -qw net.ipv4.ip_forward=1
}

# Hosts a and b as two processes in this namespace, joined by memif over a unix socket.
sl_topo_memif() {
    SL_NS[a]=""; SL_NS[b]=""
}

# The --vdev argument for host h's port of the given kind (SL_MEMIF_ARGS: more memif devargs,
# e.g. ",rsize=14"; SL_AF_PACKET_ARGS: more AF_PACKET devargs, e.g. ",framecnt=1024").
sl_vdev() {
    local h=$1 kind=$2
    case $kind in
        af_xdp) echo "net_af_xdp0,iface=${SL_IF[$h]},xdp_prog=$SL_XDP_PROG" ;;
        af_packet) echo "net_af_packet0,iface=${SL_IF[$h]}${SL_AF_PACKET_ARGS:-}" ;;
        memif_server) echo "net_memif0,role=server,id=0,socket=$SL_TMP/memif.sock${SL_MEMIF_ARGS:-}" ;;
        memif_client) echo "net_memif0,role=client,id=0,socket=$SL_TMP/memif.sock${SL_MEMIF_ARGS:-}" ;;
        *) sl_fail "unknown port kind $kind" ;;
    esac
}

# sl_start HOST CONFIG KIND [EAL ARGS...] [-- DAEMON ARGS...]
sl_start() {
    local h=$1 config=$2 kind=$3
    shift 3
    local eal=() extra=()
    while [ $# -gt 0 ] && [ "$1" != "--" ]; do eal+=("$1"); shift; done
    [ $# -gt 0 ] && shift
    # Each host on a core of its own unless told otherwise: two busy-polling daemons on one
    # core run by turns of the kernel's time slice (about 4 ms each here), and every exchange
    # between them (a NACK and its replay) then waits for the other's turn.
    case " ${eal[*]} " in
        *" -l "* | *" --lcores "* | *" --lcores="* | *" -c "*) ;;
        *) eal=(-l "$(sl_core "$h")" "${eal[@]}") ;;
    esac
    extra=("$@")
    local prefix=$SL_ID-$h
    local mem
    read -r -a mem <<<"${SL_EAL_MEM:---no-huge -m 512}"
    local wrap=()
    read -r -a wrap <<<"${SL_WRAP:-}"
    local cmd=("${wrap[@]}" "$SL_SLUICED" "${mem[@]}" --no-pci --file-prefix "$prefix"
               --log-level=lib.eal:error --vdev "$(sl_vdev "$h" "$kind")" "${eal[@]}"
               -- --config "$config" "${extra[@]}")
    if [ -n "${SL_NS[$h]:-}" ]; then
        cmd=(ip netns exec "${SL_NS[$h]}" "${cmd[@]}")
    fi
    rm -f "$SL_TMP/$h.fields"
    "${cmd[@]}" >"$SL_TMP/$h.out" 2>"$SL_TMP/$h.log" &
    SL_PID[$h]=$!
    sl_log "started host $h ($kind, pid ${SL_PID[$h]}, prefix $prefix)"
}

sl_prefix() { echo "$SL_ID-$1"; }

# sl_stacks HOST: every thread's stack of host h's daemon, when gdb is there (a stall's
# diagnosis: where a lane or the control thread is).
sl_stacks() {
    command -v gdb >/dev/null || { sl_log "$1: no gdb: no stacks"; return 0; }
    timeout 30 gdb -p "${SL_PID[$1]}" -batch -nx -ex "thread apply all bt 12" 2>/dev/null |
        grep -E '^(Thread|#)' | sed "s/^/$1: /" >&2 || true
}

# The core host h runs on by default: a on 0, b on 1 (0 on a machine with one core).
sl_core() {
    if [ "$1" = b ] && [ "$(nproc)" -ge 2 ]; then echo 1; else echo 0; fi
}

sl_tel() {
    local h=$1; shift
    "$SL_TELEMETRY" "$(sl_prefix "$h")" "$@"
}

# sl_try_ready HOST TIMEOUT_S: 0 once host h answers telemetry (its ports are started),
# 1 if it exits or does not answer in time.
sl_try_ready() {
    local h=$1 timeout_s=$2 i
    for i in $(seq $((timeout_s * 20))); do
        kill -0 "${SL_PID[$h]}" 2>/dev/null || return 1
        sl_tel "$h" /sluice/info name >/dev/null 2>&1 && return 0
        sleep 0.05
    done
    return 1
}

sl_wait_ready() {
    sl_try_ready "$1" "$2" || sl_fail "host $1 not ready within $2 s (or exited)"
}

# Wait until host h answers telemetry and reports its peer up on port 0.
sl_wait_peer_up() {
    local h=$1 timeout_s=$2 t0 state
    t0=$(date +%s%N)
    while :; do
        kill -0 "${SL_PID[$h]}" 2>/dev/null || sl_fail "host $h exited before its peer came up"
        state=$(sl_tel "$h" /sluice/ports p0/peer_state 2>/dev/null || true)
        if [ "$state" = "up" ]; then
            SL_LAST_WAIT_MS=$(( ($(date +%s%N) - t0) / 1000000 ))
            sl_log "host $h: peer up after ${SL_LAST_WAIT_MS} ms"
            return 0
        fi
        [ $(( ($(date +%s%N) - t0) / 1000000 )) -lt $((timeout_s * 1000)) ] ||
            sl_fail "host $h: peer not up within ${timeout_s} s"
        sleep 0.05
    done
}

# sl_start_memif_pair: the memif pair of $SL_TMP/a.ini and b.ini, b first (it serves the
# socket), each on its own core, started and linked (10 s each step).
sl_start_memif_pair() {
    sl_start b "$SL_TMP/b.ini" memif_server -l 1
    sl_wait_ready b 10
    sl_start a "$SL_TMP/a.ini" memif_client -l 0
    sl_wait_ready a 10
    sl_wait_peer_up a 10
}

# sl_stop HOST [SIGNAL]: signal host h (default TERM), wait up to 10 s, require exit status 0.
sl_stop() {
    local h=$1 sig=${2:-TERM}
    kill -"$sig" "${SL_PID[$h]}"
    sl_reap "$h" 10 "within 10 s of SIG$sig" "after SIG$sig"
    sl_log "host $h stopped cleanly"
}

# sl_wait_exit HOST TIMEOUT_S: host h stops by itself (sluiced --exit-when-done or
# --duration-s) within TIMEOUT_S with exit status 0. No telemetry polls meanwhile: each is a
# Python process that takes a core from a daemon for about 0.1 s.
sl_wait_exit() {
    sl_reap "$1" "$2" "by itself within $2 s" ""
    sl_log "host $1 stopped by itself"
}

# sl_reap HOST TIMEOUT_S WHEN HOW: wait up to TIMEOUT_S for host h to exit, then require exit
# status 0 (the failures say "did not stop WHEN", "exited with status N HOW").
sl_reap() {
    local h=$1 timeout_s=$2 pid=${SL_PID[$1]} rc=0 i
    for i in $(seq $((timeout_s * 10))); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    kill -0 "$pid" 2>/dev/null && sl_fail "host $h did not stop $3"
    wait "$pid" || rc=$?
    rm -f "$SL_TMP/$h.fields"
    unset "SL_PID[$h]"
    [ "$rc" -eq 0 ] || sl_fail "host $h exited with status $rc${4:+ $4}"
}

# A field of host h's exit report (the JSON lines sluiced prints at exit: ports and links,
# then the test traffic summary when traffic runs). The report is read once into
# $SL_TMP/h.fields (a key and its value a line, the first line that has the key winning):
# a test reads tens of fields, and each Python start costs a core tenths of a second here.
sl_report_field() {
    local out=$SL_TMP/$1.out fields=$SL_TMP/$1.fields
    if [ ! -e "$fields" ] || [ "$out" -nt "$fields" ]; then
        python3 - "$out" "$fields" <<'PY' || return 1
import json, sys
fields = {}
for line in open(sys.argv[1]):
    if line.startswith("{"):
        for k, v in json.loads(line).items():
            fields.setdefault(k, v)
with open(sys.argv[2] + ".new", "w") as f:
    for k, v in fields.items():
        f.write(f"{k}\t{v}\n")
PY
        mv "$fields.new" "$fields"
    fi
    awk -F'\t' -v k="$2" '$1 == k { print $2; found = 1; exit } END { exit !found }' "$fields" ||
        { echo "no field $2 in $out" >&2; return 1; }
}

# sl_device KIND: the DPDK device name a port of that kind gets.
sl_device() {
    case $1 in
        af_xdp) echo net_af_xdp0 ;;
        af_packet) echo net_af_packet0 ;;
        memif_*) echo net_memif0 ;;
    esac
}

# sl_config HOST KIND [LINE...]: write a config for host h with one port of the given kind
# to $SL_TMP/h.ini and print its path; extra lines follow "[sluiced]" and "name = host-h" (they
# may open other sections, e.g. "[link]" "keepalive_us = 1000").
sl_config() {
    local h=$1 kind=$2; shift 2
    {
        echo "[sluiced]"
        echo "name = host-$h"
        for line in "$@"; do echo "$line"; done
        echo "[port.0]"
        echo "device = $(sl_device "$kind")"
    } >"$SL_TMP/$h.ini"
    echo "$SL_TMP/$h.ini"
}

sl_pass() { SL_OK=1; echo "PASS: $*"; }
