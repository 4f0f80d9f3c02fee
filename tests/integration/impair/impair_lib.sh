# SPDX-License-Identifier: BSD-3-Clause
# Helpers for the net_impair integration tests: run dpdk-testpmd with the PMD loaded from the
# build tree (EAL -d), feed it commands, read counters back. Sourced by test_*.sh.

IMPAIR_SO="${SLUICE_BUILD_ROOT:?}/drivers/net/impair/librte_net_impair.so"
TESTPMD="${TESTPMD:-dpdk-testpmd}"

impair_require() {
	if ! command -v "$TESTPMD" >/dev/null; then
		echo "SKIP: $TESTPMD not installed (Debian package dpdk)"
		exit 77
	fi
	if [ ! -f "$IMPAIR_SO" ]; then
		echo "FAIL: $IMPAIR_SO not built"
		exit 1
	fi
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

# impair_xstat <output> <name>: the value of one xstat from "show port xstats".
impair_xstat() {
	awk -v k="$2:" '$1 == k { print $2; exit }' <<<"$1"
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
