/*
 * test_session_names - session names (validation, case-insensitive
 * uniqueness, the shared-memory object's name and mode) and the errors of
 * `ringlog start`, `list`, `query` and `stop`: one exact line on stderr,
 * exit 1 for a failure, exit 2 for a usage error.
 */
#include "harness.h"

#include <ctype.h>
#include <sys/stat.h>

#include "shm.h"
#include "tap.h"

static void validate_table(void)
{
	char n64[65], n65[66];
	memset(n64, 'a', 64);
	n64[64] = '\0';
	memset(n65, 'b', 65);
	n65[65] = '\0';
	static const char *good[] = { "a", "A.b_c-9", "...", "a..b", "-x", "_" };
	static const char *bad[] = { "", "a/b", "a b", ".", "..", "\xc3\xa9", "x\n", "/a", "a\\b",
				     "a:b", "a*", "\xff" };
	for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
		ok(rlog__name_validate(good[i]) == 0, "'%s' is a valid name", good[i]);
	ASSERT_EQ(rlog__name_validate(n64), 0);
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		ok(rlog__name_validate(bad[i]) == -EINVAL, "bad name %zu is refused", i);
	ASSERT_EQ(rlog__name_validate(n65), -EINVAL);
	ASSERT_EQ(rlog__name_validate(NULL), -EINVAL);

	char shm[96];
	ASSERT_EQ(rlog__shm_name("A.b_C-9", shm, sizeof shm), 0);
	ASSERT_STREQ(shm, "/ringlog.a.b_c-9");
	ASSERT_EQ(rlog__shm_name("a/b", shm, sizeof shm), -EINVAL);
	ASSERT_EQ(rlog__shm_name(n64, shm, 20), -EINVAL); /* does not fit */
}

static void expect(const struct h_run *r, int status, const char *err)
{
	ASSERT_EQ(r->status, status);
	ASSERT_STREQ(r->err, err);
}

static void cli_errors(void)
{
	char name[64], upper[64], path[256], path2[256], line[1024];
	snprintf(name, sizeof name, "t-Names-%d-%x", (int)getpid(), h_nonce());
	for (size_t i = 0; name[i]; i++)
		upper[i] = (char)toupper((unsigned char)name[i]), upper[i + 1] = '\0';
	snprintf(path, sizeof path, "%s", h_path("names"));
	snprintf(path2, sizeof path2, "%s", h_path("names2"));
	unlink(path);
	unlink(path2);
	struct h_run r;

	/* A bad name: nothing created, not even the file. */
	h_ringlog(&r, "start", "a/b", "-o", path, NULL);
	expect(&r, 1, "ringlog: start: invalid session name 'a/b': use 1 to 64 letters, digits, "
		      "'.', '_' or '-'\n");
	ASSERT_STREQ(r.out, "");
	ok(access(path, F_OK) != 0, "no file for a bad name");
	h_ringlog(&r, "start", "..", "-o", path, NULL);
	expect(&r, 1, "ringlog: start: invalid session name '..': use 1 to 64 letters, digits, "
		      "'.', '_' or '-'\n");

	/* Start, then the same name in another case. */
	h_ringlog(&r, "start", name, "-o", path, "--buffers", "4", NULL);
	ASSERT_EQ(r.status, 0);
	ASSERT_STREQ(r.err, "");
	snprintf(line, sizeof line, "session: %s\n", name);
	ASSERT_CONTAINS(r.out, line);
	uint64_t daemon = h_kv(r.out, "daemon_pid");
	ok(daemon != UINT64_MAX && daemon > 0, "daemon_pid printed");

	h_ringlog(&r, "start", upper, "-o", path2, NULL);
	snprintf(line, sizeof line, "ringlog: start: session '%s' already exists\n", upper);
	expect(&r, 1, line);
	ok(access(path2, F_OK) != 0 && errno == ENOENT, "the refused start removed its new file");

	/* The first session is unaffected: still active, same daemon, works. */
	h_ringlog(&r, "query", upper, NULL); /* lookup is case-insensitive too */
	ASSERT_EQ(r.status, 0);
	snprintf(line, sizeof line, "session: %s\nstate: active\n", name);
	ASSERT_CONTAINS(r.out, line);
	ASSERT_EQ_U64(h_kv(r.out, "daemon_pid"), daemon);
	ASSERT_EQ_U64(h_kv(r.out, "number_of_buffers"), 4);
	ASSERT_EQ_U64(h_kv(r.out, "buffer_size"), 16384);
	h_ringlog(&r, "emit", upper, "1024", "--count", "3", NULL);
	ASSERT_EQ(r.status, 0);
	ASSERT_STREQ(r.out, "emitted: 3\nwritten: 3\nlost: 0\n");
	/* What emit cannot write is said in one line naming why. */
	h_ringlog(&r, "emit", upper, "33", NULL);
	ASSERT_EQ(r.status, 1);
	ASSERT_STREQ(r.err, "ringlog: emit: ID 33 is not one an application may write: 1024 to "
			    "16383, or 16 to 25 (32 to 38 are ringlog's own)\n");
	static char big[2 * 20000 + 1];
	memset(big, 'a', 2 * 20000);
	h_ringlog(&r, "emit", upper, "1024", "--payload", big, NULL);
	ASSERT_EQ(r.status, 1);
	snprintf(line, sizeof line, "ringlog: emit: %s: an event of 20000 payload bytes does not fit "
		 "in one of the session's buffers (ringlog query %s: buffer_size)\n", upper, upper);
	ASSERT_STREQ(r.err, line);

	/* The shm object: lower-case name, mode 0600, ours. */
	char shm[128], lower[64];
	for (size_t i = 0; name[i]; i++)
		lower[i] = (char)tolower((unsigned char)name[i]), lower[i + 1] = '\0';
	snprintf(shm, sizeof shm, "/dev/shm/ringlog.%s", lower);
	struct stat st;
	ASSERT_EQ(stat(shm, &st), 0);
	ASSERT_EQ(st.st_mode & 07777, 0600);
	ASSERT_EQ(st.st_uid, getuid());

	/* An existing output file: refused without --force, kept intact. */
	char other[64];
	snprintf(other, sizeof other, "t-names2-%d-%x", (int)getpid(), h_nonce());
	FILE *f = fopen(path2, "w");
	fputs("keep me\n", f);
	fclose(f);
	h_ringlog(&r, "start", other, "-o", path2, NULL);
	snprintf(line, sizeof line, "ringlog: start: %s: file exists (use --force to overwrite)\n",
		 path2);
	expect(&r, 1, line);
	ASSERT_EQ(stat(path2, &st), 0);
	ASSERT_EQ(st.st_size, 8);
	/* ... and a name already taken does not destroy an existing file. */
	h_ringlog(&r, "start", upper, "-o", path2, "--force", NULL);
	snprintf(line, sizeof line, "ringlog: start: session '%s' already exists\n", upper);
	expect(&r, 1, line);
	/* (Fails while ctl_start opens with O_TRUNC before it creates the
	 * region: a refused --force start empties the file, even the live
	 * log file of the session that holds the name.) */
	ASSERT_EQ(stat(path2, &st), 0);
	ASSERT_EQ(st.st_size, 8);
	h_ringlog(&r, "start", other, "-o", path2, "--force", "--buffers", "2", "--buffer-size", "4",
		  NULL);
	ASSERT_EQ(r.status, 0);
	ASSERT_STREQ(r.err, "");

	/* list shows both, by display name, with their files. */
	h_ringlog(&r, "list", NULL);
	ASSERT_EQ(r.status, 0);
	ASSERT_STREQ(r.err, "");
	char abs[512];
	snprintf(abs, sizeof abs, "%-24.64s %-9s %s\n", name, "active", path);
	ASSERT_CONTAINS(r.out, abs);
	snprintf(abs, sizeof abs, "%-24.64s %-9s %s\n", other, "active", path2);
	ASSERT_CONTAINS(r.out, abs);

	/* Stop both; the first by its other-case name. */
	h_ringlog(&r, "stop", upper, NULL);
	ASSERT_EQ(r.status, 0);
	ASSERT_STREQ(r.err, "");
	snprintf(line, sizeof line, "session: %s\nfile: %s\nevents_written: 3\nevents_lost: 0\n", name,
		 path);
	ASSERT_CONTAINS(r.out, line);
	h_ringlog(&r, "stop", other, NULL);
	ASSERT_EQ(r.status, 0);
	ok(access(shm, F_OK) != 0 && errno == ENOENT, "the region is removed at stop");
	h_ringlog(&r, "list", NULL);
	ok(strstr(r.out, name) == NULL && strstr(r.out, other) == NULL, "list no longer shows them");

	/* Missing sessions. */
	h_ringlog(&r, "query", name, NULL);
	snprintf(line, sizeof line, "ringlog: query: no session named '%s'\n", name);
	expect(&r, 1, line);
	ASSERT_STREQ(r.out, "");
	h_ringlog(&r, "stop", name, NULL);
	snprintf(line, sizeof line, "ringlog: stop: no session named '%s'\n", name);
	expect(&r, 1, line);
	ASSERT_STREQ(r.out, "");
	h_ringlog(&r, "query", "a/b", NULL);
	expect(&r, 1, "ringlog: query: invalid session name 'a/b'\n");
	h_ringlog(&r, "stop", "", NULL);
	expect(&r, 1, "ringlog: stop: invalid session name ''\n");

	/* Usage errors: exit 2, the error line then the usage line. */
	const char *usage = "usage: ringlog start NAME [-o FILE] [--mode MODES] [--max-file-size MB] "
			    "[--buffer-size KB] [--min-buffers N] [--max-buffers N] [--buffers N] "
			    "[--flush-timer T] [--enable LIST] [--mask MASK] [--high-water PCT] "
			    "[--age-limit MIN] [--drain-threads N] [--counters LIST] [--counter-period MS] [--system LIST] "
			    "[--system-pid LIST] [--follow] [--profile-hz N] "
			    "[--sink URL [--host-id ID] [--sink-buffer SIZE] [--sink-chunk SIZE]] [--force] | "
			    "start NAME --resume\n";
	h_ringlog(&r, "start", other, "-o", path, "--bogus", NULL);
	snprintf(line, sizeof line, "ringlog: start: unknown option '--bogus' (see 'ringlog help "
		 "start')\n%s", usage);
	expect(&r, 2, line);
	h_ringlog(&r, "start", other, NULL);
	snprintf(line, sizeof line, "ringlog: start: missing -o FILE\n%s", usage);
	expect(&r, 2, line);
	h_ringlog(&r, "start", "-o", path, NULL);
	snprintf(line, sizeof line, "ringlog: start: missing session NAME\n%s", usage);
	expect(&r, 2, line);
	h_ringlog(&r, "start", other, "-o", NULL); /* -o without its value */
	snprintf(line, sizeof line, "ringlog: start: option '-o' needs a value\n%s", usage);
	expect(&r, 2, line);
	h_ringlog(&r, "stop", NULL);
	expect(&r, 2, "ringlog: stop: missing session NAME\nusage: ringlog stop NAME [--force]\n");
	h_ringlog(&r, "query", "a", "b", NULL);
	expect(&r, 2, "ringlog: query: unexpected argument 'b'\nusage: ringlog query NAME [--json]\n");
	h_ringlog(&r, "frobnicate", NULL);
	expect(&r, 2, "ringlog: unknown command 'frobnicate' (try 'ringlog help')\n");

	/* Geometry errors: exit 1, exact lines, no session, no file. */
	unlink(path);
	h_ringlog(&r, "start", other, "-o", path, "--buffers", "1", NULL);
	expect(&r, 1, "ringlog: start: --buffers '1': expected a number from 2 to 65536\n");
	h_ringlog(&r, "start", other, "-o", path, "--buffers", "65537", NULL);
	expect(&r, 1, "ringlog: start: --buffers '65537': expected a number from 2 to 65536\n");
	h_ringlog(&r, "start", other, "-o", path, "--buffers", "12x", NULL);
	expect(&r, 1, "ringlog: start: --buffers '12x': expected a number from 2 to 65536\n");
	h_ringlog(&r, "start", other, "-o", path, "--buffer-size", "3", NULL);
	expect(&r, 1, "ringlog: start: --buffer-size '3': expected KB, a power of two from 4 to "
		      "1024\n");
	h_ringlog(&r, "start", other, "-o", path, "--buffer-size", "6", NULL);
	expect(&r, 1, "ringlog: start: --buffer-size '6': expected KB, a power of two from 4 to "
		      "1024\n");
	h_ringlog(&r, "start", other, "-o", path, "--buffer-size", "-4", NULL);
	expect(&r, 1, "ringlog: start: --buffer-size '-4': expected KB, a power of two from 4 to "
		      "1024\n");
	h_ringlog(&r, "start", other, "-o", path, "--buffer-size", "2048", NULL);
	expect(&r, 1, "ringlog: start: --buffer-size '2048': expected KB, a power of two from 4 to "
		      "1024\n");
	/* Each value valid, the region too big (1 MiB x 65536). */
	h_ringlog(&r, "start", other, "-o", path, "--buffer-size", "1024", "--buffers", "65536", NULL);
	snprintf(line, sizeof line, "ringlog: start: %s: invalid buffer geometry (buffer size a power "
		 "of two from 4 to 1024 KB, 2..65536 buffers, region at most 4 GiB)\n", other);
	expect(&r, 1, line);
	ok(access(path, F_OK) != 0 && errno == ENOENT, "no file left by refused starts");
	h_ringlog(&r, "query", other, NULL);
	ASSERT_EQ(r.status, 1);

	unlink(path);
	unlink(path2);
}

int main(void)
{
	validate_table();
	cli_errors();
	return done_testing();
}
