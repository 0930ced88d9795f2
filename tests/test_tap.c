/*
 * test_tap.c - what tests/tap.h prints stays TAP: a description, a
 * diagnostic or a compared value holding a newline or another control
 * character is written escaped on its own line, so that every line is a
 * test line, a "#" comment or the plan.  (A needle with a newline, printed
 * raw, made meson report "Unknown TAP output lines" and hide the failure.)
 *
 * A child process runs failing checks with such texts into a file; the
 * parent reads the file back and checks it line by line, exactly.
 */
#include "proc_run.h"
#include "tap.h"

#include <fcntl.h>

static const char want[] =
	"not ok 1 - two\\nlines\n"
	"#   failed at F:L\n"
	"not ok 2 - tap_a_ && tap_b_ && strcmp(tap_a_, tap_b_) == 0\n"
	"#   failed at F:L\n"
	"#   left:  \"a\\nb\\x1b[31m\"\n"
	"#   right: \"a\\tb\\\\\"\n"
	"not ok 3 - \"x\\\\ny\" contains \"z\\\\r\\\\nw\"\n" /* #a: the source's text */
	"#   failed at F:L\n"
	"#   haystack: \"x\\ny\"\n"
	"#   needle:   \"z\\r\\nw\"\n"
	"# one\\ntwo\n";

/* The child's output with each "failed at FILE:LINE" made "F:L". */
static void strip_places(char *s)
{
	for (char *p = s; (p = strstr(p, "failed at ")) != NULL;) {
		p += 10;
		char *e = strchr(p, '\n');
		if (!e)
			break;
		memmove(p + 3, e, strlen(e) + 1);
		memcpy(p, "F:L", 3);
	}
}

int main(void)
{
	char path[] = "/tmp/rlog-tap-XXXXXX";
	int fd = mkstemp(path);
	BAIL_IF(fd < 0, "mkstemp");
	unlink(path);
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		dup2(fd, 1);
		ok(0, "two\nlines");
		const char *a = "a\nb\x1b[31m", *b = "a\tb\\";
		if (!ok(a && b && strcmp(a, b) == 0, "tap_a_ && tap_b_ && strcmp(tap_a_, tap_b_) == 0"))
			tap_diag2("  left:  \"%s\"", a, "  right: \"%s\"", b);
		ASSERT_CONTAINS("x\ny", "z\r\nw");
		diag("one\ntwo");
		fflush(stdout);
		_exit(0);
	}
	int st;
	BAIL_IF(waitpid(pid, &st, 0) != pid, "waitpid");
	char *out = proc_slurp_fd(fd, NULL);
	strip_places(out);
	/* ASSERT_CONTAINS's description names its arguments as written. */
	ASSERT_STREQ(out, want);
	int bad = 0;
	for (char *p = out; *p; p = strchr(p, '\n') + 1) {
		bad += strncmp(p, "ok ", 3) != 0 && strncmp(p, "not ok ", 7) != 0 && p[0] != '#';
		if (!strchr(p, '\n'))
			break;
	}
	ASSERT_EQ(bad, 0);
	free(out);
	return done_testing();
}
