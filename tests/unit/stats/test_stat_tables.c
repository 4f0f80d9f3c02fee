/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Every module's counters, one table each (sl_stats.h): each table names every uint64_t of its
 * struct once (the struct size is pinned by SL_STAT_TABLE_DEFINE's static_assert; here: the
 * offsets are distinct and aligned, the names unique, the help present), and docs/counters.md
 * is exactly the tables rendered, so a counter added in one place shows in the docs or fails
 * this test. `test_stat_tables --write docs/counters.md` writes the page anew.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "impair_engine.h"
#include "sl_chan.h"
#include "sl_dp.h"
#include "sl_traffic.h"
#include "sl_ec.h"
#include "sl_link.h"
#include "sl_pacer.h"
#include "sl_recv.h"
#include "sl_sched.h"
#include "sl_xport.h"
#include "sl_traffic.h"

static const struct {
	const struct sl_stat_table *t;
	const char *getter; /**< how a program reads it */
	const char *shown;  /**< where the daemon or a tool shows it */
} tables[] = {
	{&sl_link_stat_table, "sl_link_stats_get()",
	 "sluiced: `/sluice/link` (`lane/<name>` per lane), the exit JSON (`p<i>/link/<name>`)"},
	{&sl_dp_lane_stat_table, "`struct sl_dp_lane.stats`",
	 "sluiced: `/sluice/ports` (`q/<name>` per queue), the exit JSON (`p<i>/<name>`)"},
	{&sl_traffic_link_stat_table, "`struct sl_traffic_link.stats`",
	 "sluiced: `/sluice/traffic`, the exit JSON's second line (summed over lanes)"},
	{&sl_dp_qp_stat_table, "sl_dp_qp_stats_get()",
	 "sluiced: `/sluice/qp,<qpn>` (`lane/<name>`), sums in `/sluice/qps` "
	 "(`totals/lane/<name>`) and the exit JSON (`qps/lane/<name>`)"},
	{&sl_xport_stat_table, "sl_xport_stats_get()",
	 "sluiced: sums over the lanes in `/sluice/qps` (`totals/xport/<name>`) and the exit JSON "
	 "(`qps/xport/<name>`)"},
	{&sl_xport_qp_stat_table, "sl_xport_qp_stats_get()",
	 "sluiced: `/sluice/qp,<qpn>`, sums in `/sluice/qps` (`totals/<name>`) and the exit "
	 "JSON (`qps/<name>`)"},
	{&sl_traffic_msg_stat_table, "sl_traffic_msg_stats_get()",
	 "sluiced: `/sluice/qp,<qpn>` (`lane/<name>`, its lane's endpoint), sums in "
	 "`/sluice/qps` (`totals/traffic/<name>`) and the exit JSON (`qps/traffic/<name>`)"},
	{&sl_chan_srv_stat_table, "sl_chan_srv_stats_get()",
	 "sluiced: `/sluice/api` (`<name>`), the control half of the applications' channel"},
	{&sl_impair_stat_table, "sl_impair_stats_get()",
	 "net_impair: ethdev xstats `rx_impair_<name>`, `tx_impair_<name>`"},
	{&sl_sched_stat_table, "sl_sched_stats_get()", "sluice-sim's summary"},
	{&sl_sched_flow_stat_table, "sl_sched_flow_stats_get()", "sluice-sim's per-flow results"},
	{&sl_pacer_stat_table, "sl_pacer_stats_get(), sl_xport_pacer_stats_get()",
	 "bench-pacer; sluiced: sums over the lanes' endpoints in `/sluice/qps` "
	 "(`totals/pacer/<name>`) and the exit JSON (`qps/pacer/<name>`)"},
	{&sl_recv_stat_table, "sl_recv_stats_get()", "sluice-sim (receiver `impl = lib`)"},
	{&sl_recv_rtx_stat_table, "sl_recv_rtx_stats_get()", "sluice-sim (MELO senders)"},
	{&sl_ec_stat_table, "sl_ec_stats_get()",
	 "sluice-sim's endpoint-congestion target (`tests/sim/sim_ec.c`); sluiced with `[qp] recv "
	 "= ec`: sums over the lanes in `/sluice/qps` (`totals/ec/<name>`, max_queue_bytes the "
	 "deepest lane's) and the exit JSON (`qps/ec/<name>`)"},
	{&sl_chan_lane_stat_table, "sl_chan_lane_stats_get()",
	 "nothing yet: sluiced's telemetry takes it with the channel's control half (srv.c)"},
};

static const char *write_path; /* --write FILE */

static void
tables__every_counter_once_with_help(void **state)
{
	(void)state;
	for (size_t k = 0; k < SL_ARRAY_SIZE(tables); k++) {
		const struct sl_stat_table *t = tables[k].t;
		unsigned char *seen = calloc(t->n, 1);

		assert_non_null(seen);
		assert_true(t->n > 0);
		for (unsigned i = 0; i < t->n; i++) {
			const struct sl_stat_desc *d = &t->desc[i];

			assert_int_equal(d->offset % sizeof(uint64_t), 0);
			assert_true(d->offset / sizeof(uint64_t) < t->n);
			if (seen[d->offset / sizeof(uint64_t)]++)
				fail_msg("%s: two counters at offset %zu", t->name, d->offset);
			assert_true(d->help != NULL && d->help[0] != '\0');
			for (unsigned j = 0; j < i; j++)
				if (strcmp(d->name, t->desc[j].name) == 0)
					fail_msg("%s: %s named twice", t->name, d->name);
		}
		free(seen);
	}
}

/* The page docs/counters.md, rendered from the tables. */
static char *
render(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	fputs("# Counters\n\n"
	      "<!-- Written by tests/unit/stats/test_stat_tables.c from the counter tables;\n"
	      "     regenerate with: build/tests/unit/stats/test_stat_tables --write "
	      "docs/counters.md -->\n\n"
	      "Every counter of every module, as its table describes it "
	      "(`lib/common/sl_stats.h`):\n"
	      "a counter added to a stats struct needs its line in the module's table (the build\n"
	      "fails otherwise) and then shows here, in telemetry and in the exit JSON.\n",
	      f);
	for (size_t k = 0; k < SL_ARRAY_SIZE(tables); k++) {
		const struct sl_stat_table *t = tables[k].t;

		fprintf(f,
			"\n## `%s`\n\nRead with %s; shown by %s.\n\n| counter | meaning "
			"|\n|---|---|\n",
			t->name, tables[k].getter, tables[k].shown);
		for (unsigned i = 0; i < t->n; i++)
			fprintf(f, "| `%s` | %s |\n", t->desc[i].name, t->desc[i].help);
	}
	fclose(f);
	return buf;
}

static void
counters_doc__matches_the_tables(void **state)
{
	char *want = render(), *have = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	if (write_path != NULL) {
		f = fopen(write_path, "w");
		assert_non_null(f);
		fputs(want, f);
		fclose(f);
	}
	f = fopen(SL_COUNTERS_DOC, "r");
	if (f == NULL)
		fail_msg("%s missing: run test_stat_tables --write docs/counters.md",
			 SL_COUNTERS_DOC);
	assert_int_equal(getdelim(&have, &len, '\0', f) > 0, 1);
	fclose(f);
	if (strcmp(want, have) != 0)
		fail_msg("%s differs from the counter tables: run "
			 "build/tests/unit/stats/test_stat_tables --write docs/counters.md",
			 SL_COUNTERS_DOC);
	free(have);
	free(want);
}

int
main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(tables__every_counter_once_with_help),
		cmocka_unit_test(counters_doc__matches_the_tables),
	};

	if (argc == 3 && strcmp(argv[1], "--write") == 0)
		write_path = argv[2];
	else if (argc != 1) {
		fprintf(stderr, "usage: %s [--write docs/counters.md]\n", argv[0]);
		return 2;
	}
	return cmocka_run_group_tests_name("stats/tables", tests, NULL, NULL);
}
