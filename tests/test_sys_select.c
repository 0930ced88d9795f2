/*
 * test_sys_select.c - selecting system events (docs/SESSIONS.md, "System
 * events"), exactly:
 *
 *   1. the --system parser: every name its bit, `all`, `none`, ETW's
 *      hexadecimal EnableFlags (0x13 = process, thread, cswitch), mixes;
 *      each bad item (an unknown name, a decimal number, an empty item,
 *      each ETW flag without a Linux counterpart, a bit that is no flag,
 *      bad hex) refused with its exact line; the names printed back;
 *      --system-pid and --profile-hz likewise;
 *   2. docs/SESSIONS.md's table of ETW's flags against the parser (each
 *      value with a name parses to it, each value without one is
 *      refused, every name has its row) and every tracepoint it names
 *      against /sys/kernel/tracing/events;
 *   3. the region's copy (struct rlog_shm_sys) under its seqlock: what is
 *      put is read back; a count past RLOG_SYS_PIDS_MAX is -EPROTO, a
 *      sequence left odd -EAGAIN, too small a pid array -ENOBUFS; the
 *      rules of start and update; the scope a daemon keeps (the pid list,
 *      the attached processes with --follow);
 *   4. the real `ringlog`: start --system with a pid scope and --follow,
 *      query (text and JSON) and list showing them, update changing them,
 *      each bad option one line and exit 1 with the session unchanged, and
 *      system_recording what the daemon opened for them at its next pass
 *      (all of the selections here: this kernel has their sources).
 */
#define _GNU_SOURCE
#include "harness.h"

#include <ctype.h>
#include <limits.h>
#include <sys/stat.h>

#include "counter_catalog.h"
#include "md_table.h"
#include "shm.h"
#include "sysflags_names.h"
#include "sysperm.h"
#include "sysprops.h"

/* --------------------------------------------------------------- */
/* 1. The parsers                                                   */
/* --------------------------------------------------------------- */

static void parse_ok(const char *list, uint64_t want)
{
	char why[512] = "";
	uint64_t got = 0xdead;
	int err = rlog__sys_parse(list, &got, why, sizeof why);
	if (!ok(err == 0 && got == want, "--system %s = 0x%llx", list, (unsigned long long)want))
		diag("got %d, 0x%llx, why '%s'", err, (unsigned long long)got, why);
}

static void parse_bad(const char *list, const char *line)
{
	char why[512] = "";
	uint64_t got = 0;
	ASSERT_EQ(rlog__sys_parse(list, &got, why, sizeof why), -EINVAL);
	ASSERT_STREQ(why, line);
}

static void test_parser(void)
{
	size_t n;
	const struct rlog__sys_flag_def *d = rlog__sys_flag_defs(&n);
	ASSERT_EQ(n, 15);
	uint64_t all = 0;
	for (size_t i = 0; i < n; i++) {
		parse_ok(d[i].name, d[i].bit);
		ok(i == 0 || d[i].bit > d[i - 1].bit, "%s in bit order", d[i].name);
		all |= d[i].bit;
	}
	ASSERT_EQ_U64(all, rlog__sys_all());
	ASSERT_EQ_U64(all, UINT64_C(0x1030131ff));
	parse_ok("process", 0x1);
	parse_ok("thread", 0x2);
	parse_ok("image-load", 0x4);
	parse_ok("process-counters", 0x8);
	parse_ok("cswitch", 0x10);
	parse_ok("softirq", 0x20);
	parse_ok("interrupt", 0x40);
	parse_ok("syscall", 0x80);
	parse_ok("disk-io", 0x100);
	parse_ok("page-faults", 0x1000);
	parse_ok("hard-faults", 0x2000);
	parse_ok("network", 0x10000);
	parse_ok("profile", 0x1000000);
	parse_ok("file-io", 0x2000000);
	parse_ok("wakeup", UINT64_C(0x100000000));
	parse_ok("all", all);
	parse_ok("none", 0);
	parse_ok("0x13", 0x13);
	parse_ok("0X13", 0x13);
	parse_ok("0x0", 0);
	parse_ok("0x13,wakeup", UINT64_C(0x100000013));
	parse_ok("cswitch,0x1,cswitch", 0x11);
	parse_ok("none,syscall", 0x80);
	parse_ok("0x1030131ff", all);
	parse_ok("0x0000000000000010", 0x10);

	parse_bad("foo", "--system 'foo': not a system event (process, thread, image-load, "
			 "process-counters, cswitch, softirq, interrupt, syscall, disk-io, "
			 "page-faults, hard-faults, network, profile, file-io, wakeup, all, none, or "
			 "the seed's hexadecimal EnableFlags such as 0x13)");
	parse_bad("cswitch,CSWITCH", "--system 'CSWITCH': not a system event (process, thread, "
				     "image-load, process-counters, cswitch, softirq, interrupt, "
				     "syscall, disk-io, page-faults, hard-faults, network, profile, "
				     "file-io, wakeup, all, none, or the seed's hexadecimal "
				     "EnableFlags such as 0x13)");
	parse_bad("19", "--system '19': a number is the seed's EnableFlags, in hexadecimal: "
			"write 0x...");
	parse_bad("0", "--system '0': a number is the seed's EnableFlags, in hexadecimal: write "
		       "0x...");
	parse_bad("", "--system '': an empty item (names and 0x numbers, separated by single "
		      "commas)");
	parse_bad("cswitch,", "--system 'cswitch,': an empty item (names and 0x numbers, "
			      "separated by single commas)");
	parse_bad("cswitch,,thread", "--system 'cswitch,,thread': an empty item (names and 0x "
				     "numbers, separated by single commas)");
	parse_bad("0x", "--system '0x': not a hexadecimal number of at most 64 bits");
	parse_bad("0x1g", "--system '0x1g': not a hexadecimal number of at most 64 bits");
	parse_bad("0x10000000000000000", "--system '0x10000000000000000': not a hexadecimal "
					 "number of at most 64 bits");
	parse_bad("0x200", "--system 0x200: EVENT_TRACE_FLAG_DISK_FILE_IO is part of file-io "
			   "(0x2000000) on Linux: the file names are the paths of the open calls "
			   "(docs/SESSIONS.md)");
	parse_bad("0x400", "--system 0x400: EVENT_TRACE_FLAG_DISK_IO_INIT is part of disk-io "
			   "(0x100) on Linux: block_rq_issue is the request's start "
			   "(docs/SESSIONS.md)");
	parse_bad("0x20000", "--system 0x20000: EVENT_TRACE_FLAG_REGISTRY has no Linux "
			     "counterpart: Linux has no registry (docs/SESSIONS.md)");
	parse_bad("0x100000", "--system 0x100000: EVENT_TRACE_FLAG_ALPC has no Linux counterpart: "
			      "ALPC is Windows' local procedure call; Linux's pipes, sockets and "
			      "futexes show as syscall and wakeup (docs/SESSIONS.md)");
	parse_bad("0x200000", "--system 0x200000: EVENT_TRACE_FLAG_SPLIT_IO has no Linux "
			      "counterpart: it is the Windows I/O manager splitting a request; "
			      "disk-io records each request as the device gets it, after any split "
			      "(docs/SESSIONS.md)");
	parse_bad("0x800000", "--system 0x800000: EVENT_TRACE_FLAG_DRIVER has no Linux "
			      "counterpart: it is Windows drivers' I/O request packets; disk-io and "
			      "interrupt show the devices' side (docs/SESSIONS.md)");
	parse_bad("0x4000000", "--system 0x4000000: EVENT_TRACE_FLAG_FILE_IO_INIT is part of "
			       "file-io (0x2000000) on Linux: the system call's entry is the "
			       "operation's start (docs/SESSIONS.md)");
	/* The lowest bad bit of a value is the one named. */
	parse_bad("0x20013", "--system 0x20000: EVENT_TRACE_FLAG_REGISTRY has no Linux "
			     "counterpart: Linux has no registry (docs/SESSIONS.md)");
	parse_bad("0x800", "--system 0x800: not a system event flag (docs/SESSIONS.md lists "
			   "them)");
	parse_bad("0x200000000", "--system 0x200000000: not a system event flag "
				 "(docs/SESSIONS.md lists them)");
	parse_bad("cswitch,0x8000000000000000", "--system 0x8000000000000000: not a system event "
						"flag (docs/SESSIONS.md lists them)");

	char names[512];
	rlog__sys_names(0, names, sizeof names);
	ASSERT_STREQ(names, "none");
	rlog__sys_names(0x13, names, sizeof names);
	ASSERT_STREQ(names, "process,thread,cswitch");
	rlog__sys_names(all, names, sizeof names);
	ASSERT_STREQ(names, "process,thread,image-load,process-counters,cswitch,softirq,interrupt,"
			    "syscall,disk-io,page-faults,hard-faults,network,profile,file-io,wakeup");
	/* A bit a reader does not know (a newer writer's) shows as a number. */
	rlog__sys_names(UINT64_C(0x8000000000000010), names, sizeof names);
	ASSERT_STREQ(names, "cswitch,0x8000000000000000");
	/* Cut at the buffer's size, NUL-terminated. */
	char small[12];
	rlog__sys_names(0x13, small, sizeof small);
	ASSERT_STREQ(small, "process,thr");
	/* The counters' masks print the same way (names_format.h). */
	size_t ncd;
	const struct rlog__counter_def *cd = rlog__counter_defs(&ncd);
	BAIL_IF(ncd < 2, "counter catalog");
	rlog__counter_names(0, names, sizeof names);
	ASSERT_STREQ(names, "none");
	char want2[256];
	snprintf(want2, sizeof want2, "%s,%s", cd[0].name, cd[1].name);
	rlog__counter_names(((uint64_t)1 << cd[0].bit) | ((uint64_t)1 << cd[1].bit), names,
			    sizeof names);
	ASSERT_STREQ(names, want2);
	/* Every list of names parses back to its flags. */
	for (uint64_t f = 0; f < 64; f++) {
		uint64_t flags = (f * UINT64_C(0x9e3779b97f4a7c15)) & all, back = 0;
		char why[512];
		rlog__sys_names(flags, names, sizeof names);
		if (rlog__sys_parse(names, &back, why, sizeof why) < 0 || back != flags) {
			ok(0, "names of 0x%llx parse back", (unsigned long long)flags);
			break;
		}
	}

	uint32_t pids[RLOG_SYS_PIDS_MAX], np = 99;
	char why[512] = "";
	ASSERT_EQ(rlog__sys_pids_parse("12,345,12,1", pids, RLOG_SYS_PIDS_MAX, &np, why, sizeof why),
		  0);
	ASSERT_EQ(np, 3);
	ok(pids[0] == 12 && pids[1] == 345 && pids[2] == 1, "pids 12,345,1 in order, once each");
	rlog__sys_pids_text(pids, np, names, sizeof names);
	ASSERT_STREQ(names, "12,345,1");
	ASSERT_EQ(rlog__sys_pids_parse("all", pids, RLOG_SYS_PIDS_MAX, &np, why, sizeof why), 0);
	ASSERT_EQ(np, 0);
	rlog__sys_pids_text(pids, 0, names, sizeof names);
	ASSERT_STREQ(names, "all");
	static const char *bad_pids[] = { "0", "4194305", "-1", "1,,2", "1,", "x", "" };
	for (size_t i = 0; i < sizeof bad_pids / sizeof bad_pids[0]; i++)
		ok(rlog__sys_pids_parse(bad_pids[i], pids, RLOG_SYS_PIDS_MAX, &np, why, sizeof why) ==
			   -EINVAL, "--system-pid '%s' refused", bad_pids[i]);
	rlog__sys_pids_parse("4194305", pids, RLOG_SYS_PIDS_MAX, &np, why, sizeof why);
	ASSERT_STREQ(why, "--system-pid '4194305': expected process ids (1 to 4194304) separated "
			  "by commas, or all");
	char many[RLOG_SYS_PIDS_MAX * 8] = "";
	for (int i = 1; i <= (int)RLOG_SYS_PIDS_MAX + 1; i++)
		snprintf(many + strlen(many), sizeof many - strlen(many), "%s%d", i > 1 ? "," : "", i);
	ASSERT_EQ(rlog__sys_pids_parse(many, pids, RLOG_SYS_PIDS_MAX, &np, why, sizeof why),
		  -EINVAL);
	ASSERT_STREQ(why, "--system-pid: at most 120 processes");

	uint32_t hz = 0;
	ASSERT_EQ(rlog__sys_profile_hz_parse("4000", &hz, why, sizeof why), 0);
	ASSERT_EQ(hz, 4000);
	static const char *bad_hz[] = { "0", "100001", "1k", "-5", "", "0x10" };
	for (size_t i = 0; i < sizeof bad_hz / sizeof bad_hz[0]; i++)
		ok(rlog__sys_profile_hz_parse(bad_hz[i], &hz, why, sizeof why) == -EINVAL,
		   "--profile-hz '%s' refused", bad_hz[i]);
	ASSERT_STREQ(why, "--profile-hz '0x10': expected samples a second, 1 to 100000");
}

/* --------------------------------------------------------------- */
/* 2. docs/SESSIONS.md's table                                      */
/* --------------------------------------------------------------- */

static void test_docs_table(void)
{
	const char *path = getenv("RINGLOG_SESSIONS_MD");
	BAIL_IF(path == NULL, "RINGLOG_SESSIONS_MD must name docs/SESSIONS.md (tests/meson.build)");
	FILE *f = fopen(path, "r");
	BAIL_IF(f == NULL, "cannot open %s", path);
	struct stat st;
	bool tracefs = stat("/sys/kernel/tracing/events/sched", &st) == 0;
	if (!tracefs)
		diag("no readable /sys/kernel/tracing/events: the tracepoints' names are not checked");
	char line[4096];
	bool in = false;
	int rows = 0, named = 0, tracepoints = 0;
	uint64_t seen = 0;
	while (fgets(line, sizeof line, f)) {
		if (line[0] == '#') {
			in = strcmp(line, "### The flags and their Linux sources\n") == 0;
			continue;
		}
		char *cells[8];
		if (!in || split_row(line, cells, 8) != 5 || strncmp(cells[0], "---", 3) == 0 ||
		    strcmp(cells[0], "ETW flag") == 0)
			continue;
		rows++;
		unsigned long long v = strtoull(cells[1], NULL, 16);
		char why[512];
		uint64_t flags = 0;
		if (cells[2][0]) {
			named++;
			/* The name parses to the row's value, and so does the value. */
			ok(rlog__sys_parse(cells[2], &flags, why, sizeof why) == 0 && flags == v,
			   "%s: %s is %s", cells[0], cells[2], cells[1]);
			ok(rlog__sys_parse(cells[1], &flags, why, sizeof why) == 0 && flags == v,
			   "%s: %s parses", cells[0], cells[1]);
			seen |= v;
		} else {
			ok(rlog__sys_parse(cells[1], &flags, why, sizeof why) == -EINVAL &&
				   strstr(why, cells[0]) != NULL,
			   "%s: %s refused, naming it", cells[0], cells[1]);
		}
		/* Every `group:name` of the source column is a tracepoint. */
		for (char *p = strchr(cells[3], '`'); p; p = strchr(p, '`')) {
			char *q = strchr(p + 1, '`');
			if (q == NULL)
				break;
			*q = '\0';
			char *colon = strchr(p + 1, ':');
			if (colon && strspn(p + 1, "abcdefghijklmnopqrstuvwxyz_0123456789:") ==
					     strlen(p + 1)) {
				char dir[256];
				*colon = '/';
				snprintf(dir, sizeof dir, "/sys/kernel/tracing/events/%s", p + 1);
				tracepoints++;
				if (tracefs)
					ok(stat(dir, &st) == 0, "tracepoint %s exists", dir + 27);
			}
			p = q + 1;
		}
	}
	fclose(f);
	ASSERT_EQ(rows, 22); /* ETW's 21 flags and ringlog's wakeup */
	ASSERT_EQ(named, 15);
	ASSERT_EQ_U64(seen, rlog__sys_all());
	ok(tracepoints >= 30, "the table names %d tracepoints", tracepoints);
}

/* --------------------------------------------------------------- */
/* 3. The region's copy                                             */
/* --------------------------------------------------------------- */

static void test_region_copy(void)
{
	/* A header and the request page after it, as a region has them. */
	static _Alignas(64) uint8_t region[sizeof(struct rlog_shm_header) +
					   sizeof(struct rlog_shm_ctl)];
	struct rlog_shm_header *h = (struct rlog_shm_header *)region;
	struct rlog_shm_ctl *ctl = (struct rlog_shm_ctl *)(region + sizeof *h);
	struct rlog__sys_props p, q;
	rlog__sys_props_default(&p);
	ASSERT_EQ(p.profile_hz, 1000);
	p.flags = 0x13;
	p.profile_hz = 250;
	p.follow = true;
	p.npids = 3;
	p.pids[0] = 7, p.pids[1] = 8, p.pids[2] = 9;
	rlog__sys_props_put(h, &p);
	ASSERT_EQ(atomic_load(&ctl->sys.seq), 2);
	ASSERT_EQ_U64(atomic_load(&ctl->sys.flags), 0x13);
	ASSERT_EQ(atomic_load(&ctl->sys.options), RLOG_SYS_OPT_FOLLOW);
	ASSERT_EQ(rlog__sys_props_get(h, &q), 0);
	ok(q.flags == 0x13 && q.profile_hz == 250 && q.follow && q.npids == 3 && q.pids[0] == 7 &&
		   q.pids[1] == 8 && q.pids[2] == 9, "what was put is read back");

	/* The daemon's accessor, as the lead wires it. */
	uint64_t flags = 0;
	uint32_t hz = 0, pids[2];
	size_t np = 2;
	bool follow = false;
	ASSERT_EQ(rlog__sys_props_read(h, &flags, &hz, pids, &np, &follow), -ENOBUFS);
	ASSERT_EQ(np, 3);
	np = 0;
	ASSERT_EQ(rlog__sys_props_read(h, &flags, &hz, NULL, &np, &follow), 0);
	ok(flags == 0x13 && hz == 250 && follow && np == 3, "flags, rate, follow and the count");

	atomic_store(&ctl->sys.npids, RLOG_SYS_PIDS_MAX + 1);
	ASSERT_EQ(rlog__sys_props_get(h, &q), -EPROTO);
	atomic_store(&ctl->sys.npids, 3);
	atomic_store(&ctl->sys.seq, 5); /* a writer that died in the middle */
	ASSERT_EQ(rlog__sys_props_get(h, &q), -EAGAIN);
	ok(q.flags == 0 && q.npids == 0, "nothing is taken from a torn copy");
	/* The next writer takes the dead one's turn over (after a second). */
	p.flags = 0x10;
	rlog__sys_props_put(h, &p);
	ASSERT_EQ(atomic_load(&ctl->sys.seq), 8);
	ASSERT_EQ(rlog__sys_props_get(h, &q), 0);
	ASSERT_EQ_U64(q.flags, 0x10);

	/* update's read-modify-write: one write; a refusal changes nothing. */
	struct rlog__sys_props g;
	char msg[512];
	rlog__sys_props_default(&g);
	g.profile_hz = 77;
	ASSERT_EQ(rlog__sys_props_change(h, &g, RLOG__SYS_GIVE_PROFILE_HZ, msg, sizeof msg), -EINVAL);
	ASSERT_STREQ(msg, "--profile-hz needs profile in --system");
	ASSERT_EQ(atomic_load(&ctl->sys.seq), 10);
	g.flags = RLOG_SYS_PROFILE | RLOG_SYS_CSWITCH;
	ASSERT_EQ(rlog__sys_props_change(h, &g, RLOG__SYS_GIVE_FLAGS | RLOG__SYS_GIVE_PROFILE_HZ, msg,
					 sizeof msg), 0);
	ASSERT_EQ(rlog__sys_props_get(h, &q), 0);
	ok(q.flags == (RLOG_SYS_PROFILE | RLOG_SYS_CSWITCH) && q.profile_hz == 77 && q.follow &&
		   q.npids == 3 && q.pids[2] == 9, "the fields given changed, the others kept");
	atomic_store(&ctl->sys.npids, RLOG_SYS_PIDS_MAX + 1);
	ASSERT_EQ(rlog__sys_props_change(h, &g, RLOG__SYS_GIVE_FLAGS, msg, sizeof msg), -EPROTO);
	atomic_store(&ctl->sys.npids, 3);

	/* The rules of start and update. */
	struct rlog__sys_props cur, given;
	char why[512];
	rlog__sys_props_default(&cur);
	rlog__sys_props_default(&given);
	given.npids = 1;
	given.pids[0] = (uint32_t)getpid();
	ASSERT_EQ(rlog__sys_props_apply(&cur, &given, RLOG__SYS_GIVE_PIDS, why, sizeof why), -EINVAL);
	ASSERT_STREQ(why, "--system-pid needs --system (the system events to record)");
	given.follow = true;
	ASSERT_EQ(rlog__sys_props_apply(&cur, &given, RLOG__SYS_GIVE_FOLLOW, why, sizeof why),
		  -EINVAL);
	ASSERT_STREQ(why, "--follow needs --system (the system events to record)");
	given.flags = RLOG_SYS_CSWITCH;
	given.profile_hz = 50;
	ASSERT_EQ(rlog__sys_props_apply(&cur, &given, RLOG__SYS_GIVE_FLAGS | RLOG__SYS_GIVE_PROFILE_HZ,
					why, sizeof why), -EINVAL);
	ASSERT_STREQ(why, "--profile-hz needs profile in --system");
	ok(cur.flags == 0 && cur.profile_hz == 1000, "a refused change changes nothing");
	ASSERT_EQ(rlog__sys_props_apply(&cur, &given, RLOG__SYS_GIVE_FLAGS | RLOG__SYS_GIVE_PIDS |
					RLOG__SYS_GIVE_FOLLOW, why, sizeof why), 0);
	ok(cur.flags == RLOG_SYS_CSWITCH && cur.npids == 1 && cur.follow && cur.profile_hz == 1000,
	   "flags, pids and follow taken; the rate not given stays");
	/* A pid that names no process: pid_max is at most 4194304. */
	given.pids[0] = 4194304;
	ASSERT_EQ(rlog__sys_props_apply(&cur, &given, RLOG__SYS_GIVE_PIDS, why, sizeof why), -EINVAL);
	ASSERT_STREQ(why, "--system-pid 4194304: no such process");
	/* Taking the selection away leaves the scope as it was: a later
	 * --system finds it. */
	given.flags = 0;
	ASSERT_EQ(rlog__sys_props_apply(&cur, &given, RLOG__SYS_GIVE_FLAGS, why, sizeof why), 0);
	ok(cur.flags == 0 && cur.npids == 1, "--system none keeps the scope");
}

/* The scope a daemon keeps: the pid list and, with follow, the processes
 * attached now, each once; the whole machine only without either. */
static void test_scope(void)
{
	struct rlog__region_params prm;
	memset(&prm, 0, sizeof prm);
	prm.buffer_size = 4096;
	prm.min_buffers = prm.max_buffers = 2;
	struct rlog__region r;
	const char *name = h_session("scope");
	BAIL_IF(rlog__region_create(name, &prm, &r) < 0, "cannot create a region");
	struct rlog__sys_props p;
	rlog__sys_props_default(&p);
	uint32_t out[8];
	bool whole = false;
	ASSERT_EQ(rlog__sys_scope(&r, &p, out, 8, &whole), 0);
	ok(whole, "no list, no follow: the whole machine");
	p.follow = true;
	ASSERT_EQ(rlog__sys_scope(&r, &p, out, 8, &whole), 0);
	ok(!whole, "follow with nobody attached: no process yet, not the machine");
	/* Attached: 500 and 700; 600 exited; an entry being claimed (pid 0). */
	atomic_store(&r.procs[0].state, RLOG_PROC_ACTIVE);
	atomic_store(&r.procs[0].pid, 500);
	atomic_store(&r.procs[1].state, RLOG_PROC_EXITED);
	atomic_store(&r.procs[1].pid, 600);
	atomic_store(&r.procs[2].state, RLOG_PROC_ACTIVE);
	atomic_store(&r.procs[3].state, RLOG_PROC_ACTIVE);
	atomic_store(&r.procs[3].pid, 700);
	p.npids = 2;
	p.pids[0] = 700;
	p.pids[1] = 42;
	ASSERT_EQ(rlog__sys_scope(&r, &p, out, 8, &whole), 3);
	ok(!whole && out[0] == 700 && out[1] == 42 && out[2] == 500,
	   "the list, then the attached ones not in it");
	p.follow = false;
	ASSERT_EQ(rlog__sys_scope(&r, &p, out, 8, &whole), 2);
	ASSERT_EQ(rlog__sys_scope(&r, &p, out, 1, &whole), 1);
	rlog__region_unlink(name);
	rlog__region_close(&r);
}

/* --------------------------------------------------------------- */
/* 4. The real ringlog                                              */
/* --------------------------------------------------------------- */

/* The value of line "key: ..." in text ("" if absent). */
static const char *kv_text(const char *text, const char *key, char *out, size_t n)
{
	size_t kl = strlen(key);
	out[0] = '\0';
	for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		if (strncmp(p, key, kl) == 0 && p[kl] == ':' && p[kl + 1] == ' ') {
			size_t len = strcspn(p + kl + 2, "\n");
			snprintf(out, n, "%.*s", (int)len, p + kl + 2);
			break;
		}
	return out;
}

static void expect_query(const char *name, const char *sys, const char *flags, const char *pids,
			 unsigned follow, unsigned hz)
{
	struct h_run r;
	char v[256], want[64];
	/* The daemon takes a new selection at its next pass. */
	for (int i = 0; i < 300; i++) {
		h_ringlog(&r, "query", name, NULL);
		if (r.status != 0 || strcmp(kv_text(r.out, "system_recording", v, sizeof v), sys) == 0)
			break;
		struct timespec ts = { 0, 10 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
	ASSERT_EQ(r.status, 0);
	ASSERT_STREQ(kv_text(r.out, "system", v, sizeof v), sys);
	ASSERT_STREQ(kv_text(r.out, "system_flags", v, sizeof v), flags);
	ASSERT_STREQ(kv_text(r.out, "system_pids", v, sizeof v), pids);
	snprintf(want, sizeof want, "%u", follow);
	ASSERT_STREQ(kv_text(r.out, "system_follow", v, sizeof v), want);
	snprintf(want, sizeof want, "%u", hz);
	ASSERT_STREQ(kv_text(r.out, "profile_hz", v, sizeof v), want);
	/* The daemon's engine records them: query says so. */
	ASSERT_STREQ(kv_text(r.out, "system_recording", v, sizeof v), sys);
}

/* `ringlog update NAME ARGS` refused with exactly line. */
static void update_bad(const char *name, const char *a1, const char *a2, const char *line)
{
	struct h_run r;
	h_ringlog(&r, "update", name, a1, a2, NULL);
	ASSERT_EQ(r.status, 1);
	ASSERT_STREQ(r.err, line);
}

static void test_cli(void)
{
	char why[512];
	if (rlog__sys_priv_check(why, sizeof why) < 0) {
		diag("the CLI part needs the privileges of system events: %s", why);
		return;
	}
	const char *name = h_session("sys");
	char sname[64], me[16], line[PATH_MAX + 256];
	snprintf(sname, sizeof sname, "%s", name);
	snprintf(me, sizeof me, "%d", (int)getpid());
	const char *path = h_path("sys");
	unlink(path);
	struct h_run r;

	/* A scope without events: refused, nothing created. */
	h_ringlog(&r, "start", sname, "-o", path, "--system-pid", me, NULL);
	ASSERT_EQ(r.status, 1);
	ASSERT_STREQ(r.err, "ringlog: start: --system-pid needs --system (the system events to "
			    "record)\n");
	h_ringlog(&r, "query", sname, NULL);
	ASSERT_EQ(r.status, 1);
	ok(access(path, F_OK) < 0, "no log file left");
	h_ringlog(&r, "start", sname, "-o", path, "--system", "cswitch,bogus", NULL);
	ASSERT_EQ(r.status, 1);
	ASSERT_CONTAINS(r.err, "ringlog: start: --system 'bogus': not a system event (process,");
	ok(strchr(r.err, '\n') == r.err + strlen(r.err) - 1, "one line");

	h_ringlog(&r, "start", sname, "-o", path, "--system", "0x13,wakeup", "--system-pid", me,
		  "--follow", NULL);
	BAIL_IF(r.status != 0, "start --system failed (%d): %s", r.status, r.err);
	expect_query(sname, "process,thread,cswitch,wakeup", "0x100000013", me, 1, 1000);

	h_ringlog(&r, "query", sname, "--json", NULL);
	ASSERT_EQ(r.status, 0);
	ASSERT_CONTAINS(r.out, "\"system\":\"process,thread,cswitch,wakeup\",\"system_flags\":"
			       "\"0x100000013\",\"system_pids\":\"");
	snprintf(line, sizeof line, "\"system_pids\":\"%s\",\"system_follow\":1,\"profile_hz\":1000,"
				    "\"system_recording\":\"process,thread,cswitch,wakeup\"", me);
	ASSERT_CONTAINS(r.out, line);

	h_ringlog(&r, "list", NULL);
	ASSERT_EQ(r.status, 0);
	char abs[PATH_MAX];
	BAIL_IF(realpath(path, abs) == NULL, "no log file %s", path);
	char lowered[64];
	for (size_t i = 0; i <= strlen(sname); i++)
		lowered[i] = (char)tolower((unsigned char)sname[i]);
	snprintf(line, sizeof line, "%-24.64s %-9s %s  system: process,thread,cswitch,wakeup\n",
		 lowered, "active", abs);
	ASSERT_CONTAINS(r.out, line);

	h_ringlog(&r, "update", sname, "--system", "profile,syscall", "--profile-hz", "250",
		  "--no-follow", NULL);
	ASSERT_EQ(r.status, 0);
	ASSERT_STREQ(r.err, "");
	expect_query(sname, "syscall,profile", "0x1000080", me, 0, 250);
	h_ringlog(&r, "update", sname, "--system-pid", "all", NULL);
	ASSERT_EQ(r.status, 0);
	expect_query(sname, "syscall,profile", "0x1000080", "all", 0, 250);

	/* Each refusal: one line, exit 1, the session as it was. */
	update_bad(sname, "--system", "0x20000",
		   "ringlog: update: --system 0x20000: EVENT_TRACE_FLAG_REGISTRY has no Linux "
		   "counterpart: Linux has no registry (docs/SESSIONS.md)\n");
	update_bad(sname, "--system", "19",
		   "ringlog: update: --system '19': a number is the seed's EnableFlags, in "
		   "hexadecimal: write 0x...\n");
	/* pid_max is at most 4194304: no process has that pid. */
	update_bad(sname, "--system-pid", "4194304",
		   "ringlog: update: --system-pid 4194304: no such process\n");
	update_bad(sname, "--profile-hz", "100001",
		   "ringlog: update: --profile-hz '100001': expected samples a second, 1 to "
		   "100000\n");
	h_ringlog(&r, "update", sname, "--system", "cswitch", "--profile-hz", "10", NULL);
	ASSERT_EQ(r.status, 1);
	ASSERT_STREQ(r.err, "ringlog: update: --profile-hz needs profile in --system\n");
	expect_query(sname, "syscall,profile", "0x1000080", "all", 0, 250);

	/* file-io, network and process-counters, by name and by ETW's
	 * value (FILE_IO | NETWORK_TCPIP | PROCESS_COUNTERS): recorded. */
	h_ringlog(&r, "update", sname, "--system", "file-io,network,process-counters", NULL);
	ASSERT_EQ(r.status, 0);
	expect_query(sname, "process-counters,network,file-io", "0x2010008", "all", 0, 250);
	h_ringlog(&r, "update", sname, "--system", "0x2010008", NULL);
	ASSERT_EQ(r.status, 0);
	expect_query(sname, "process-counters,network,file-io", "0x2010008", "all", 0, 250);

	h_ringlog(&r, "update", sname, "--system", "none", NULL);
	ASSERT_EQ(r.status, 0);
	expect_query(sname, "none", "0x0", "all", 0, 250);
	h_ringlog(&r, "list", NULL);
	snprintf(line, sizeof line, "%-24.64s %-9s %s\n", lowered, "active", abs);
	ASSERT_CONTAINS(r.out, line);

	h_ringlog(&r, "stop", sname, NULL);
	ASSERT_EQ(r.status, 0);
	unlink(path);

	/* A session without --system: none, whatever the privileges. */
	h_ringlog(&r, "start", sname, "-o", path, NULL);
	BAIL_IF(r.status != 0, "start failed (%d): %s", r.status, r.err);
	expect_query(sname, "none", "0x0", "all", 0, 1000);
	h_ringlog(&r, "stop", sname, NULL);
	ASSERT_EQ(r.status, 0);
	unlink(path);
}

int main(void)
{
	test_parser();
	test_docs_table();
	test_region_copy();
	test_scope();
	test_cli();
	return done_testing();
}
