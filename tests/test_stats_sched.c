/*
 * test_stats_sched - `ringlog stats FILE --sched` on a crafted file of
 * system events (docs/FORMAT.md, "System events"; docs/DUMP.md, "stats
 * --sched"), exact numbers: two threads on two CPUs with switches in
 * states running and S, a wake-up, a migration, system calls (one left
 * open at the end, one without a name) and page faults; the intervals
 * closed at the last event; a thread name with a control byte escaped in
 * the text and kept in --json; a DATA_LOSS of cause kernel reported; `convert --to chrome` of the same file:
 * every scheduling slice exactly (the CPUs' tracks, the threads' states);
 * a file without system events.
 */
#include "filegen.h"
#include "proc_run.h"
#include "json.h"
#include "sched_fields.h"
#include "tap.h"

#define S 1000000ull
#define R 1795341600123456789ull
#define US 1000ull /* ticks of 1 ns: times below are in microseconds */
#define T(us) ((uint32_t)(S + (us) * US))

enum { ID_SWITCH = 64, ID_WAKEUP = 65, ID_MIGRATE = 68, ID_TRUNDOWN = 79, ID_ENTER = 80,
       ID_EXIT = 81, ID_FAULT = 88 };

static const struct fg_field f_wakeup[] = {
	{ RLOG_FIELD_U32, 0, "pid" }, { RLOG_FIELD_U32, 0, "tid" },
	{ RLOG_FIELD_I32, 0, "target_tid" }, { RLOG_FIELD_I32, 0, "prio" },
	{ RLOG_FIELD_I32, 0, "target_cpu" }, { RLOG_FIELD_STRING, 0, "comm" } };
static const struct fg_field f_migrate[] = {
	{ RLOG_FIELD_U32, 0, "pid" }, { RLOG_FIELD_U32, 0, "tid" },
	{ RLOG_FIELD_I32, 0, "target_tid" }, { RLOG_FIELD_I32, 0, "orig_cpu" },
	{ RLOG_FIELD_I32, 0, "dest_cpu" }, { RLOG_FIELD_STRING, 0, "comm" } };
static const struct fg_field f_trundown[] = {
	{ RLOG_FIELD_U32, 0, "pid" }, { RLOG_FIELD_U32, 0, "tid" },
	{ RLOG_FIELD_STRING, 0, "comm" } };
static const struct fg_field f_enter[] = {
	{ RLOG_FIELD_U32, 0, "pid" }, { RLOG_FIELD_U32, 0, "tid" },
	{ RLOG_FIELD_I64, 0, "id" }, { RLOG_FIELD_STRING, 0, "name" },
	{ RLOG_FIELD_U64, 0, "arg0" }, { RLOG_FIELD_U64, 0, "arg1" },
	{ RLOG_FIELD_U64, 0, "arg2" }, { RLOG_FIELD_U64, 0, "arg3" },
	{ RLOG_FIELD_U64, 0, "arg4" }, { RLOG_FIELD_U64, 0, "arg5" } };
static const struct fg_field f_exit[] = {
	{ RLOG_FIELD_U32, 0, "pid" }, { RLOG_FIELD_U32, 0, "tid" },
	{ RLOG_FIELD_I64, 0, "id" }, { RLOG_FIELD_STRING, 0, "name" },
	{ RLOG_FIELD_I64, 0, "ret" } };
static const struct fg_field f_fault[] = {
	{ RLOG_FIELD_U32, 0, "pid" }, { RLOG_FIELD_U32, 0, "tid" },
	{ RLOG_FIELD_U64, 0, "address" }, { RLOG_FIELD_U64, 0, "ip" },
	{ RLOG_FIELD_U64, 0, "error_code" } };

#define NAME_B "b\x1b[2Jx" /* a comm with a terminal control sequence */

static void emit(struct fg_block *b, uint16_t id, uint64_t us, struct fg_buf *p)
{
	fg_event(b, id, -1, true, T(us), p->p, (unsigned)p->len);
	free(p->p);
	memset(p, 0, sizeof(*p));
}

static void sw(struct fg_block *b, uint64_t us, uint32_t pid, int32_t prev, int64_t state,
	       const char *pc, int32_t next, const char *nc)
{
	struct fg_buf p = { 0 };
	sf_switch_payload(&p, pid, prev, state, pc, next, nc);
	emit(b, ID_SWITCH, us, &p);
}

static void sys(struct fg_block *b, uint64_t us, bool enter, uint32_t tid, int64_t id,
		const char *name)
{
	struct fg_buf p = { 0 };
	fg_u32(&p, 500);
	fg_u32(&p, tid);
	fg_u64(&p, (uint64_t)id);
	fg_str(&p, name, strlen(name));
	for (int i = 0; i < (enter ? 6 : 1); i++)
		fg_u64(&p, 0);
	emit(b, enter ? ID_ENTER : ID_EXIT, us, &p);
}

static void build(struct fg_file *f)
{
	struct fg_block b;
	struct fg_buf p = { 0 };
	fg_file_init(f);
	fg_marker_block(f, 1, 1, 1000000000u, S, R, RLOG_TICK_TSC, 16384, 8, "sched");

	/* The rundown's block: the schemas, then the threads' names. */
	fg_block_begin(&b, 0, 0xffffffffu, S, 0x0005);
	fg_schema(&b, T(0), ID_SWITCH, RLOG_KIND_EVENT, 0, "sched_switch", sf_switch, 9);
	fg_schema(&b, T(0), ID_WAKEUP, RLOG_KIND_EVENT, 0, "sched_wakeup", f_wakeup, 6);
	fg_schema(&b, T(0), ID_MIGRATE, RLOG_KIND_EVENT, 0, "sched_migrate_task", f_migrate, 6);
	fg_schema(&b, T(0), ID_TRUNDOWN, RLOG_KIND_EVENT, 0, "thread_rundown", f_trundown, 3);
	fg_schema(&b, T(0), ID_ENTER, RLOG_KIND_EVENT, 0, "sys_enter", f_enter, 10);
	fg_schema(&b, T(0), ID_EXIT, RLOG_KIND_EVENT, 0, "sys_exit", f_exit, 5);
	fg_schema(&b, T(0), ID_FAULT, RLOG_KIND_EVENT, 0, "page_fault_user", f_fault, 5);
	for (int i = 0; i < 2; i++) {
		fg_u32(&p, 500);
		fg_u32(&p, 501 + (uint32_t)i);
		fg_str(&p, i ? NAME_B : "worker", strlen(i ? NAME_B : "worker"));
		emit(&b, ID_TRUNDOWN, 500, &p);
	}
	fg_block_end(f, &b);

	/* CPU 0: A (501) runs 1000..6000 us, reads twice, faults three times,
	 * sleeps in nanosleep; B (502) runs 6000..9000 and is preempted. */
	fg_block_begin(&b, 0, 0, S, 0x0005);
	sw(&b, 1000, 0, 0, 0, "swapper/0", 501, "worker");
	sys(&b, 2000, true, 501, 0, "read");
	sys(&b, 2500, false, 501, 0, "read");
	sys(&b, 3000, true, 501, 0, "read");
	sys(&b, 3400, false, 501, 0, "read");
	for (int i = 0; i < 3; i++) {
		fg_u32(&p, 500);
		fg_u32(&p, 501);
		fg_u64(&p, 0x10000u + 4096u * (unsigned)i);
		fg_u64(&p, 0x401000);
		fg_u64(&p, 6);
		emit(&b, ID_FAULT, 4000 + (uint64_t)i, &p);
	}
	sys(&b, 5000, true, 501, 35, "nanosleep");
	sw(&b, 6000, 500, 501, 0x1, "worker", 502, NAME_B);
	sw(&b, 9000, 500, 502, 0, NAME_B, 0, "swapper/0");
	fg_block_end(f, &b);

	/* CPU 1: A woken at 16000, migrated, runs 18000..19000 (preempted),
	 * then B runs from 19000 and enters an unnamed call 1 at 20000, the
	 * last event. */
	fg_block_begin(&b, 0, 1, S, 0x0005);
	fg_u32(&p, 0);
	fg_u32(&p, 0);
	fg_u32(&p, 501);
	fg_u32(&p, 120);
	fg_u32(&p, 1);
	fg_str(&p, "worker", 6);
	emit(&b, ID_WAKEUP, 16000, &p);
	fg_data_loss(&b, T(16500), 7, 0, RLOG_LOSS_KERNEL); /* of other threads */
	fg_u32(&p, 0);
	fg_u32(&p, 0);
	fg_u32(&p, 501);
	fg_u32(&p, 0);
	fg_u32(&p, 1);
	fg_str(&p, "worker", 6);
	emit(&b, ID_MIGRATE, 17000, &p);
	sw(&b, 18000, 0, 0, 0, "swapper/1", 501, "worker");
	sys(&b, 18500, false, 501, 35, "nanosleep");
	sw(&b, 19000, 500, 501, 0, "worker", 502, NAME_B);
	sys(&b, 20000, true, 502, 1, "");
	fg_block_end(f, &b);
}

static const struct json *thread_of(const struct json *j, const char *tid)
{
	const struct json *a = json_get(j, "threads");
	for (size_t i = 0; a && i < a->n; i++)
		if (strcmp(json_num(a->items[i], "tid"), tid) == 0)
			return a->items[i];
	return NULL;
}

static bool nums(const struct json *o, const char *const *kv)
{
	for (size_t i = 0; kv[i]; i += 2) {
		const char *v = o ? json_num(o, kv[i]) : NULL;
		if (!v || strcmp(v, kv[i + 1]) != 0) {
			diag("%s: %s, want %s", kv[i], v ? v : "(none)", kv[i + 1]);
			return false;
		}
	}
	return true;
}

int main(void)
{
	struct fg_file f;
	char path[64], err[128];

	build(&f);
	fg_tmpname(path, "sched");
	BAIL_IF(fg_write(&f, path) < 0, "cannot write %s", path);
	fg_file_free(&f);

	struct run r = RUN("stats", path, "--sched", "--json");
	ok(r.status == 0 && r.err[0] == 0, "--sched --json: exit 0, nothing on stderr (%d: %s)",
	   r.status, r.err);
	struct json *j = json_parse(r.out, strlen(r.out), err, sizeof(err));
	ok(j && j->type == JSON_OBJ, "the output parses%s%s", j ? "" : ": ", j ? "" : err);
	ok(nums(j, (const char *const[]){ "system_events", "19", "switch_events", "5",
					  "wakeup_events", "1", "syscall_events", "7",
					  "fault_events", "3", "lost_events", "7",
					  "loss_records", "1", "first_ns", "500000",
					  "last_ns", "20000000", NULL }),
	   "the system events by kind, the kernel's loss, the first and last times");
	const struct json *th = json_get(j, "threads");
	ok(th && th->n == 2, "two threads (the idle task left out)");
	ok(th && th->n == 2 && strcmp(json_num(th->items[0], "tid"), "501") == 0,
	   "sorted by time on a CPU: 501 first");
	const struct json *a = thread_of(j, "501"), *b = thread_of(j, "502");
	ok(nums(a, (const char *const[]){ "pid", "500", "on_cpu_ns", "6000000",
					  "runnable_ns", "3000000", "blocked_ns", "10000000",
					  "switches", "2", "preempted", "1", "migrations", "1",
					  "wakeups", "1", "syscalls", "3", "syscall_ns", "14400000",
					  "page_faults", "3", "major_faults", "0", NULL }),
	   "501: on a CPU 1000..6000 and 18000..19000, blocked 6000..16000 (S to wake-up), "
	   "runnable 16000..18000 and 19000..20000 (preempted, closed at the end)");
	ok(a && strcmp(json_get(a, "name")->s, "worker") == 0, "501 named worker");
	ok(nums(b, (const char *const[]){ "pid", "500", "on_cpu_ns", "4000000",
					  "runnable_ns", "10000000", "blocked_ns", "0",
					  "switches", "2", "preempted", "1", "migrations", "0",
					  "wakeups", "0", "syscalls", "1", "syscall_ns", "0",
					  "page_faults", "0", NULL }),
	   "502: on a CPU 6000..9000 and 19000..20000, runnable 9000..19000");
	ok(b && strcmp(json_get(b, "name")->s, NAME_B) == 0, "502's name kept whole in JSON");
	const struct json *c = json_get(j, "syscalls");
	ok(c && c->n == 3, "three system calls");
	if (c && c->n == 3) {
		ok(strcmp(json_get(c->items[0], "name")->s, "read") == 0 &&
		   nums(c->items[0], (const char *const[]){ "id", "0", "count", "2", "completed", "2",
							    "total_ns", "900000", "max_ns",
							    "500000", NULL }),
		   "read: 2 calls, 0.9 ms, the longest 0.5 ms");
		ok(strcmp(json_get(c->items[1], "name")->s, "nanosleep") == 0 &&
		   nums(c->items[1], (const char *const[]){ "count", "1", "completed", "1",
							    "total_ns", "13500000", NULL }),
		   "nanosleep: entered on CPU 0, left on CPU 1 13.5 ms later");
		ok(strcmp(json_get(c->items[2], "name")->s, "#1") == 0 &&
		   nums(c->items[2], (const char *const[]){ "count", "1", "completed", "0",
							    "total_ns", "0", NULL }),
		   "an unnamed call by number, open at the end: counted, no time");
	} else {
		for (int i = 0; i < 3; i++)
			ok(false, "no calls");
	}
	json_free(j);
	run_free(&r);

	r = RUN("stats", path, "--sched");
	ok(r.status == 0, "--sched text: exit 0");
	ok(!strchr(r.out, '\x1b'), "no raw escape byte reaches the terminal");
	ok(strstr(r.out, "system events:   19 (switches 5, wake-ups 1, system calls 7, page "
			 "faults 3)\n") != NULL, "the counts line");
	ok(strstr(r.out, "lost:            7 system events in 1 DATA_LOSS records of cause kernel")
	   != NULL, "the loss said");
	ok(strstr(r.out, "\n500  501  worker      6.000     3.000   10.000         2          1  "
			 "         1         3      14.400     3/0\n") != NULL,
	   "501's row in ms");
	ok(strstr(r.out, "\nread           2          2     0.900   0.500\n") != NULL, "read's row");
	if (!ok(strstr(r.out, "\nnanosleep      1          1    13.500  13.500\n") != NULL,
		"nanosleep's row"))
		diag("%s", r.out);
	run_free(&r);

	/* The same file as Chrome JSON: the slices of the CPUs' tracks (pid
	 * 4294967295) and of the threads' states, each exactly, no others. */
	char out[80];
	snprintf(out, sizeof(out), "%s.json", path);
	r = RUN("convert", path, "--to", "chrome", "-o", out, "--force");
	ok(r.status == 0, "convert --to chrome: exit 0 (%s)", r.err);
	run_free(&r);
	size_t len = 0;
	char *js = slurp(out, &len);
	static const char *const want[] = {
#define CPU(name, ts, cpu, dur, tid) \
	"{\"name\":\"" name "\",\"cat\":\"sched\",\"ph\":\"X\",\"ts\":" ts ".000,\"pid\":4294967295," \
	"\"tid\":" cpu ",\"dur\":" dur ".000,\"args\":{\"pid\":500,\"tid\":" tid "}}"
#define ST(name, ts, tid, dur, args) \
	"{\"name\":\"" name "\",\"cat\":\"sched\",\"ph\":\"X\",\"ts\":" ts ".000,\"pid\":500," \
	"\"tid\":" tid ",\"dur\":" dur ".000" args "}"
		CPU("worker", "1000", "0", "5000", "501"),
		CPU("b\\u001b[2Jx", "6000", "0", "3000", "502"),
		CPU("worker", "18000", "1", "1000", "501"),
		CPU("b\\u001b[2Jx", "19000", "1", "1000", "502"),
		ST("running", "1000", "501", "1000", ""),
		ST("syscall read", "2000", "501", "500", ""),
		ST("running", "2500", "501", "500", ""),
		ST("syscall read", "3000", "501", "400", ""),
		ST("running", "3400", "501", "1600", ""),
		ST("syscall nanosleep", "5000", "501", "1000", ""),
		ST("sleeping", "6000", "501", "10000", ",\"args\":{\"syscall\":\"nanosleep\"}"),
		ST("runnable", "16000", "501", "2000", ",\"args\":{\"syscall\":\"nanosleep\"}"),
		ST("syscall nanosleep", "18000", "501", "500", ""),
		ST("running", "18500", "501", "500", ""),
		ST("runnable", "19000", "501", "1000", ""),
		ST("running", "6000", "502", "3000", ""),
		ST("runnable", "9000", "502", "10000", ""),
		ST("running", "19000", "502", "1000", ""),
#undef CPU
#undef ST
	};
	size_t nwant = sizeof(want) / sizeof(want[0]), found = 0, sched = 0;
	for (size_t i = 0; i < nwant; i++) {
		if (js && strstr(js, want[i]))
			found++;
		else
			diag("missing: %s", want[i]);
	}
	for (const char *p = js; p && (p = strstr(p, "\"cat\":\"sched\"")); p++)
		sched++;
	ok(found == nwant, "each of the %zu slices is in the JSON (%zu)", nwant, found);
	ok(sched == nwant, "no other slice (%zu of cat sched)", sched);
	ok(js && strstr(js, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":4294967295,"
			    "\"args\":{\"name\":\"CPUs\"}}") &&
	   strstr(js, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":4294967295,\"tid\":1,"
		      "\"args\":{\"name\":\"CPU 1\"}}") &&
	   strstr(js, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":500,\"tid\":501,"
		      "\"args\":{\"name\":\"worker\"}}"),
	   "the CPUs' track and the threads named");
	free(js);
	unlink(out);

	/* A file without system events. */
	fg_file_init(&f);
	fg_marker_block(&f, 1, 1, 1000000000u, S, R, RLOG_TICK_TSC, 16384, 8, "none");
	BAIL_IF(fg_write(&f, path) < 0, "cannot write %s", path);
	fg_file_free(&f);
	r = RUN("stats", path, "--sched");
	ok(r.status == 0 && strstr(r.out, "system events:   0 ") &&
	   strstr(r.out, "(no system events: record with 'ringlog start --system"),
	   "no system events: said so, exit 0");
	run_free(&r);
	r = RUN("stats", path, "--sched", "--json");
	ok(r.status == 0 && strstr(r.out, "\"system_events\":0,") &&
	   strstr(r.out, "\"threads\":[],\"syscalls\":[]}"), "--json of none: empty lists");
	run_free(&r);
	unlink(path);
	return done_testing();
}
