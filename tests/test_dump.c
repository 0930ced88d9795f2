/*
 * test_dump - `ringlog dump` on generated files: the exact output of a small
 * file (header lines, flagged event, RAW_* decoding, empty payload, an event
 * before the start, DATA_LOSS, LOG_MARKER, TIME_SYNC with --all), exit 0;
 * on a damaged file every readable event on stdout, exactly one error line
 * naming the offset on stderr, exit 1; usage errors exit 2.
 *
 * Needs the built `ringlog` binary in $RINGLOG_BIN.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proc_run.h"
#include "filegen.h"
#include "tap.h"

#define S 1000000ull
#define REALTIME 1795341600123456789ull /* 2026-11-22T10:00:00.123456789Z */

/* The test file; returns the offset of the second block of thread 4243
 * and puts the offset of the last block in *last. */
static size_t build(struct fg_file *f, size_t *last)
{
	struct fg_block b;
	uint64_t t;

	fg_file_init(f);
	fg_marker_block(f, 1, 1, 1000000000u, S, REALTIME, RLOG_TICK_TSC, 16384, 8, "demo");

	/* Thread 4244 starts 30 ticks before the LOG_MARKER. */
	fg_block_begin(&b, 4242, 4244, S - 30, 0);
	fg_event(&b, 1024, -1, true, (uint32_t)(S - 30), "abcd", 4);
	fg_block_end(f, &b);

	fg_block_begin(&b, 4242, 4243, S, 0);
	static const uint8_t p9[9] = { 1, 0, 0, 0, 2, 0, 0, 0, 0xab };
	fg_event(&b, 1025, 3, true, (uint32_t)(S + 1500), p9, 9);
	uint32_t u32[2] = { 1, 4294967295u };
	fg_event(&b, RLOG_ID_RAW_U32, -1, true, (uint32_t)(S + 2000), u32, 8);
	fg_event(&b, 2000, -1, true, (uint32_t)(S + 2500), NULL, 0);
	fg_block_end(f, &b);

	t = S + (UINT64_C(1) << 33);
	fg_block_begin(&b, 4242, 4243, S + 2500, 0);
	fg_time_sync(&b, t);
	fg_event(&b, RLOG_ID_RAW_STRING, -1, true, (uint32_t)(t + 10), "hi\n\"x\"\x01", 7);
	int16_t i16[2] = { -5, 7 };
	fg_event(&b, RLOG_ID_RAW_I16, -1, false, 0, i16, 4);
	double dbl = 1.5;
	fg_event(&b, RLOG_ID_RAW_DOUBLE, -1, true, (uint32_t)(t + 11), &dbl, 8);
	size_t second = fg_block_end(f, &b);

	/* The daemon's DATA_LOSS records for thread 4243. */
	fg_block_begin(&b, 4242, 4243, t + 11, 0x0001);
	fg_data_loss(&b, (uint32_t)(t + 20), 5, 80, RLOG_LOSS_NO_BUFFER);
	fg_data_loss(&b, (uint32_t)(t + 21), 1, 16, 99);
	*last = fg_block_end(f, &b);
	return second;
}

#define HEAD2 "#      time_ns     pid     tid id           payload\n"
#define L_EARLY "           -30    4242    4244 1024         61626364\n"
#define L_MARKER "             0       1       1 LOG_MARKER   tick_hz=1000000000 source=tsc " \
		 "realtime=2026-11-22T10:00:00.123456789Z session=demo buffers=8x16384\n"
#define L_FLAGGED "          1500    4242    4243 1025/3       01000000 02000000 ab\n"
#define L_U32 "          2000    4242    4243 RAW_U32      1 4294967295\n"
#define L_EMPTY "          2500    4242    4243 2000         -\n"
#define L_SYNC "    8589934592    4242    4243 TIME_SYNC    40420f00 02000000\n"
#define L_STR "    8589934602    4242    4243 RAW_STRING   \"hi\\n\\\"x\\\"\\x01\"\n"
#define L_I16 "   ~8589934602    4242    4243 RAW_I16      -5 7\n" /* untimed: the cursor, marked */
#define L_DBL "    8589934603    4242    4243 RAW_DOUBLE   1.5\n"
#define L_LOSS "    8589934612    4242    4243 DATA_LOSS    events=5 bytes=80 cause=no_buffer\n"
#define L_LOSS2 "    8589934613    4242    4243 DATA_LOSS    events=1 bytes=16 cause=unknown(99)\n"

int main(void)
{
	const char *bin = getenv("RINGLOG_BIN");
	char path[64], head[256], want[2048];
	struct fg_file f;
	struct run r;

	if (!bin || access(bin, X_OK) != 0)
		skip_all("RINGLOG_BIN does not name the built ringlog binary");

	size_t last;
	size_t second = build(&f, &last);
	fg_tmpname(path, "dump");
	BAIL_IF(fg_write(&f, path) < 0, "cannot write %s", path);
	snprintf(head, sizeof(head), "# ringlog dump of %s: session demo, tick source tsc at "
		 "1000000000 Hz, started 2026-11-22T10:00:00.123456789Z\n", path);

	/* A clean file. */
	r = run_argv((const char *[]){ "dump", path, NULL });
	snprintf(want, sizeof(want), "%s" HEAD2 L_EARLY L_MARKER L_FLAGGED L_U32 L_EMPTY L_STR L_I16
		 L_DBL L_LOSS L_LOSS2, head);
	ASSERT_STREQ(r.out, want);
	ASSERT_STREQ(r.err, "");
	ASSERT_EQ(r.status, 0);
	run_free(&r);

	/* --all: TIME_SYNC records too. */
	r = run_argv((const char *[]){ "dump", "--all", path, NULL });
	snprintf(want, sizeof(want), "%s" HEAD2 L_EARLY L_MARKER L_FLAGGED L_U32 L_EMPTY L_SYNC L_STR
		 L_I16 L_DBL L_LOSS L_LOSS2, head);
	ASSERT_STREQ(r.out, want);
	ASSERT_EQ(r.status, 0);
	run_free(&r);

	/* A damaged block: the rest is printed, then the error line; exit 1. */
	f.b.p[second + FG_BLOCK_HDR + 30] ^= 0xff;
	BAIL_IF(fg_write(&f, path) < 0, "cannot write %s", path);
	r = run_argv((const char *[]){ "dump", path, NULL });
	snprintf(want, sizeof(want), "%s" HEAD2 L_EARLY L_MARKER L_FLAGGED L_U32 L_EMPTY L_LOSS L_LOSS2,
		 head);
	ASSERT_STREQ(r.out, want);
	snprintf(want, sizeof(want), "ringlog: dump %s: damaged block at offset %zu: checksum "
		 "mismatch (skipped 4 records)\n", path, second);
	ASSERT_STREQ(r.err, want);
	ASSERT_EQ(r.status, 1);
	run_free(&r);

	/* Truncated in the second record of the last block (each DATA_LOSS
	 * record is 32 bytes). */
	f.b.p[second + FG_BLOCK_HDR + 30] ^= 0xff;
	BAIL_IF(fg_write_len(&f, path, last + FG_BLOCK_HDR + 32 + 10) < 0, "write");
	r = run_argv((const char *[]){ "dump", path, NULL });
	snprintf(want, sizeof(want), "%s" HEAD2 L_EARLY L_MARKER L_FLAGGED L_U32 L_EMPTY L_STR L_I16
		 L_DBL L_LOSS, head);
	ASSERT_STREQ(r.out, want);
	snprintf(want, sizeof(want), "ringlog: dump %s: truncated block at offset %zu: 42 of 64 data "
		 "bytes present, checksum not verifiable (recovered 1 records, skipped 1 records)\n",
		 path, last);
	ASSERT_STREQ(r.err, want);
	ASSERT_EQ(r.status, 1);
	run_free(&r);
	fg_file_free(&f);

	/* Not a ringlog file. */
	{
		FILE *fp = fopen(path, "wb");
		fputs("hello, this is not a trace; it is long enough to be a header though.....", fp);
		fclose(fp);
		r = run_argv((const char *[]){ "dump", path, NULL });
		snprintf(want, sizeof(want), "ringlog: dump %s: not a ringlog log file (bad file header)\n",
			 path);
		ASSERT_STREQ(r.err, want);
		ASSERT_STREQ(r.out, "");
		ASSERT_EQ(r.status, 1);
		run_free(&r);
	}
	unlink(path);

	r = run_argv((const char *[]){ "dump", "/nonexistent/x.log", NULL });
	ASSERT_STREQ(r.err, "ringlog: dump /nonexistent/x.log: No such file or directory\n");
	ASSERT_EQ(r.status, 1);
	run_free(&r);

	/* Usage errors: what was not understood, then the usage line. */
	const char *const *usages[] = {
		(const char *[]){ "dump", NULL },
		(const char *[]){ "dump", "--bogus", "a", NULL },
	};
	/* (Several files are several hosts: test_hosts.) */
	const char *why[] = { "missing FILE",
			      "unknown option '--bogus' (see 'ringlog help dump')" };
	for (size_t i = 0; i < sizeof(usages) / sizeof(usages[0]); i++) {
		r = run_argv(usages[i]);
		char want[512];
		snprintf(want, sizeof want, "ringlog: dump: %s\nusage: ringlog dump FILE "
			 "[--id N[,N..]] [--name NAME] [--pid P[,P..]] [--tid T[,T..]] [--since T] "
			 "[--until T] [--format text|json] [--time relative|wall] [--all]\n", why[i]);
		ASSERT_STREQ(r.err, want);
		ASSERT_STREQ(r.out, "");
		ASSERT_EQ(r.status, 2);
		run_free(&r);
	}
	return done_testing();
}
