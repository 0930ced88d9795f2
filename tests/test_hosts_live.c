/*
 * test_hosts_live - several hosts on one timeline from real sessions
 * (docs/DUMP.md, "Several hosts"): three sessions stand for three hosts
 * (their files renamed as `ringlog collect` names them,
 * HOST_SESSION_HOSTID.rlog: a session without a sink records no host id);
 * `ringlog emit` writes numbered events {host, sequence} into them in a
 * known interleaving, one process after another, so each event is
 * written after the one before it in real time (by far more than one
 * machine's clocks disagree: they are the same clock).  dump DIR lists
 * every event written exactly once, in that order, each with its host;
 * stats DIR counts each host's and the total exactly.
 */
#include "harness.h"
#include "tap.h"

#define N 12

static const char *const names[3] = { "alpha", "beta", "gamma" };

/* Event k's host: an interleaving that is not round-robin. */
static unsigned host_of(unsigned k)
{
	static const unsigned order[N] = { 0, 1, 2, 2, 0, 1, 1, 0, 2, 0, 2, 1 };
	return order[k];
}

int main(void)
{
	char sess[3][80], path[3][256], dir[] = "/tmp/rlog-hosts-live-XXXXXX";
	struct h_run r;
	BAIL_IF(!mkdtemp(dir), "mkdtemp");
	for (unsigned h = 0; h < 3; h++) {
		snprintf(sess[h], sizeof sess[h], "%s-%u", h_session("hosts"), h);
		snprintf(path[h], sizeof path[h], "/tmp/rlog-test-hosts-%d-%u.rlog", (int)getpid(), h);
		h_start(sess[h], path[h], NULL, NULL);
	}
	unsigned written[3] = { 0 };
	for (unsigned k = 0; k < N; k++) {
		unsigned h = host_of(k);
		char hex[17];
		snprintf(hex, sizeof hex, "%02x000000%02x000000", h, k);
		h_ringlog(&r, "emit", sess[h], "1025", "--payload", hex, NULL);
		ok(r.status == 0 && h_kv(r.out, "written") == 1, "event %u written into %s", k,
		   names[h]);
		written[h]++;
	}
	for (unsigned h = 0; h < 3; h++) {
		h_ringlog(&r, "stop", sess[h], NULL);
		ok(r.status == 0 && h_kv(r.out, "events_written") == written[h] &&
		   h_kv(r.out, "events_lost") == 0, "%s: %u events written, none lost", names[h],
		   written[h]);
		char to[512];
		/* With a run id as collect names them now, and the third
		 * without one, as it named them before (both name the host). */
		if (h < 2)
			snprintf(to, sizeof to, "%s/%s_%s_%032x_%016x.rlog", dir, names[h], sess[h],
				 h + 1, 0xabc + h);
		else
			snprintf(to, sizeof to, "%s/%s_%s_%032x.rlog", dir, names[h], sess[h], h + 1);
		BAIL_IF(rename(path[h], to) < 0, "rename %s", path[h]);
	}

	struct run d = RUN("dump", dir);
	ok(d.status == 0 && d.err[0] == '\0', "dump DIR: exit 0 (%d %s)", d.status, d.err);
	unsigned next = 0, bad = 0;
	for (char *p = d.out; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
		long long t;
		char host[64], id[16];
		unsigned pid, tid, ph, pk;
		if (*p == '#' || sscanf(p, "%lld %63s %u %u %15s", &t, host, &pid, &tid, id) != 5 ||
		    strcmp(id, "1025") != 0)
			continue;
		/* The payload, as hex words: "0h000000 0k000000". */
		const char *pl = strstr(p, "1025 ");
		if (sscanf(pl + 5, " %2x000000 %2x000000", &ph, &pk) != 2 || pk != next ||
		    ph != host_of(next) || strcmp(host, names[ph]) != 0) {
			if (bad++ == 0)
				diag("unexpected line for event %u: %.120s", next, p);
			continue;
		}
		next++;
	}
	ok(next == N && bad == 0, "dump DIR: the %d events once each, in the order written, each "
	   "with its host (%u, %u bad)", N, next, bad);
	run_free(&d);

	d = RUN("stats", dir);
	const char *tl = strstr(d.out, "\ntotal ");
	unsigned long long tev = 0;
	ok(d.status == 0 && tl && sscanf(tl + 7, " - - %llu", &tev) == 1 && tev == N,
	   "stats DIR: %d events in total", N);
	for (unsigned h = 0; h < 3; h++) {
		char row[80];
		snprintf(row, sizeof row, "\n%s ", names[h]);
		const char *hl = strstr(d.out, row);
		unsigned long long ev = 0;
		char idc[40], sc[80];
		ok(hl && sscanf(hl + strlen(row), " %39s %79s %llu", idc, sc, &ev) == 3 &&
		   ev == written[h], "stats DIR: %s has its %u events", names[h], written[h]);
	}
	run_free(&d);
	rm_dir(dir);
	rmdir(dir);
	return done_testing();
}
