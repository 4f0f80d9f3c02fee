# SPDX-License-Identifier: BSD-3-Clause
# Helpers for the net_impair integration tests: run dpdk-testpmd with the PMD loaded from the
# build tree (EAL -d), feed it commands, read counters back. Sourced by test_*.sh.

IMPAIR_SO="${SLUICE_BUILD_ROOT:?}/drivers/net/impair/librte_net_impair.so"
TESTPMD="${TESTPMD:-dpdk-testpmd}"

impair_require() {
	if ! command -v "$TESTPMD" >/dev/null || ! command -v dpdk-telemetry.py >/dev/null; then
		echo "SKIP: $TESTPMD or dpdk-telemetry.py not installed (Debian package dpdk)"
		exit 77
	fi
	if [ ! -f "$IMPAIR_SO" ]; then
		echo "FAIL: $IMPAIR_SO not built"
		exit 1
	fi
	impair_plugin_path
}

# EAL loads no plugin (-d) from a directory with a world-writable ancestor (a tree cloned under
# /tmp, say): copy the PMD into a private directory under /run; the caller's EXIT trap removes
# $IMPAIR_PLUGIN_DIR.
impair_plugin_path() {
	local d
	d=$(dirname "$IMPAIR_SO")
	while [ "$d" != / ]; do
		if [ -n "$(find "$d" -maxdepth 0 -perm -o+w)" ]; then
			IMPAIR_PLUGIN_DIR=$(mktemp -d /run/sluice-impair.XXXXXX) || {
				echo "FAIL: $IMPAIR_SO sits under world-writable $d, and /run is not writable"
				exit 1
			}
			chmod 755 "$IMPAIR_PLUGIN_DIR"
			cp "$IMPAIR_SO" "$IMPAIR_PLUGIN_DIR/"
			IMPAIR_SO=$IMPAIR_PLUGIN_DIR/$(basename "$IMPAIR_SO")
			return
		fi
		d=$(dirname "$d")
	done
}

# A sanitizer build of the PMD needs its runtimes loaded first in the (uninstrumented) testpmd.
impair_preload() {
	ldd "$IMPAIR_SO" | awk '/lib(asan|ubsan)\.so/ { printf "%s%s", sep, $3; sep = ":" }'
}

# impair_testpmd <file-prefix> <script> <vdev args...>: run testpmd interactively; <script> is a
# shell function that prints the commands (it may sleep between them). Output on stdout.
impair_testpmd() {
	local prefix=$1 script=$2
	shift 2
	local vdevs=()
	for v in "$@"; do
		vdevs+=(--vdev "$v")
	done
	"$script" | LD_PRELOAD="$(impair_preload)" ASAN_OPTIONS="detect_leaks=0:${ASAN_OPTIONS:-}" \
		timeout 120 "$TESTPMD" --no-huge -m 512 --no-pci --file-prefix "$prefix" \
		-l 0-1 --log-level=lib.eal:warning -d "$IMPAIR_SO" "${vdevs[@]}" -- \
		-i --total-num-mbufs 8192 --forward-mode=io 2>&1
}

# impair_xstat <output> <name>: the value of one xstat from the last "show port xstats".
impair_xstat() {
	awk -v k="$2:" '$1 == k { v = $2 } END { print v }' <<<"$1"
}

# impair_tel <file-prefix> <command>: one telemetry query, the reply's JSON on stdout.
impair_tel() {
	echo "$2" | dpdk-telemetry.py -f "$1" 2>/dev/null
}

# impair_wait_xstat <file-prefix> <port> <name> <min> <timeout_s>: poll the port's xstats over
# telemetry until <name> reaches <min> (forwarding speed on a loaded 2-core machine varies by
# orders of magnitude); returns 1 on timeout. For use inside a commands function.
impair_wait_xstat() {
	local prefix=$1 port=$2 name=$3 min=$4 timeout_s=$5 t0=$SECONDS v
	while [ $((SECONDS - t0)) -lt "$timeout_s" ]; do
		v=$(impair_tel "$prefix" "/ethdev/xstats,$port" | python3 -c '
import json, sys
try:
    print(json.load(sys.stdin)["/ethdev/xstats"].get(sys.argv[1], 0))
except Exception:
    print(0)' "$name")
		[ "$v" -ge "$min" ] && return 0
		sleep 0.3
	done
	return 1
}

# impair_in_ci <k> <n> <p>: is k events in n trials inside the 99.9% binomial interval of p?
impair_in_ci() {
	awk -v k="$1" -v n="$2" -v p="$3" 'BEGIN {
		m = n * p; sd = sqrt(n * p * (1 - p)); d = k - m; if (d < 0) d = -d
		printf "  %d of %d = %.6f (setting %s, 99.9%% CI +-%.6f)\n", k, n, (n ? k / n : 0), p,
			(n ? 3.2905 * sd / n : 0)
		exit !(n > 0 && d <= 3.2905 * sd + 0.5)
	}'
}
