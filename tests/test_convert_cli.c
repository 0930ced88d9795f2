/*
 * test_convert_cli.c - `ringlog convert`'s arguments and messages, on the
 * converter fixture (tests/test_convert_fixture.h):
 *
 *   - a missing FILE, --to or -o is named, then the usage line, exit 2;
 *   - one overwrite rule for every output, as `ringlog start`'s: an existing
 *     chrome file or a CTF directory holding an earlier conversion is
 *     refused without --force (and left as it was), replaced with it;
 *   - the output cannot be the input, even with --force;
 *   - the records that are not events of their own are counted by what
 *     they became (metadata_records; span_begins_merged for chrome "X"
 *     spans), never as an unexplained "skipped";
 *   - a write that fails into a device given with --force (/dev/full):
 *     one error line, exit 1, and the device is not removed.
 */
#include "harness.h"

#include <sys/sysmacros.h>

#include "tap.h"
#include "test_convert_fixture.h"
#include "proc_run.h"

#define USAGE                                                                            \
	"usage: ringlog convert FILE --to chrome|perfetto|ctf -o OUT [--spans x|be] [--since T] " \
	"[--until T] [--split DURATION] [--max-size SIZE] [--force]\n"

/* The fixture's records, counted independently of the converters. */
struct expect {
	uint64_t names_schemas; /* EVENT_SCHEMA, THREAD_NAME, PROCESS_NAME */
	uint64_t markers;       /* LOG_MARKER */
	uint64_t span_begins;   /* begins of a span type (FLAGGED, flag 1) */
};

static void count(const char *path, struct expect *x)
{
	struct rlog_reader *r;
	struct rlog_event ev;
	memset(x, 0, sizeof *x);
	BAIL_IF(rlog_reader_open(path, &r) < 0, "the fixture does not open");
	while (rlog_reader_next(r, &ev) == 1) {
		if (h_is_metadata(&ev))
			x->names_schemas++;
		else if (ev.from_daemon && ev.id == RLOG_ID_LOG_MARKER)
			x->markers++;
		const struct rlog_schema *s = rlog_reader_schema(r, &ev);
		if (s && s->kind == RLOG_KIND_SPAN && ev.flagged && ev.flag == RLOG_SPAN_BEGIN)
			x->span_begins++;
	}
	rlog_reader_close(r);
}

static void rl(struct run *c, const char *const *args)
{
	const char *argv[16];
	int n = 0;
	argv[n++] = h_bin();
	while (*args && n < 15)
		argv[n++] = *args++;
	argv[n] = NULL;
	*c = proc_run(argv);
}
#define RL(c, ...) rl(c, (const char *const[]){ __VA_ARGS__, NULL })

static void expect_err(struct run *c, int status, const char *err)
{
	ASSERT_EQ(c->status, status);
	ASSERT_STREQ(c->err, err);
	run_free(c);
}

int main(void)
{
	char in[64], out[64], dir[80], line[512];
	struct fg_file f;
	struct run c;
	size_t len;

	fx_build(&f);
	fg_tmpname(in, "cli");
	fg_tmpname(out, "clij");
	snprintf(dir, sizeof dir, "%s.ctf", out);
	BAIL_IF(fg_write(&f, in) < 0, "cannot write %s", in);
	unlink(out);
	struct expect x;
	count(in, &x);
	if (x.span_begins == 0)
		skip_test("the reader's schema table is a placeholder in this tree");
	ok(x.names_schemas > 0 && x.markers == 1, "the fixture has %llu names and schemas, 1 marker",
	   (unsigned long long)x.names_schemas);

	/* Missing arguments: named, then the usage line. */
	RL(&c, "convert", in, "--to", "chrome");
	expect_err(&c, 2, "ringlog: convert: missing -o OUT\n" USAGE);
	RL(&c, "convert", in, "-o", out);
	expect_err(&c, 2, "ringlog: convert: missing --to chrome|perfetto|ctf\n" USAGE);
	RL(&c, "convert", "--to", "chrome", "-o", out);
	expect_err(&c, 2, "ringlog: convert: missing FILE\n" USAGE);
	RL(&c, "convert", in, "--to", "chrome", "-o");
	expect_err(&c, 2, "ringlog: convert: option '-o' needs a value\n" USAGE);
	ok(access(out, F_OK) < 0, "no output after usage errors");

	/* Chrome, "X" spans: the counts say what the records became. */
	RL(&c, "convert", in, "--to", "chrome", "-o", out);
	ASSERT_EQ(c.status, 0);
	ASSERT_STREQ(c.err, "");
	ASSERT_EQ_U64(h_kv(c.out, "metadata_records"), x.names_schemas + x.markers);
	ASSERT_EQ_U64(h_kv(c.out, "span_begins_merged"), x.span_begins);
	ok(strstr(c.out, "skipped") == NULL, "no 'skipped' line");
	run_free(&c);
	char *first = slurp(out, &len);
	BAIL_IF(!first, "no output %s", out);

	/* Again: refused, the file untouched. */
	RL(&c, "convert", in, "--to", "chrome", "-o", out, "--spans", "be");
	snprintf(line, sizeof line, "ringlog: convert: %s: file exists (use --force to overwrite)\n",
		 out);
	ASSERT_STREQ(c.out, "");
	expect_err(&c, 1, line);
	char *again = slurp(out, &len);
	ok(again && strcmp(again, first) == 0, "the refused conversion left the file as it was");
	free(again);

	/* With --force: replaced.  B/E spans: no begin is merged. */
	FILE *fp = fopen(out, "w");
	BAIL_IF(!fp, "cannot write %s", out);
	fputs("not json", fp);
	fclose(fp);
	RL(&c, "convert", in, "--to", "chrome", "-o", out, "--spans", "be", "--force");
	ASSERT_EQ(c.status, 0);
	ASSERT_EQ_U64(h_kv(c.out, "metadata_records"), x.names_schemas + x.markers);
	ok(strstr(c.out, "span_begins_merged") == NULL, "be spans: no span_begins_merged line");
	run_free(&c);
	again = slurp(out, &len);
	ok(again && strncmp(again, "{\"displayTimeUnit\"", 18) == 0 && strcmp(again, first) != 0,
	   "--force replaced the file with the B/E conversion");
	free(again);
	free(first);

	/* The input as the output: refused even with --force, input intact. */
	struct stat before, after;
	BAIL_IF(stat(in, &before) < 0, "stat %s", in);
	RL(&c, "convert", in, "--to", "chrome", "-o", in, "--force");
	snprintf(line, sizeof line, "ringlog: convert: %s: the output is the input file\n", in);
	expect_err(&c, 1, line);
	ok(stat(in, &after) == 0 && after.st_size == before.st_size && after.st_size > 0,
	   "the input is intact");

	/* CTF: a new directory; then refused; then replaced with --force. */
	RL(&c, "convert", in, "--to", "ctf", "-o", dir);
	ASSERT_EQ(c.status, 0);
	ASSERT_EQ_U64(h_kv(c.out, "metadata_records"), x.names_schemas);
	ok(strstr(c.out, "span_begins_merged") == NULL && strstr(c.out, "skipped") == NULL,
	   "ctf: neither span_begins_merged nor skipped");
	run_free(&c);
	int streams = count_files(dir, "stream_");
	ok(streams > 0, "ctf wrote %d streams", streams);
	RL(&c, "convert", in, "--to", "ctf", "-o", dir);
	ASSERT_EQ(c.status, 1);
	snprintf(line, sizeof line, "ringlog: convert: %s is not empty (it holds ", dir);
	ok(strncmp(c.err, line, strlen(line)) == 0, "ctf again: '%s...'", line);
	const char *tail = "); use --force to overwrite an earlier conversion\n";
	ok(strlen(c.err) > strlen(tail) &&
		   strcmp(c.err + strlen(c.err) - strlen(tail), tail) == 0,
	   "ctf again: '...%s'", "); use --force to overwrite an earlier conversion");
	run_free(&c);
	ASSERT_EQ(count_files(dir, "stream_"), streams);
	RL(&c, "convert", in, "--to", "ctf", "-o", dir, "--force");
	ASSERT_EQ(c.status, 0);
	ASSERT_STREQ(c.err, "");
	run_free(&c);
	ASSERT_EQ(count_files(dir, "stream_"), streams);

	/* A device written with --force, and a write that fails there: one
	 * error line, and the device is left where it is (the half-written
	 * output removed was /dev/full itself, as root). */
	struct stat fs;
	if (lstat("/dev/full", &fs) == 0 && S_ISCHR(fs.st_mode) && access("/dev/full", W_OK) == 0) {
		static const char *const cmd[][4] = { { "convert", "--to", "chrome" },
						      { "convert", "--to", "perfetto" },
						      { "report", "--spans", "x" } };
		for (size_t k = 0; k < 3; k++) {
			if (k < 2)
				RL(&c, cmd[k][0], in, cmd[k][1], cmd[k][2], "-o", "/dev/full", "--force");
			else
				RL(&c, cmd[k][0], in, "-o", "/dev/full", "--force");
			ok(c.status == 1 && strstr(c.err, "No space left on device") != NULL &&
				   strchr(c.err, '\n') == c.err + strlen(c.err) - 1,
			   "%s %s into /dev/full: one error line (%s)", cmd[k][0], cmd[k][2], c.err);
			run_free(&c);
			bool dev = lstat("/dev/full", &fs) == 0 && S_ISCHR(fs.st_mode);
			ok(dev, "%s %s: /dev/full is still the device", cmd[k][0], cmd[k][2]);
			if (!dev && geteuid() == 0) { /* put it back for the rest */
				unlink("/dev/full");
				if (mknod("/dev/full", S_IFCHR | 0666, makedev(1, 7)) == 0)
					chmod("/dev/full", 0666);
			}
		}
	}

	rm_dir(dir);
	unlink(out);
	unlink(in);
	fg_file_free(&f);
	return done_testing();
}
