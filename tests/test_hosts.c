/*
 * test_hosts - several hosts on one timeline (docs/DUMP.md, "Several
 * hosts"): three crafted files, as `ringlog collect` names them
 * (DIR/HOST_SESSION_HOSTID.rlog), from hosts whose clocks differ (tick
 * rates 1 and 2 GHz, sync_ticks and CLOCK_REALTIME starts of their own),
 * holding numbered events {host, sequence} at known real times in a known
 * interleaving:
 *   - dump DIR lists every event once, in real-time order, each with its
 *     host's name and its exact time from the earliest start; the header
 *     names each host with its id; dump FILE FILE FILE says the same;
 *   - each host's clock error as its LOG_MARKER records it (docs/FORMAT.md):
 *     alpha's +-0 us (max 345 us: esterror 0), beta's "not synchronized", gamma's
 *     zero word (an older file) "not recorded", exactly, in dump's header,
 *     stats' CLOCK_ERROR column and stats --json (ns, or null);
 *   - stats DIR (--json and text) counts per host and in total exactly;
 *   - convert DIR --to chrome puts each host's events in processes of
 *     their own (pid 10^7 * (host + 1) + pid), named "HOST: ...", at the
 *     merged times; --to perfetto too (check_perfetto), decoded by
 *     protoc, the loader's invariants holding across the hosts, times to
 *     the ns, each host's clock error in the metadata; --to ctf a trace
 *     per host that babeltrace2 merges (check_ctf);
 *   - report DIR embeds stats --json DIR's object as it is; in headless
 *     Chromium (docs/CONVERT.md, "The HTML report") the page's row per
 *     host and its total show those numbers and each host's clock error
 *     as dump says it, the events it decoded per host equal stats', each
 *     numbered event is in its data once with its host at its merged
 *     time, the timeline lists each host, then its process, then its
 *     thread, and no console message comes; report DIR --since --until
 *     counts dump DIR --since --until's events;
 *   - bad input (a directory holding a file that is not a log file,
 *     another format given as a file, an empty directory, a FIFO named
 *     *.rlog in a directory or given as FILE) gives one error line and
 *     exit 1 (the FIFO at once, not an open waiting for a writer; report
 *     too, leaving no page).
 */
#define _GNU_SOURCE /* nftw (report_browser.h): before any header */
#include "filegen.h"
#include "json.h"
#include "proc_run.h"
#include "pbtext.h"
#include "tap.h"
#include "report_browser.h"

#define R 1795341600000000000ull /* 2026-11-22T10:00:00Z */
#define N 30

struct host {
	const char *name;
	char id[33];
	uint64_t freq, sync_ticks, sync_rt;
	unsigned events;
	uint32_t clock;    /* the LOG_MARKER's word at +44 */
	const char *error; /* as the output says it */
	const char *est_ns, *max_ns, *synced; /* as stats --json says it */
};

static struct host hosts[3] = {
	/* esterror 0 (as systemd-timesyncd leaves it): 0 ns in the JSON */
	{ "alpha", "", 1000000000u, 1000000u, R + 1000, 0, 0u | 345u << 16,
	  "\u00b10 us (max 345 us)", "0", "345000", "true" },
	{ "beta", "", 2000000000u, 5000000000u, R + 3000, 0, RLOG_CLOCK_ERROR_UNSYNC << 16,
	  "unknown: not synchronized", NULL, NULL, "false" },
	/* the earliest start: time 0; a zero word, as every file before the field */
	{ "gamma", "", 1000000000u, 7000000u, R, 0, 0, "not recorded", NULL, NULL, NULL },
};

/* The JSON member name of o is null (want NULL) or the number or literal want. */
static bool json_is(const struct json *o, const char *name, const char *want)
{
	const struct json *v = json_get(o, name);
	if (v == NULL)
		return false;
	if (want == NULL)
		return v->type == JSON_NULL;
	const char *n = json_num(o, name);
	if (n != NULL)
		return strcmp(n, want) == 0;
	return v->type == JSON_BOOL && v->b == (strcmp(want, "true") == 0);
}

/* Event k: its real time and host. */
static uint64_t rt_of(unsigned k)
{
	return R + 10000 + (uint64_t)k * 7919;
}

static unsigned host_of(unsigned k)
{
	return (k * 7 + k / 4) % 3;
}

static void write_host(const char *dir, unsigned h)
{
	struct host *o = &hosts[h];
	struct fg_file f;
	struct fg_block b;
	fg_file_init(&f);
	fg_marker_block_clock(&f, 1, 1, o->freq, o->sync_ticks, o->sync_rt, RLOG_TICK_TSC, 16384, 8,
			      "web", o->clock);
	fg_block_begin(&b, 100 + h, 100 + h, o->sync_ticks, 0);
	for (unsigned k = 0; k < N; k++) {
		if (host_of(k) != h)
			continue;
		uint64_t t = o->sync_ticks + (rt_of(k) - o->sync_rt) * (o->freq / 1000000000u);
		uint32_t p[2] = { h, k };
		fg_event(&b, RLOG_ID_RAW_U32, -1, true, (uint32_t)t, p, 8);
		o->events++;
	}
	fg_block_end(&f, &b);
	for (int i = 0; i < 16; i++)
		snprintf(o->id + 2 * i, 3, "%02x", 0x0a + h);
	char path[512];
	snprintf(path, sizeof path, "%s/%s_web_%s.rlog", dir, o->name, o->id);
	BAIL_IF(fg_write(&f, path) < 0, "cannot write %s", path);
	fg_file_free(&f);
}

/* The host index of a name, or -1. */
static int host_named(const char *name)
{
	for (int h = 0; h < 3; h++)
		if (strcmp(hosts[h].name, name) == 0)
			return h;
	return -1;
}

/* Checks a merged text dump: every event once, in order, host and time
 * right; the LOG_MARKERs at each host's start. */
static void check_dump(const struct run *r, const char *what)
{
	unsigned next = 0, markers = 0, bad = 0, headers = 0, clocks = 0;
	const char *p = r->out;
	while (*p) {
		const char *e = strchr(p, '\n');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		char line[512];
		snprintf(line, sizeof line, "%.*s", (int)len, p);
		p += len + (e ? 1 : 0);
		if (line[0] == '#') {
			for (unsigned h = 0; h < 3; h++) {
				char want[128];
				snprintf(want, sizeof want, "# host %s id %s: session web,", hosts[h].name,
					 hosts[h].id);
				headers += strncmp(line, want, strlen(want)) == 0;
				char tail[128];
				snprintf(tail, sizeof tail, ", clock error %s", hosts[h].error);
				clocks += strncmp(line, want, strlen(want)) == 0 &&
					  strlen(line) > strlen(tail) &&
					  strcmp(line + strlen(line) - strlen(tail), tail) == 0;
			}
			continue;
		}
		long long t;
		char host[64], id[32];
		unsigned pid, tid, ph, pk;
		int n = sscanf(line, "%lld %63s %u %u %31s %u %u", &t, host, &pid, &tid, id, &ph, &pk);
		int h = n >= 5 ? host_named(host) : -1;
		if (n >= 5 && strcmp(id, "LOG_MARKER") == 0 && h >= 0) {
			markers += t == (long long)(hosts[h].sync_rt - R);
			continue;
		}
		if (n != 7 || strcmp(id, "RAW_U32") != 0 || pk != next || h != (int)host_of(next) ||
		    ph != (unsigned)h || pid != 100u + ph || t != (long long)(rt_of(next) - R)) {
			if (bad++ == 0)
				diag("%s: unexpected line (event %u next): %s", what, next, line);
			continue;
		}
		next++;
	}
	ok(r->status == 0 && r->err[0] == '\0', "%s: exit 0, nothing on stderr (%d: %s)", what,
	   r->status, r->err);
	ok(next == N && bad == 0, "%s: the %d events once each, in real-time order, with their "
	   "host and time (%u, %u bad)", what, N, next, bad);
	ok(markers == 3, "%s: each host's LOG_MARKER at its start on the merged timeline", what);
	ok(headers == 3, "%s: a header line per host with its name and id", what);
	ok(clocks == 3, "%s: each host's line ends with its clock error (\"%s\", \"%s\", \"%s\")",
	   what, hosts[0].error, hosts[1].error, hosts[2].error);
}

static double ts_of(const struct json *ev)
{
	const char *s = json_num(ev, "ts");
	return s ? strtod(s, NULL) : -1.0;
}

static void check_chrome(const char *path)
{
	size_t len;
	int fd = open(path, O_RDONLY);
	char *text = fd >= 0 ? proc_slurp_fd(fd, &len) : NULL;
	if (fd >= 0)
		close(fd);
	char err[128];
	struct json *j = text ? json_parse(text, len, err, sizeof err) : NULL;
	ok(j != NULL, "convert: the output parses as JSON");
	const struct json *evs = j ? json_get(j, "traceEvents") : NULL;
	unsigned per[3] = { 0 }, wrong = 0, named = 0;
	bool seen[N] = { false };
	for (size_t i = 0; evs && i < evs->n; i++) {
		const struct json *ev = evs->items[i];
		const char *name = json_str(ev, "name"), *ph = json_str(ev, "ph");
		const char *pid = json_num(ev, "pid");
		if (!name || !ph || !pid)
			continue;
		unsigned long long p = strtoull(pid, NULL, 10);
		if (strcmp(ph, "M") == 0 && strcmp(name, "process_name") == 0) {
			const struct json *a = json_get(ev, "args");
			const char *pn = a ? json_str(a, "name") : NULL;
			for (unsigned h = 0; h < 3 && pn; h++) {
				char want[64];
				snprintf(want, sizeof want, "%s: pid %u", hosts[h].name, 100 + h);
				named += p == 10000000ull * (h + 1) + 100 + h && strcmp(pn, want) == 0;
			}
			continue;
		}
		if (strcmp(name, "RAW_U32") != 0)
			continue;
		const struct json *a = json_get(ev, "args");
		const struct json *v = a ? json_get(a, "values") : NULL;
		unsigned k = v && v->type == JSON_ARR && v->n == 2 ? (unsigned)v->items[1]->num : N;
		unsigned h = k < N ? host_of(k) : 0;
		double want = (double)(rt_of(k < N ? k : 0) - R) / 1000.0;
		if (k >= N || seen[k] || p != 10000000ull * (h + 1) + 100 + h ||
		    ts_of(ev) < want - 0.0005 || ts_of(ev) > want + 0.0005) {
			if (wrong++ == 0)
				diag("convert: unexpected event %zu (k %u pid %llu ts %f)", i, k, p,
				     ts_of(ev));
			continue;
		}
		seen[k] = true;
		per[h]++;
	}
	ok(wrong == 0 && per[0] == hosts[0].events && per[1] == hosts[1].events &&
	   per[2] == hosts[2].events, "convert: each host's events (%u %u %u) in its own process, "
	   "at their merged times", per[0], per[1], per[2]);
	ok(named == 3, "convert: each host's process named \"HOST: pid N\"");
	json_free(j);
	free(text);
}

/* A sequence of the Perfetto trace: its state, its names by iid. */
#define PF_SEQ 64
#define PF_IID 32
struct pf_seq {
	bool started;
	uint64_t t, snap64, snapboot; /* clock 64 now; it and BOOTTIME at the snapshot */
	uint64_t track;
	char *names[2][PF_IID]; /* event names, annotation names */
};

/* A track descriptor: its uuid, its parent's, its process or thread. */
struct pf_track {
	uint64_t uuid, parent, pid, tid;
	bool process, thread;
	char name[128];
};

static const struct pf_track *pf_track_of(const struct pf_track *t, size_t n, uint64_t uuid)
{
	for (size_t i = 0; i < n; i++)
		if (t[i].uuid == uuid)
			return &t[i];
	return NULL;
}

/*
 * convert DIR --to perfetto's trace (docs/CONVERT.md, "Several hosts"):
 * protoc decodes it; the loader's invariants hold over all the hosts (each
 * sequence cleared once, with its clock snapshot, BOOTTIME equal to
 * CLOCK_REALTIME there; every track described once, before its use and
 * after its parent; every iid interned before its use); every numbered
 * event once, on a thread track of its host's process (pid and tid
 * 10^7 * (host + 1) + N, the process "HOST: pid N"), at its merged time
 * to the ns (as dump DIR says it); each host's name, clock error (as dump
 * says it) and losses in the metadata, and merged time 0.
 */
static void check_perfetto(const char *path)
{
	struct node *root = pbtext_decode(path);
	ok(root != NULL, "convert --to perfetto: protoc decodes the trace");
	if (!root)
		return;
	static struct pf_seq seq[PF_SEQ];
	static struct pf_track tr[64];
	size_t ntr = 0;
	unsigned broken = 0, wrong = 0, per[3] = { 0 }, meta = 0, named = 0;
	bool seen[N] = { false };
	uint64_t base = 0;
#define BROKEN(...)                                  \
	do {                                         \
		if (broken++ == 0)                   \
			diag(__VA_ARGS__);           \
	} while (0)
	for (size_t i = 0; i < root->n; i++) {
		const struct node *p = root->kids[i];
		uint64_t sid = num(p, "trusted_packet_sequence_id");
		unsigned flags = (unsigned)num(p, "sequence_flags");
		if (sid == 0 || sid >= PF_SEQ) {
			BROKEN("packet %zu: sequence id %" PRIu64, i, sid);
			continue;
		}
		struct pf_seq *q = &seq[sid];
		if (flags == 1) {
			const struct node *cs = kid(p, "clock_snapshot");
			uint64_t rt = 1;
			if (q->started || !cs)
				BROKEN("sequence %" PRIu64 " cleared twice, or no snapshot", sid);
			q->started = true;
			for (size_t k = 0; cs && k < cs->n; k++) {
				if (strcmp(cs->kids[k]->key, "clocks") != 0)
					continue;
				uint64_t id = num(cs->kids[k], "clock_id"), v = num(cs->kids[k], "timestamp");
				if (id == 64)
					q->snap64 = q->t = v;
				else if (id == 6)
					q->snapboot = v;
				else if (id == 1)
					rt = v;
				else
					BROKEN("sequence %" PRIu64 ": a clock %" PRIu64 " in the snapshot", sid, id);
			}
			if (rt != q->snapboot)
				BROKEN("sequence %" PRIu64 ": BOOTTIME is not CLOCK_REALTIME", sid);
			const struct node *d = kid(p, "trace_packet_defaults");
			const struct node *ted = d ? kid(d, "track_event_defaults") : NULL;
			q->track = ted ? num(ted, "track_uuid") : 0;
			if (q->track && !pf_track_of(tr, ntr, q->track))
				BROKEN("sequence %" PRIu64 ": its track not described first", sid);
			continue;
		}
		if (!q->started || flags != 2)
			BROKEN("packet %zu: flags %u on sequence %" PRIu64, i, flags, sid);
		const struct node *in = kid(p, "interned_data");
		for (size_t k = 0; in && k < in->n; k++) {
			int t = strcmp(in->kids[k]->key, "event_names") == 0		 ? 0
				: strcmp(in->kids[k]->key, "debug_annotation_names") == 0 ? 1
											   : -1;
			uint64_t iid = num(in->kids[k], "iid");
			if (t >= 0 && iid < PF_IID && !q->names[t][iid])
				q->names[t][iid] = strdup(val(in->kids[k], "name"));
			else if (t >= 0)
				BROKEN("an iid %" PRIu64 " interned twice", iid);
		}
		q->t += num(p, "timestamp");
		const struct node *td = kid(p, "track_descriptor");
		if (td && ntr < 64) {
			struct pf_track *k = &tr[ntr];
			memset(k, 0, sizeof *k);
			k->uuid = num(td, "uuid");
			k->parent = num(td, "parent_uuid");
			const struct node *pr = kid(td, "process"), *th = kid(td, "thread");
			if (pf_track_of(tr, ntr, k->uuid) || (k->parent && !pf_track_of(tr, ntr, k->parent)))
				BROKEN("track %" PRIu64 " described twice, or before its parent", k->uuid);
			if (pr) {
				k->process = true;
				k->pid = num(pr, "pid");
				const char *pn = val(pr, "process_name");
				snprintf(k->name, sizeof k->name, "%s", pn ? pn : "");
			}
			if (th) {
				k->thread = true;
				k->pid = num(th, "pid");
				k->tid = num(th, "tid");
			}
			ntr++;
			continue;
		}
		const struct node *ce = kid(p, "chrome_events");
		for (size_t k = 0; ce && k < ce->n; k++) {
			const char *name = val(ce->kids[k], "name"), *v = val(ce->kids[k], "string_value");
			if (!name || !v)
				continue;
			if (strcmp(name, "\"ringlog.base_realtime_ns\"") == 0)
				base = strtoull(v + 1, NULL, 10);
			for (unsigned h = 0; h < 3; h++) {
				char key[64], want[160];
				snprintf(key, sizeof key, "\"ringlog.host.%u.clock_error\"", h);
				/* protoc escapes the UTF-8 of the +- sign as octal */
				snprintf(want, sizeof want, "\"%s\"", hosts[h].error);
				if (strcmp(name, key) == 0 && (strcmp(v, want) == 0 ||
				    (h == 0 && strcmp(v, "\"\\302\\2610 us (max 345 us)\"") == 0)))
					meta++;
				snprintf(key, sizeof key, "\"ringlog.host.%u.name\"", h);
				snprintf(want, sizeof want, "\"%s\"", hosts[h].name);
				meta += strcmp(name, key) == 0 && strcmp(v, want) == 0;
				snprintf(key, sizeof key, "\"ringlog.host.%u.events_lost\"", h);
				meta += strcmp(name, key) == 0 && strcmp(v, "\"0\"") == 0;
				snprintf(key, sizeof key, "\"ringlog.host.%u.track_events\"", h);
				snprintf(want, sizeof want, "\"%u\"", hosts[h].events);
				meta += strcmp(name, key) == 0 && strcmp(v, want) == 0;
			}
			continue;
		}
		const struct node *te = kid(p, "track_event");
		if (!te)
			continue;
		uint64_t u = val(te, "track_uuid") ? num(te, "track_uuid") : q->track;
		const struct pf_track *th = pf_track_of(tr, ntr, u);
		const struct pf_track *pr = th ? pf_track_of(tr, ntr, th->parent) : NULL;
		uint64_t ni = num(te, "name_iid");
		const char *name = ni < PF_IID ? q->names[0][ni] : NULL;
		uint64_t v[2] = { N, N };
		for (size_t k = 0; k < te->n; k++) {
			const struct node *a = te->kids[k];
			uint64_t ai = num(a, "name_iid");
			const char *an = strcmp(a->key, "debug_annotations") == 0 && ai < PF_IID
						 ? q->names[1][ai] : NULL;
			if (an && strcmp(an, "\"values[0]\"") == 0)
				v[0] = num(a, "uint_value");
			if (an && strcmp(an, "\"values[1]\"") == 0)
				v[1] = num(a, "uint_value");
		}
		if (!name)
			BROKEN("packet %zu: an event name not interned first", i);
		if (!name || strcmp(name, "\"RAW_U32\"") != 0)
			continue;
		unsigned k = v[1] < N ? (unsigned)v[1] : 0, h = host_of(k);
		uint64_t id = 10000000ull * (h + 1) + 100 + h;
		char pn[64];
		snprintf(pn, sizeof pn, "\"%s: pid %u\"", hosts[h].name, 100 + h);
		uint64_t at = q->snapboot + (q->t - q->snap64) - R;
		if (v[1] >= N || seen[k] || v[0] != h || !th || !th->thread || th->pid != id ||
		    th->tid != id || !pr || !pr->process || pr->pid != id || strcmp(pr->name, pn) != 0 ||
		    at != rt_of(k) - R) {
			if (wrong++ == 0)
				diag("perfetto: unexpected event (k %" PRIu64 " host %" PRIu64 " at %" PRIu64
				     " track %" PRIu64 ")", v[1], v[0], at, u);
			continue;
		}
		named += per[h] == 0;
		seen[k] = true;
		per[h]++;
	}
	ok(broken == 0, "convert --to perfetto: the loader's invariants hold across the hosts: "
	   "sequences, snapshots (BOOTTIME = CLOCK_REALTIME), tracks, iids");
	ok(wrong == 0 && per[0] == hosts[0].events && per[1] == hosts[1].events &&
	   per[2] == hosts[2].events, "convert --to perfetto: every numbered event once (%u %u "
	   "%u), on a thread of its host's process \"HOST: pid N\" (pid 10^7 * (host + 1) + N), "
	   "at its merged time to the ns", per[0], per[1], per[2]);
	ok(named == 3, "convert --to perfetto: the three hosts' processes apart");
	ok(meta == 12 && base == R, "convert --to perfetto: each host's name, clock error, losses "
	   "and events in the metadata (%u of 12), merged time 0 (%" PRIu64 ")", meta, base);
#undef BROKEN
	for (size_t i = 0; i < PF_SEQ; i++)
		for (int t = 0; t < 2; t++)
			for (size_t k = 0; k < PF_IID; k++)
				free(seq[i].names[t][k]);
	node_free(root);
}

/*
 * convert DIR --to ctf: a CTF trace per host in OUT/HOST, its env naming
 * the host and its clock error; babeltrace2 given OUT merges them by their
 * absolute clocks: every numbered event once, with its host, at its real
 * time to the ns (--clock-seconds), in order.  A second conversion is
 * refused without --force and replaces the first with it.
 */
static void check_ctf(const char *dir, const char *out)
{
	struct run r = RUN("convert", dir, "--to", "ctf", "-o", out);
	ok(r.status == 0 && r.err[0] == '\0' && strstr(r.out, "hosts: 3\n") &&
	   strstr(r.out, "\nevents_written: 33\n"), "convert DIR --to ctf: exit 0, 3 hosts, the 30 "
	   "events and 3 LOG_MARKERs (%d %s)", r.status, r.err);
	run_free(&r);
	unsigned envs = 0;
	for (unsigned h = 0; h < 3; h++) {
		char path[700], want[200];
		snprintf(path, sizeof path, "%s/%s/metadata", out, hosts[h].name);
		int fd = open(path, O_RDONLY);
		size_t len = 0;
		char *text = fd >= 0 ? proc_slurp_fd(fd, &len) : NULL;
		if (fd >= 0)
			close(fd);
		const char *err = h == 0 ? "+-0 us (max 345 us)" : hosts[h].error;
		snprintf(want, sizeof want, "\thostname = \"%s\";\n\tclock_error = \"%s\";\n",
			 hosts[h].name, err);
		envs += text && strstr(text, want) != NULL;
		free(text);
	}
	ok(envs == 3, "convert DIR --to ctf: OUT/HOST/metadata per host, its env naming the host "
	   "and its clock error");
	if (!have_babeltrace()) {
		diag("babeltrace2 is not installed (scripts/deps.sh installs it): not read back");
	} else {
		r = proc_run((const char *const[]){ "babeltrace2", "--clock-seconds", "-f",
						    "trace:hostname", out, NULL });
		unsigned next = 0, bad = 0;
		char line[512];
		for (size_t i = 0, n = run_lines(r.out); i < n; i++) {
			run_line(r.out, i, line, sizeof line);
			unsigned long long sec, ns;
			char host[64];
			unsigned v0, v1;
			if (strstr(line, "LOG_MARKER"))
				continue;
			const char *vals = strstr(line, "values = [ [0] = ");
			if (sscanf(line, "[%llu.%9llu] %*s %63s", &sec, &ns, host) != 3 || !vals ||
			    sscanf(vals, "values = [ [0] = %u, [1] = %u", &v0, &v1) != 2 || v1 != next ||
			    v0 != host_of(next) || strcmp(host, hosts[v0].name) != 0 ||
			    sec * 1000000000ull + ns != rt_of(next)) {
				if (bad++ == 0)
					diag("babeltrace2: unexpected line (event %u next): %s", next, line);
				continue;
			}
			next++;
		}
		ok(r.status == 0 && next == N && bad == 0, "babeltrace2 OUT: the %d events once "
		   "each, in real-time order, with their host, to the ns (%u, %u bad; %d)", N, next,
		   bad, r.status);
		run_free(&r);
	}
	r = RUN("convert", dir, "--to", "ctf", "-o", out);
	char w[800];
	snprintf(w, sizeof w, "ringlog: convert: %s is not empty (it holds ", out);
	ok(r.status == 1 && strncmp(r.err, w, strlen(w)) == 0 && strchr(r.err, '\n') ==
	   r.err + strlen(r.err) - 1, "convert DIR --to ctf again: refused, one line (%d %s)",
	   r.status, r.err);
	run_free(&r);
	r = RUN("convert", dir, "--to", "ctf", "-o", out, "--force");
	ok(r.status == 0 && strstr(r.out, "hosts: 3\n"), "--force: converted again (%d %s)",
	   r.status, r.err);
	run_free(&r);
	for (unsigned h = 0; h < 3; h++) {
		char sub[200];
		snprintf(sub, sizeof sub, "%.120s/%s", out, hosts[h].name);
		rm_dir(sub);
	}
	rmdir(out);
}

/* Host names that are not directory names as they are: "..", and two
 * hosts named "a" beside one named "a-1". Each host gets its own new
 * subdirectory of OUT, and --force empties none outside OUT (a file named
 * "metadata" beside OUT stays). */
static void check_ctf_names(const char *file, const char *base)
{
	char d[4][320], in[4][340], np[320], out[340], keep[340];
	static const char *const sub[4] = { "x", "y", "z", "w" };
	static const char *const leaf[4] = { "a.rlog", "a.rlog", "a-1.rlog", "...rlog" };
	for (int i = 0; i < 4; i++) {
		snprintf(d[i], sizeof d[i], "%.300s.%s", base, sub[i]);
		mkdir(d[i], 0700);
		snprintf(in[i], sizeof in[i], "%.320s/%s", d[i], leaf[i]);
		unlink(in[i]);
		BAIL_IF(link(file, in[i]) < 0, "link %s: %s", in[i], strerror(errno));
	}
	snprintf(np, sizeof np, "%.300s.np", base);
	mkdir(np, 0700);
	snprintf(keep, sizeof keep, "%.320s/metadata", np);
	FILE *fp = fopen(keep, "w");
	BAIL_IF(!fp, "fopen %s", keep);
	fputs("not ours\n", fp);
	fclose(fp);
	snprintf(out, sizeof out, "%.320s/out", np);
	unsigned whole = 0;
	for (int pass = 0; pass < 2; pass++) {
		struct run r = RUN("convert", in[0], in[1], in[2], in[3], "--to", "ctf", "-o", out,
				   "--force");
		whole += r.status == 0 && strstr(r.out, "hosts: 4\n") != NULL;
		if (r.status != 0)
			diag("convert: %d %s", r.status, r.err);
		run_free(&r);
	}
	ok(whole == 2, "convert --to ctf of hosts a, a, a-1 and ..: exit 0 twice (--force)");
	static const char *const dirs[4] = { "a", "a-1", "a-1-2", "_.." };
	unsigned found = 0;
	for (int i = 0; i < 4; i++) {
		char m[400];
		snprintf(m, sizeof m, "%.340s/%s/metadata", out, dirs[i]);
		found += access(m, F_OK) == 0;
	}
	ok(found == 4, "each host its own subdirectory: a, a-1, a-1-2, _.. (%u)", found);
	ok(access(keep, F_OK) == 0, "the file beside OUT is left alone");
	for (int i = 0; i < 4; i++) {
		char m[200];
		snprintf(m, sizeof m, "%.150s/%s", out, dirs[i]);
		rm_dir(m);
		unlink(in[i]);
		rmdir(d[i]);
	}
	rmdir(out);
	unlink(keep);
	rmdir(np);
}

/* The text of column c of the page's row of host i (selftest.hosts[i]
 * .shown), or of the total row (a plain array); "" if none. */
static const char *cell(const struct json *rows, size_t i, size_t c)
{
	const struct json *r = rows && rows->type == JSON_ARR && i < rows->n ? rows->items[i] : NULL;
	if (r && r->type != JSON_ARR)
		r = json_get(r, "shown");
	return r && r->type == JSON_ARR && c < r->n && r->items[c]->type == JSON_STR
		       ? r->items[c]->s : "";
}

/* The page of report DIR in the browser: its hosts, its events, its
 * lanes. */
static void check_report_page(const char *bin, const char *html)
{
	struct run r;
	struct json *st = page_selftest(bin, html, "selftest=ticks", &r);
	const struct json *hs = st ? json_get(st, "hosts") : NULL;
	unsigned rows = 0;
	for (unsigned h = 0; hs && hs->type == JSON_ARR && h < 3 && h < hs->n; h++) {
		char ev[16];
		snprintf(ev, sizeof ev, "%u", hosts[h].events);
		const struct json *dec = json_get(hs->items[h], "events");
		rows += strcmp(cell(hs, h, 0), hosts[h].name) == 0 &&
			strcmp(cell(hs, h, 1), hosts[h].id) == 0 && strcmp(cell(hs, h, 3), ev) == 0 &&
			strcmp(cell(hs, h, 5), "0") == 0 && strcmp(cell(hs, h, 9), hosts[h].error) == 0 &&
			dec && dec->num == hosts[h].events;
	}
	ok(rows == 3, "report: each host's row shows its name, id, events, losses and clock error, "
	   "and the page decoded as many events of it");
	const struct json *tot = st ? json_get(st, "total_shown") : NULL;
	char n[16];
	snprintf(n, sizeof n, "%d", N);
	ok(tot && tot->type == JSON_ARR && tot->n > 5 && tot->items[0]->type == JSON_STR &&
	   strcmp(tot->items[0]->s, "total") == 0 && strcmp(tot->items[3]->s, n) == 0 &&
	   strcmp(tot->items[5]->s, "0") == 0, "report: the total row shows %d events, 0 lost", N);
	const struct json *se = st ? json_get(st, "shown_events") : NULL;
	ok(se && se->num == N, "report: the events card shows %d", N);
	/* Every numbered event once, with its host (pid 100 + host), at its
	 * merged time (gamma started first: rt - R). */
	const struct json *ticks = st ? json_get(st, "ticks") : NULL;
	bool seen[N] = { false };
	unsigned good = 0, wrong = 0;
	for (size_t i = 0; ticks && ticks->type == JSON_ARR && i < ticks->n; i++) {
		const struct json *t = ticks->items[i];
		unsigned k = 0;
		while (k < N && t->n == 5 && (double)(rt_of(k) - R) != t->items[3]->num)
			k++;
		if (k == N || seen[k] || t->items[0]->num != host_of(k) ||
		    t->items[1]->num != 100 + host_of(k)) {
			if (wrong++ == 0)
				diag("report: unexpected tick %zu", i);
			continue;
		}
		seen[k] = true;
		good++;
	}
	ok(good == N && wrong == 0, "report: each of the %d numbered events once in the page, "
	   "with its host, at its merged time (%u, %u wrong)", N, good, wrong);
	/* The timeline: host, its process, its thread, host by host. */
	const struct json *lay = st ? json_get(st, "layout") : NULL;
	unsigned in_order = 0;
	for (unsigned h = 0; lay && lay->type == JSON_ARR && h < 3 && 3 * h + 2 < lay->n; h++) {
		const struct json *a = lay->items[3 * h], *b = lay->items[3 * h + 1],
				  *c = lay->items[3 * h + 2];
		char want[128];
		snprintf(want, sizeof want, "host %s \xe2\x80\x94 clock error %s", hosts[h].name,
			 hosts[h].error);
		in_order += strcmp(a->items[0]->s, "host") == 0 && strcmp(a->items[1]->s, want) == 0 &&
			    strcmp(b->items[0]->s, "proc") == 0 && strcmp(c->items[0]->s, "lane") == 0;
	}
	ok(lay && lay->n == 9 && in_order == 3, "report: the timeline's rows are host, process, "
	   "thread, for each host in turn, each host's heading with its clock error");
	json_free(st);
	run_free(&r);
}

/* report DIR: the page of the three hosts. */
static void check_report(const char *dir)
{
	char out[600], since[32], until[32];
	snprintf(out, sizeof out, "%s.html", dir);
	unlink(out);
	struct run r = RUN("report", dir, "-o", out);
	ok(r.status == 0 && strstr(r.out, "hosts: 3\nevents: 30\n") && strstr(r.out, "\nlanes: 3\n"),
	   "report DIR: exit 0, 3 hosts, %d events, 3 lanes (%d %s)", N, r.status, r.err);
	run_free(&r);
	size_t len = 0;
	int fd = open(out, O_RDONLY);
	char *html = fd >= 0 ? proc_slurp_fd(fd, &len) : NULL;
	if (fd >= 0)
		close(fd);
	r = RUN("stats", dir, "--json");
	size_t sl = strlen(r.out);
	if (sl && r.out[sl - 1] == '\n')
		r.out[--sl] = '\0';
	char *at = html && sl ? strstr(html, r.out) : NULL;
	ok(at && at > html + 8 && strncmp(at - 8, "\"stats\":", 8) == 0,
	   "report DIR: the page's data holds stats --json DIR's object as it is");
	run_free(&r);
	free(html);
	const char *bin = chromium_or_skip("report DIR in a browser");
	if (bin)
		check_report_page(bin, out);

	/* A window of the merged timeline: dump's events of it. */
	snprintf(since, sizeof since, "%llu", (unsigned long long)(rt_of(5) - R));
	snprintf(until, sizeof until, "%llu", (unsigned long long)(rt_of(20) - R));
	r = RUN("dump", dir, "--since", since, "--until", until);
	unsigned dumped = 0;
	for (const char *l = r.out; (l = strstr(l, " RAW_U32 ")) != NULL; l++)
		dumped++;
	run_free(&r);
	r = RUN("report", dir, "-o", out, "--force", "--since", since, "--until", until);
	char want[64];
	snprintf(want, sizeof want, "\nevents: %u\n", dumped);
	ok(dumped == 15 && r.status == 0 && strstr(r.out, want),
	   "report DIR --since --until: dump's %u events of the window (%d %s)", dumped, r.status,
	   r.err);
	run_free(&r);
	unlink(out);
}

/* Two hosts whose start times are 2^64 - 2 ns apart, each with an event
 * at a time far from its start: the merge's times saturate instead of
 * overflowing (src/reader/multi.c; undefined behaviour under UBSan). */
static void check_far(void)
{
	char far[] = "/tmp/rlog-hosts-far-XXXXXX";
	BAIL_IF(!mkdtemp(far), "mkdtemp");
	static const uint64_t rt[2] = { 1, UINT64_MAX - 1 };
	static const char *const name[2] = { "near", "far" };
	char path[2][512];
	for (unsigned h = 0; h < 2; h++) {
		struct fg_file f;
		struct fg_block b;
		fg_file_init(&f);
		/* 1 Hz: near's event 2^62 s before its start, far's 2^62 s after. */
		fg_marker_block(&f, 1, 1, 1, h ? 0 : 1ull << 62, rt[h], RLOG_TICK_TSC, 16384, 8, "web");
		fg_block_begin(&b, 100, 100, h ? 1ull << 62 : 0, 0);
		uint32_t p[2] = { h, 0 };
		fg_event(&b, RLOG_ID_RAW_U32, -1, true, 0, p, 8);
		fg_block_end(&f, &b);
		snprintf(path[h], sizeof path[h], "%s/%s_web_%032x.rlog", far, name[h], h + 1);
		BAIL_IF(fg_write(&f, path[h]) < 0, "cannot write %s", path[h]);
		fg_file_free(&f);
	}
	struct run r = RUN("dump", far);
	unsigned events = 0;
	for (const char *l = r.out; (l = strstr(l, "RAW_U32")) != NULL; l++)
		events++;
	if (events != 2)
		diag("%s", r.out);
	ok(r.status == 0 && events == 2, "dump DIR of two hosts 2^64 ns apart: both events (%u), "
	   "exit 0 (%d %s)", events, r.status, r.err);
	run_free(&r);
	r = RUN("stats", far, "--json");
	ok(r.status == 0 && strstr(r.out, "\"events\":2") != NULL, "stats --json of them: 2 events");
	run_free(&r);
	for (unsigned h = 0; h < 2; h++)
		unlink(path[h]);
	rmdir(far);
}

int main(void)
{
	char dir[] = "/tmp/rlog-hosts-XXXXXX", bad[] = "/tmp/rlog-hosts-bad-XXXXXX";
	char empty[] = "/tmp/rlog-hosts-empty-XXXXXX";
	BAIL_IF(!mkdtemp(dir) || !mkdtemp(bad) || !mkdtemp(empty), "mkdtemp");
	for (unsigned h = 0; h < 3; h++)
		write_host(dir, h);
	ok(hosts[0].events + hosts[1].events + hosts[2].events == N && hosts[0].events > 0 &&
	   hosts[1].events > 0 && hosts[2].events > 0, "every host has events");

	struct run r = RUN("dump", dir);
	check_dump(&r, "dump DIR");
	char want[256];
	snprintf(want, sizeof want, "# ringlog dump of 3 hosts, merged by CLOCK_REALTIME: "
		 "time 0 is 2026-11-22T10:00:00.000000000Z\n");
	ok(strncmp(r.out, want, strlen(want)) == 0, "dump DIR: the first header line");
	run_free(&r);

	char f[3][512];
	for (unsigned h = 0; h < 3; h++)
		snprintf(f[h], sizeof f[h], "%s/%s_web_%s.rlog", dir, hosts[h].name, hosts[h].id);
	r = RUN("dump", f[2], f[0], f[1]);
	check_dump(&r, "dump FILE FILE FILE");
	run_free(&r);

	/* stats: per host and the total. */
	r = RUN("stats", dir, "--json");
	char err[128];
	struct json *j = json_parse(r.out, strlen(r.out), err, sizeof err);
	const struct json *hs = j ? json_get(j, "hosts") : NULL;
	const struct json *tot = j ? json_get(j, "total") : NULL;
	bool per_host = hs && hs->type == JSON_ARR && hs->n == 3;
	for (unsigned h = 0; per_host && h < 3; h++) {
		const struct json *o = hs->items[h];
		const char *ev = json_num(o, "events"), *nm = json_str(o, "host");
		const char *id = json_str(o, "host_id");
		per_host = ev && nm && id && strtoull(ev, NULL, 10) == hosts[h].events &&
			   strcmp(nm, hosts[h].name) == 0 && strcmp(id, hosts[h].id) == 0 &&
			   json_is(o, "clock_error_ns", hosts[h].est_ns) &&
			   json_is(o, "clock_max_error_ns", hosts[h].max_ns) &&
			   json_is(o, "clock_synchronized", hosts[h].synced);
	}
	ok(r.status == 0 && per_host, "stats --json DIR: each host's events, name and id; its "
	   "clock error (0 and 345000 ns, unsynchronized, null) (%d %s)", r.status, r.err);
	const char *te = tot ? json_num(tot, "events") : NULL, *th = tot ? json_num(tot, "hosts") : NULL;
	const char *tf = tot ? json_num(tot, "first_realtime_ns") : NULL;
	const char *tl = tot ? json_num(tot, "last_realtime_ns") : NULL;
	ok(te && strtoull(te, NULL, 10) == N && th && strcmp(th, "3") == 0 && tf && tl &&
	   strtoull(tf, NULL, 10) == rt_of(0) && strtoull(tl, NULL, 10) == rt_of(N - 1),
	   "stats --json DIR: the total: %d events of 3 hosts, from the first to the last event's "
	   "real time", N);
	json_free(j);
	run_free(&r);
	r = RUN("stats", dir);
	const char *tline = strstr(r.out, "\ntotal ");
	unsigned long long tev = 0;
	ok(r.status == 0 && tline && sscanf(tline + 7, " - - %llu", &tev) == 1 && tev == N,
	   "stats DIR: a total row of %d events", N);
	const char *al = strstr(r.out, "\nalpha ");
	unsigned long long aev = 0;
	char aid[40] = "";
	ok(al && sscanf(al + 7, " %39s web %llu", aid, &aev) == 2 && aev == hosts[0].events &&
	   strcmp(aid, hosts[0].id) == 0, "stats DIR: alpha's row: its id and %u events",
	   hosts[0].events);
	unsigned rows = 0;
	for (unsigned h = 0; h < 3; h++) {
		char row[64];
		snprintf(row, sizeof row, "\n%s ", hosts[h].name);
		const char *l = strstr(r.out, row), *e = l ? strchr(l + 1, '\n') : NULL;
		size_t el = strlen(hosts[h].error);
		rows += l && e && (size_t)(e - l) > el && strncmp(e - el, hosts[h].error, el) == 0 &&
			e[-el - 1] == ' ';
	}
	ok(rows == 3, "stats DIR: each host's row ends with its clock error");
	run_free(&r);

	check_far();
	check_report(dir);

	/* convert --to chrome: a process group per host. */
	char out[600];
	snprintf(out, sizeof out, "%s.json", dir);
	unlink(out);
	r = RUN("convert", dir, "--to", "chrome", "-o", out);
	ok(r.status == 0 && strstr(r.out, "hosts: 3\n"), "convert DIR --to chrome: exit 0, "
	   "3 hosts (%d %s)", r.status, r.err);
	run_free(&r);
	check_chrome(out);
	unlink(out);
	r = RUN("convert", dir, "--to", "perfetto", "-o", out);
	ok(r.status == 0 && r.err[0] == '\0' && strstr(r.out, "hosts: 3\n") &&
	   strstr(r.out, "\nevents_written: 30\n") && strstr(r.out, "\nfiles: 1\n"),
	   "convert DIR --to perfetto: exit 0, 3 hosts, 30 events written in one file (%d %s)",
	   r.status, r.err);
	run_free(&r);
	check_perfetto(out);
	unlink(out);
	r = RUN("convert", f[2], f[0], "--to", "perfetto", "-o", out, "--split", "1s");
	ok(r.status == 2 && strcmp(r.err, "ringlog: convert: --since, --until, --split and "
	   "--max-size apply to one file only\n") == 0 && access(out, F_OK) != 0,
	   "convert FILE FILE --to perfetto --split: refused, one line (%d %s)", r.status, r.err);
	run_free(&r);
	check_ctf(dir, out);
	check_ctf_names(f[1], dir);

	/* Bad input: one error line naming the file, exit 1. */
	char p[600], w[900];
	snprintf(p, sizeof p, "%s/alpha_web_%s.rlog", bad, hosts[0].id);
	BAIL_IF(rename(f[0], p) < 0, "rename");
	snprintf(p, sizeof p, "%s/broken_web_%s.rlog", bad, hosts[1].id);
	FILE *fp = fopen(p, "w");
	BAIL_IF(!fp, "fopen");
	/* The magic, then text where the version and the rest should be. */
	fputs("RLOGFILE and then not a ringlog file at all, just text padding it out......", fp);
	fclose(fp);
	const char *cmds[] = { "dump", "stats", "convert", "report", "convert" };
	for (int c = 0; c < 5; c++) {
		r = c == 2   ? RUN("convert", bad, "--to", "chrome", "-o", out)
		    : c == 3 ? RUN("report", bad, "-o", out)
		    : c == 4 ? RUN("convert", bad, "--to", "perfetto", "-o", out)
			     : RUN(cmds[c], bad);
		snprintf(w, sizeof w, "ringlog: %s %s: unsupported log file format version\n",
			 cmds[c], p);
		ok(r.status == 1 && strcmp(r.err, w) == 0 && r.out[0] == '\0',
		   "%s DIR with a corrupt file: one line naming it, exit 1 (%d %s)", cmds[c],
		   r.status, r.err);
		run_free(&r);
	}
	ok(access(out, F_OK) != 0, "convert, report: no output left");
	char other[600];
	snprintf(other, sizeof other, "%s/trace.json", bad);
	fp = fopen(other, "w");
	BAIL_IF(!fp, "fopen");
	fputs("{\"traceEvents\":[]}\n", fp);
	fclose(fp);
	r = RUN("dump", f[1], other);
	snprintf(w, sizeof w, "ringlog: dump %s: not a ringlog log file (bad file header)\n", other);
	ok(r.status == 1 && strcmp(r.err, w) == 0, "dump FILE OTHER: another format is refused, "
	   "one line (%d %s)", r.status, r.err);
	run_free(&r);
	r = RUN("dump", "/nonexistent/a", "/nonexistent/b");
	ok(r.status == 1 && strcmp(r.err, "ringlog: dump /nonexistent/a: no such file, or a "
	   "directory without .rlog files\n") == 0, "dump of two missing files: one line naming "
	   "the first, exit 1 (%d %s)", r.status, r.err);
	run_free(&r);
	r = RUN("dump", empty);
	snprintf(w, sizeof w, "ringlog: dump %s: no such file, or a directory without .rlog "
		 "files\n", empty);
	ok(r.status == 1 && strcmp(r.err, w) == 0, "dump of an empty directory: one line (%d %s)",
	   r.status, r.err);
	run_free(&r);

	/* A FIFO named *.rlog beside a log file (and given as FILE): refused
	 * at once, one line naming it, exit 1, not an open that waits for a
	 * writer. */
	char fifo[600];
	snprintf(fifo, sizeof fifo, "%s/zeta_web_%032x.rlog", bad, 7);
	unlink(p);
	BAIL_IF(mkfifo(fifo, 0600) < 0, "mkfifo");
	const char *fcmds[] = { "dump", "stats", "dump", "stats" };
	for (int c = 0; c < 4; c++) {
		struct timespec t0, t1;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		r = RUN(fcmds[c], c < 2 ? bad : fifo);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		double sec = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
		snprintf(w, sizeof w, "ringlog: %s %s: not a regular file\n", fcmds[c], fifo);
		ok(r.status == 1 && strcmp(r.err, w) == 0 && r.out[0] == '\0' && sec < 5,
		   "%s %s with a FIFO: one line naming it, exit 1, in %.2f s (%d %s)", fcmds[c],
		   c < 2 ? "DIR" : "FIFO", sec, r.status, r.err);
		run_free(&r);
	}
	unlink(fifo);

	unlink(other);
	rm_dir(dir);
	rm_dir(bad);
	rmdir(empty);
	return done_testing();
}
