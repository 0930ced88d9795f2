/*
 * test_convert_session - real sessions (this process writes with
 * rlog_write, the real daemon writes the file) converted to both formats,
 * with exact counts: every application event becomes one raw Chrome event
 * and one CTF event that babeltrace2 counts; then an overloaded session
 * (two 4 KiB buffers, two threads writing flat out), whose losses must come
 * out as Chrome loss events with the same totals and as babeltrace2's own
 * "discarded events" reports adding up to the file's DATA_LOSS totals.
 *
 * Needs the built `ringlog` binary in $RINGLOG_BIN; the CTF half is skipped
 * without babeltrace2.
 */
#include "harness.h"

#include <pthread.h>

#include "json.h"
#include "tap.h"
#include "proc_run.h"

#define EVENTS 20000u
#define OVL_THREADS 2
#define OVL_EVENTS 100000u

/* What the reader says about the file: the counts the outputs must have. */
struct expect {
	uint64_t app;        /* application events (ID >= 1024) */
	uint64_t app_by_id[3]; /* IDs 1024, 1025, 1026 */
	uint64_t ctf_events; /* every event but the metadata records */
	uint64_t losses, lost; /* DATA_LOSS records and their events */
	uint64_t names;      /* distinct threads and processes named */
	uint64_t named[16];  /* pid << 32 | tid of a THREAD_NAME, pid of a PROCESS_NAME
			      * (| 1 << 63) */
};

static void named(struct expect *x, uint64_t key)
{
	for (uint64_t i = 0; i < x->names; i++)
		if (x->named[i] == key)
			return;
	if (x->names < 16)
		x->named[x->names++] = key;
}

static void expect_of(const char *path, struct expect *x)
{
	struct rlog_reader *rd;
	struct rlog_event ev;
	memset(x, 0, sizeof *x);
	BAIL_IF(rlog_reader_open(path, &rd) < 0, "cannot read %s", path);
	while (rlog_reader_next(rd, &ev) == 1) {
		if (!ev.flagged && ev.id == RLOG_ID_THREAD_NAME)
			named(x, (uint64_t)ev.pid << 32 | ev.tid);
		if (!ev.flagged && ev.id == RLOG_ID_PROCESS_NAME)
			named(x, UINT64_C(1) << 63 | ev.pid);
		if (!ev.flagged && (ev.id == RLOG_ID_EVENT_SCHEMA || ev.id == RLOG_ID_THREAD_NAME ||
				    ev.id == RLOG_ID_PROCESS_NAME))
			continue;
		x->ctf_events++;
		if (ev.id >= 1024) {
			x->app++;
			if (ev.id <= 1026)
				x->app_by_id[ev.id - 1024]++;
		}
		if (!ev.flagged && ev.id == RLOG_ID_DATA_LOSS) {
			x->losses++;
			uint64_t n;
			memcpy(&n, ev.payload, sizeof n);
			x->lost += n;
		}
	}
	rlog_reader_close(rd);
}

static void check_chrome(const char *path, const struct expect *x)
{
	char out[300], err[128];
	struct h_run r;
	size_t len;
	snprintf(out, sizeof out, "%s.json", path);
	h_ringlog(&r, "convert", path, "--to", "chrome", "-o", out, NULL);
	ASSERT_EQ(r.status, 0);
	ASSERT_EQ_U64(h_kv(r.out, "raw_events"), x->app);
	ASSERT_EQ_U64(h_kv(r.out, "loss_records"), x->losses);
	ASSERT_EQ_U64(h_kv(r.out, "events_lost"), x->lost);
	char *text = slurp(out, &len);
	struct json *doc = text ? json_parse(text, len, err, sizeof err) : NULL;
	ok(doc != NULL, "the JSON parses (%s)", doc ? "ok" : err);
	const struct json *evs = json_get(doc, "traceEvents");
	uint64_t raw = 0, by_id[3] = { 0 }, loss = 0, lost = 0, names = 0, other = 0;
	for (size_t i = 0; evs && i < evs->n; i++) {
		const struct json *e = evs->items[i];
		const char *ph = json_str(e, "ph"), *cat = json_str(e, "cat"), *name = json_str(e, "name");
		if (ph && strcmp(ph, "i") == 0 && cat && strcmp(cat, "raw") == 0) {
			raw++;
			long id = strtol(name, NULL, 10);
			if (id >= 1024 && id <= 1026)
				by_id[id - 1024]++;
		} else if (ph && strcmp(ph, "i") == 0 && name && strncmp(name, "data_loss: ", 11) == 0) {
			loss++;
			const struct json *n = json_get(json_get(e, "args"), "events");
			lost += n ? strtoull(n->s, NULL, 10) : 0;
		} else if (ph && strcmp(ph, "M") == 0) {
			names++;
		} else {
			other++;
		}
	}
	ASSERT_EQ_U64(raw, x->app);
	ASSERT_EQ_U64(by_id[0], x->app_by_id[0]);
	ASSERT_EQ_U64(by_id[1], x->app_by_id[1]);
	ASSERT_EQ_U64(by_id[2], x->app_by_id[2]);
	ASSERT_EQ_U64(loss, x->losses);
	ASSERT_EQ_U64(lost, x->lost);
	ASSERT_EQ_U64(other, 0);
	ASSERT_EQ_U64(names, x->names);
	diag("chrome: %" PRIu64 " raw events, %" PRIu64 " losses (%" PRIu64 " events), %" PRIu64
	     " names", raw, loss, lost, names);
	json_free(doc);
	free(text);
	unlink(out);
}

static void check_ctf(const char *path, const struct expect *x)
{
	char dir[300];
	struct h_run r;
	struct run bt;
	snprintf(dir, sizeof dir, "%s.ctf", path);
	h_ringlog(&r, "convert", path, "--to", "ctf", "-o", dir, NULL);
	ASSERT_EQ(r.status, 0);
	ASSERT_EQ_U64(h_kv(r.out, "events_written"), x->ctf_events);
	if (!have_babeltrace()) {
		ok(1, "# SKIP babeltrace2 is not on PATH (scripts/deps.sh installs it)");
		rm_dir(dir);
		return;
	}
	/* The text sink prints the loss warnings; the counter sink counts. */
	const char *argv_t[] = { "babeltrace2", dir, NULL };
	bt = proc_run(argv_t);
	ASSERT_EQ(bt.status, 0);
	int lines, may;
	ASSERT_EQ_U64(discarded_total(bt.err, &lines, &may), x->lost);
	ASSERT_EQ(may, 0);
	run_free(&bt);
	const char *argv[] = { "babeltrace2", dir, "-c", "sink.utils.counter", NULL };
	bt = proc_run(argv);
	ASSERT_EQ(bt.status, 0);
	ASSERT_EQ_U64(counter_value(bt.out, " Event messages"), x->ctf_events);
	ASSERT_EQ_U64(counter_value(bt.out, " Discarded event messages"), (uint64_t)lines);
	diag("ctf: %" PRIu64 " events, %d discarded-events reports", x->ctf_events, lines);
	run_free(&bt);
	rm_dir(dir);
}

static void *flood(void *arg)
{
	struct h_tally *t = arg;
	for (uint64_t i = 1; i <= OVL_EVENTS; i++) {
		uint64_t p[2] = { i, ~i };
		h_tally_add(t, rlog_write(1024 + (unsigned)(i % 3), p, sizeof p));
	}
	return NULL;
}

int main(void)
{
	struct h_run r;
	struct expect x;

	/* A quiet session: every event written. */
	const char *name = h_session("cvs");
	char path[256];
	snprintf(path, sizeof path, "%s", h_path("cvs"));
	h_start(name, path, NULL, NULL);
	ASSERT_EQ(rlog_attach(name), 0);
	struct h_tally t = { 0 };
	for (uint64_t i = 1; i <= EVENTS; i++)
		h_tally_add(&t, rlog_write(1024 + (unsigned)(i % 3), &i, sizeof i));
	rlog_detach();
	h_ringlog(&r, "stop", name, NULL);
	ASSERT_EQ(r.status, 0);
	ASSERT_EQ_U64(t.written, EVENTS);
	expect_of(path, &x);
	ASSERT_EQ_U64(x.app, EVENTS);
	ASSERT_EQ_U64(x.app_by_id[0] + x.app_by_id[1] + x.app_by_id[2], EVENTS);
	ASSERT_EQ_U64(x.app_by_id[1], (EVENTS + 2) / 3);
	ASSERT_EQ_U64(x.losses, 0);
	check_chrome(path, &x);
	check_ctf(path, &x);
	unlink(path);

	/* An overloaded one: losses. */
	name = h_session("cvo");
	snprintf(path, sizeof path, "%s", h_path("cvo"));
	h_start(name, path, "4", "2");
	ASSERT_EQ(rlog_attach(name), 0);
	pthread_t th[OVL_THREADS];
	struct h_tally tt[OVL_THREADS];
	memset(tt, 0, sizeof tt);
	for (int i = 0; i < OVL_THREADS; i++)
		BAIL_IF(pthread_create(&th[i], NULL, flood, &tt[i]) != 0, "pthread_create");
	uint64_t written = 0, lost = 0;
	for (int i = 0; i < OVL_THREADS; i++) {
		pthread_join(th[i], NULL);
		written += tt[i].written;
		lost += tt[i].lost;
	}
	rlog_detach();
	h_ringlog(&r, "stop", name, NULL);
	ASSERT_EQ(r.status, 0);
	expect_of(path, &x);
	ASSERT_EQ_U64(x.app, written);
	ASSERT_EQ_U64(x.lost, lost);
	ok(lost > 0, "the overloaded session lost events (%" PRIu64 " of %u)", lost,
	   OVL_THREADS * OVL_EVENTS);
	check_chrome(path, &x);
	check_ctf(path, &x);
	unlink(path);
	return done_testing();
}
