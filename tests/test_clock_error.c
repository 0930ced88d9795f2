/*
 * test_clock_error - a real session's LOG_MARKER records CLOCK_REALTIME's
 * error as the kernel gives it (docs/FORMAT.md, LOG_MARKER: adjtimex(2)'s
 * esterror and maxerror in us at +44 and +46):
 *   - the file's marker (the refined one the daemon rewrites at stop) says "not
 *     synchronized" (maxerror 65535, esterror 0) exactly when adjtimex
 *     says so before start and after stop, and otherwise a maxerror of
 *     1..65534 and, when the kernel's esterror did not change across the
 *     session, that esterror (clamped);
 *   - `ringlog stats DIR --json` says the same: clock_synchronized, and
 *     clock_error_ns 1000 times the esterror (null when unsynchronized).
 * When the clock's state changes during the session (an NTP daemon
 * starting), the exact checks are skipped, said so.
 */
#include <sys/stat.h>
#include <sys/timex.h>

#include "harness.h"
#include "json.h"

struct kclock {
	bool unsync;
	long est, max;
};

static struct kclock kclock_now(void)
{
	struct timex tx;
	memset(&tx, 0, sizeof tx);
	int state = adjtimex(&tx);
	struct kclock k = { state == TIME_ERROR || (tx.status & STA_UNSYNC), tx.esterror,
			    tx.maxerror };
	return k;
}

int main(void)
{
	char dir[] = "/tmp/rlog-clockerr-XXXXXX";
	if (!mkdtemp(dir)) {
		printf("Bail out! mkdtemp\n");
		return 1;
	}
	char path[300];
	snprintf(path, sizeof path, "%s/host_clk_0000000000000000000000000000000a.rlog", dir);
	const char *name = h_session("clockerr");
	struct kclock before = kclock_now();
	h_start(name, path, NULL, NULL);
	struct h_run r;
	h_ringlog(&r, "stop", name, NULL);
	struct kclock after = kclock_now();
	ok(r.status == 0, "stop exits 0 (%d %s)", r.status, r.err);

	struct rlog_reader *rd = NULL;
	int rc = rlog_reader_open(path, &rd);
	ok(rc == 0, "the file opens (%d)", rc);
	if (rc != 0)
		return done_testing();
	const struct rlog_reader_info *info = rlog_reader_info(rd);
	unsigned est = info->clock_esterror_us, max = info->clock_maxerror_us;
	diag("kernel: unsync %d/%d esterror %ld/%ld maxerror %ld/%ld us; marker %u, %u",
	     before.unsync, after.unsync, before.est, after.est, before.max, after.max, est, max);
	bool steady = before.unsync == after.unsync;
	if (!steady) {
		ok(1, "# SKIP the clock's synchronization changed during the session");
	} else if (before.unsync) {
		ok(max == RLOG_CLOCK_ERROR_UNSYNC && est == 0,
		   "unsynchronized clock: maxerror %u is 65535, esterror %u is 0", max, est);
	} else {
		ok(max >= 1 && max <= RLOG_CLOCK_ERROR_MAX,
		   "synchronized clock: maxerror %u us is 1..65534", max);
		long want = before.est > 65535 ? 65535 : before.est;
		if (before.est == after.est)
			ok((long)est == want, "esterror %u us is the kernel's %ld", est, want);
		else
			ok(1, "# SKIP the kernel's esterror changed during the session");
	}
	rlog_reader_close(rd);

	h_ringlog(&r, "stats", dir, "--json", NULL);
	char err[128];
	struct json *j = json_parse(r.out, strlen(r.out), err, sizeof err);
	const struct json *hs = j ? json_get(j, "hosts") : NULL;
	const struct json *o = hs && hs->type == JSON_ARR && hs->n == 1 ? hs->items[0] : NULL;
	const struct json *sy = o ? json_get(o, "clock_synchronized") : NULL;
	const struct json *ce = o ? json_get(o, "clock_error_ns") : NULL;
	const char *cen = o ? json_num(o, "clock_error_ns") : NULL;
	char want_ns[32];
	snprintf(want_ns, sizeof want_ns, "%u000", est);
	bool unsync = steady ? before.unsync : max == RLOG_CLOCK_ERROR_UNSYNC; /* the kernel's word */
	ok(r.status == 0 && sy && sy->type == JSON_BOOL && sy->b == !unsync && ce &&
	   (unsync ? ce->type == JSON_NULL : cen && strcmp(cen, want_ns) == 0),
	   "stats DIR --json: clock_synchronized %s, clock_error_ns %s (%d %s)",
	   unsync ? "false" : "true", unsync ? "null" : want_ns, r.status, r.err);
	json_free(j);
	unlink(path);
	rmdir(dir);
	return done_testing();
}
