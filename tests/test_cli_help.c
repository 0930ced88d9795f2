/*
 * test_cli_help.c - every command has its own help, and the help, the
 * usage errors and the manual agree:
 *
 *   - `ringlog help`, `--help` and `-h` print the overview on stdout, exit 0;
 *   - for every command, `ringlog help CMD`, `ringlog CMD --help` and
 *     `ringlog CMD -h` print the same text on stdout (nothing on stderr) and
 *     exit 0, without running the command (even after other arguments);
 *   - the help's usage line is the one the command prints after a usage
 *     error, and every option in it has its own line in the help text and
 *     appears in ringlog(1);
 *   - every command names what it did not understand, in one line, the
 *     same way (one parser, src/cli/args.c): '--bogus' as an unknown
 *     option, an option without its value, an extra argument; and every
 *     command missing its argument says "missing ..." (exit 2 each time);
 *   - help start documents overwrite mode, in --mode and in -o (a flight
 *     recorder has no file), and help list every state list can print;
 *   - commands that are not built say so, in their help and when run;
 *   - the manual pages render without a warning from man/groff.
 *
 * Needs $RINGLOG_BIN, $RINGLOG_MAN1 and $RINGLOG_MAN5 (tests/meson.build).
 */
#include "harness.h"
#include "tap.h"
#include "proc_run.h"

#include <sys/stat.h>

static const char *const built[] = { "start", "stop", "query", "list", "emit", "dump", "stats", "profile",
				     "convert", "bench", "update", "flush", "tail", "snapshot",
				     "ring-flush", "report", "collect", "help" };

/* The ringlog binary with arguments (NULL-terminated). */
static void rl(struct run *c, const char *a0, const char *a1, const char *a2, const char *a3,
	       const char *a4)
{
	const char *argv[] = { h_bin(), a0, a1, a2, a3, a4, NULL };
	*c = proc_run(argv);
}

/* Line 0 of text, without the newline. */
static char *first_line(const char *text)
{
	size_t n = strcspn(text, "\n");
	char *s = malloc(n + 1);
	memcpy(s, text, n);
	s[n] = '\0';
	return s;
}

/* The usage line that a usage error printed on stderr ("usage: ..." up to
 * the end of its line), or NULL. */
static char *usage_in(const char *err)
{
	const char *p = strstr(err, "usage: ringlog ");
	return p ? first_line(p) : NULL;
}

/* Does the help text describe opt on a line of its own: "  OPT " or
 * "  OPT," or "  OPT\n" at the start of a line? */
static bool describes(const char *text, const char *opt)
{
	size_t n = strlen(opt);
	for (const char *p = text; (p = strstr(p, opt)) != NULL; p++) {
		bool at_entry = p - text >= 3 && p[-1] == ' ' && p[-2] == ' ' && p[-3] == '\n';
		bool ends = p[n] == ' ' || p[n] == ',' || p[n] == '\n';
		if (at_entry && ends)
			return true;
	}
	return false;
}

/* The synopsis of command name in ringlog(1): from ".B ringlog NAME" to
 * the next ".br" or section (NUL-terminated copy), or NULL. */
static char *synopsis_of(const char *man, const char *name)
{
	char head[64];
	snprintf(head, sizeof head, "\n.B ringlog %s\n", name);
	const char *p = strstr(man, head);
	if (!p)
		return NULL;
	const char *e = strstr(p + 1, "\n.br\n"), *sh = strstr(p + 1, "\n.SH");
	if (!e || (sh && sh < e))
		e = sh;
	size_t n = e ? (size_t)(e - p) : strlen(p);
	char *s = malloc(n + 1);
	memcpy(s, p, n);
	s[n] = '\0';
	return s;
}

/* ringlog(1) writes an option with escaped dashes: --to is \-\-to. */
static bool in_manual(const char *man, const char *opt)
{
	char esc[64];
	size_t k = 0;
	for (const char *p = opt; *p && k + 3 < sizeof esc; p++) {
		if (*p == '-')
			esc[k++] = '\\';
		esc[k++] = *p;
	}
	esc[k] = '\0';
	return strstr(man, esc) != NULL;
}

/* Each option of a usage line ("-o", "--buffer-size", ...) in turn. */
static int options_of(const char *usage, char opts[][32], int max)
{
	int n = 0;
	for (const char *p = usage; *p && n < max; p++) {
		if (*p != '-' || (p > usage && p[-1] != ' ' && p[-1] != '['))
			continue;
		size_t k = 0;
		while ((p[k] == '-' || (p[k] >= 'a' && p[k] <= 'z')) && k < 31)
			k++;
		memcpy(opts[n], p, k);
		opts[n][k] = '\0';
		n++;
		p += k - 1;
	}
	return n;
}

static void check_command(const char *name, bool is_built, const char *man)
{
	struct run a, b, c;
	rl(&a, "help", name, NULL, NULL, NULL);
	ASSERT_EQ(a.status, 0);
	ASSERT_STREQ(a.err, "");
	char want[128];
	snprintf(want, sizeof want, "usage: ringlog %s", name);
	ok(strncmp(a.out, want, strlen(want)) == 0 &&
		   (a.out[strlen(want)] == ' ' || a.out[strlen(want)] == '\n'),
	   "help %s starts with '%s'", name, want);
	char *usage = first_line(a.out);
	ok(strncmp(a.out + strlen(usage), "\n\n", 2) == 0, "help %s: a blank line after the usage",
	   name);
	ok(strlen(a.out) > strlen(usage) + 80, "help %s has a text (%zu bytes)", name,
	   strlen(a.out));

	rl(&b, name, "--help", NULL, NULL, NULL);
	rl(&c, name, "-h", NULL, NULL, NULL);
	ASSERT_EQ(b.status, 0);
	ASSERT_EQ(c.status, 0);
	ASSERT_STREQ(b.out, a.out);
	ASSERT_STREQ(c.out, a.out);
	ASSERT_STREQ(b.err, "");
	ASSERT_STREQ(c.err, "");
	run_free(&b);
	run_free(&c);

	if (is_built && strcmp(name, "help") != 0) {
		/* A usage error prints the same usage line. */
		rl(&b, name, "--no-such-option", "x", "y", NULL);
		ASSERT_EQ(b.status, 2);
		char *u = usage_in(b.err);
		ASSERT_STREQ(u, usage);
		if (!u || strcmp(u, usage) != 0)
			diag("stderr: %s", b.err);
		free(u);
		run_free(&b);

		/* What it did not understand, named in one line, then the
		 * usage line, and nothing else. */
		char line[1024];
		rl(&b, name, "--bogus", NULL, NULL, NULL);
		snprintf(line, sizeof line, "ringlog: %s: unknown option '--bogus' (see 'ringlog help "
			 "%s')\n%s\n", name, name, usage);
		ASSERT_EQ(b.status, 2);
		ASSERT_STREQ(b.err, line);
		ASSERT_STREQ(b.out, "");
		run_free(&b);
		rl(&b, name, "--bogus=1", NULL, NULL, NULL);
		snprintf(line, sizeof line, "ringlog: %s: unknown option '--bogus=1' (see 'ringlog "
			 "help %s')\n", name, name);
		ASSERT_EQ(b.status, 2);
		ok(strncmp(b.err, line, strlen(line)) == 0, "%s --bogus=1: %s", name, b.err);
		run_free(&b);
		/* An argument too many; dump, stats, convert and report take
		 * several files (docs/DUMP.md, "Several hosts"). */
		rl(&b, name, "a1", "a2", "a3", "a4");
		if (strcmp(name, "dump") == 0 || strcmp(name, "stats") == 0) {
			snprintf(line, sizeof line, "ringlog: %s a1: no such file, or a directory "
				 "without .rlog files\n", name);
			ok(b.status == 1 && strcmp(b.err, line) == 0, "%s with four files: %s", name,
			   b.err);
		} else if (strcmp(name, "convert") == 0 || strcmp(name, "report") == 0) {
			ok(b.status == 2 && strstr(b.err, "unexpected argument") == NULL,
			   "%s with four files: no -o: %s", name, b.err);
		} else {
			ASSERT_EQ(b.status, 2);
			u = usage_in(b.err);
			ok(strstr(b.err, "unexpected argument '") != NULL && u != NULL,
			   "%s with four arguments: %s", name, b.err);
			free(u);
		}
		run_free(&b);

		/* Every command: a synopsis in the manual; every option: a
		 * line in the help text and a place in that synopsis. */
		char *syn = synopsis_of(man, name);
		ok(syn != NULL, "ringlog(1) has a synopsis of %s", name);
		char opts[16][32];
		int n = options_of(usage, opts, 16);
		for (int i = 0; i < n; i++) {
			ok(describes(a.out, opts[i]), "help %s describes %s", name, opts[i]);
			ok(syn && in_manual(syn, opts[i]), "ringlog(1)'s synopsis of %s has %s", name,
			   opts[i]);
		}
		free(syn);
	} else if (!is_built) {
		ASSERT_CONTAINS(a.out, "\nNot built yet: \"ringlog ");
		rl(&b, name, NULL, NULL, NULL, NULL);
		ASSERT_EQ(b.status, 2);
		snprintf(want, sizeof want, "ringlog: %s: not implemented yet (see 'ringlog help %s')\n",
			 name, name);
		ASSERT_STREQ(b.err, want);
		ASSERT_STREQ(b.out, "");
		run_free(&b);
	}
	free(usage);
	run_free(&a);
}

/* man renders path with warnings on: nothing on stderr. */
static void check_manual_renders(const char *path)
{
	const char *argv[] = { "man", "--warnings", "-l", path, NULL };
	struct run m;
	setenv("MANWIDTH", "80", 1);
	/* A locale that always exists: a missing one makes man warn. */
	setenv("LC_ALL", "C.UTF-8", 1);
	m = proc_run(argv);
	if (m.status == 127) {
		ok(1, "%s renders # SKIP man is not installed (scripts/deps.sh installs man-db)", path);
	} else {
		ok(m.status == 0 && m.err[0] == '\0' && strlen(m.out) > 1000,
		   "man --warnings -l %s: status %d, no warnings", path, m.status);
		if (m.err[0])
			diag("stderr: %s", m.err);
	}
	run_free(&m);
}

int main(void)
{
	const char *man1 = getenv("RINGLOG_MAN1"), *man5 = getenv("RINGLOG_MAN5");
	BAIL_IF(!man1 || !man5, "RINGLOG_MAN1 and RINGLOG_MAN5 must name the manual pages");
	size_t len;
	char *man = slurp(man1, &len);
	BAIL_IF(!man, "cannot read %s", man1);

	/* The overview: three spellings, one text, on stdout. */
	struct run o, x;
	rl(&o, "help", NULL, NULL, NULL, NULL);
	ASSERT_EQ(o.status, 0);
	ASSERT_STREQ(o.err, "");
	const char *head = "usage: ringlog COMMAND [ARGS]\n\ncommands:\n";
	ok(strncmp(o.out, head, strlen(head)) == 0,
	   "the overview starts with the usage");
	for (size_t i = 0; i < sizeof built / sizeof built[0]; i++) {
		char line[32];
		snprintf(line, sizeof line, "\n  %-9s ", built[i]);
		ok(strstr(o.out, line) != NULL, "the overview lists %s", built[i]);
	}
	/* Every command of the design is built: none is listed as not built
	 * (a command not built would be, and would say so when run). */
	ok(strstr(o.out, "not built yet") == NULL, "the overview lists no command as not built");
	const char *spellings[] = { "--help", "-h" };
	for (int i = 0; i < 2; i++) {
		rl(&x, spellings[i], NULL, NULL, NULL, NULL);
		ASSERT_EQ(x.status, 0);
		ASSERT_STREQ(x.out, o.out);
		run_free(&x);
	}

	for (size_t i = 0; i < sizeof built / sizeof built[0]; i++)
		check_command(built[i], true, man);

	/* Every command that needs an argument says which is missing. */
	static const struct { const char *cmd, *what; } needs[] = {
		{ "start", "session NAME" }, { "stop", "session NAME" },  { "recover", "session NAME" },
		{ "query", "session NAME" }, { "emit", "session NAME" },  { "dump", "FILE" },
		{ "stats", "FILE" },         { "convert", "FILE" },       { "profile", "FILE" },       { "update", "session NAME" },
		{ "flush", "session NAME" }, { "ring-flush", "PATH" },     { "tail", "session NAME" },
		{ "snapshot", "session NAME" }, { "report", "FILE" }, { "collect", "URL" },
	};
	for (size_t i = 0; i < sizeof needs / sizeof needs[0]; i++) {
		char want[512];
		rl(&x, needs[i].cmd, NULL, NULL, NULL, NULL);
		snprintf(want, sizeof want, "ringlog: %s: missing %s\nusage: ringlog ", needs[i].cmd,
			 needs[i].what);
		ASSERT_EQ(x.status, 2);
		ok(strncmp(x.err, want, strlen(want)) == 0, "%s alone: %s", needs[i].cmd, x.err);
		run_free(&x);
	}
	/* An option without its value, named. */
	rl(&x, "dump", "f.rlog", "--since", NULL, NULL);
	ASSERT_EQ(x.status, 2);
	ok(strncmp(x.err, "ringlog: dump: option '--since' needs a value\nusage: ringlog dump ",
		   66) == 0, "dump --since: %s", x.err);
	run_free(&x);
	rl(&x, "query", "--json=yes", "s", NULL, NULL);
	ASSERT_EQ(x.status, 2);
	ok(strncmp(x.err, "ringlog: query: option '--json' takes no value\n", 47) == 0,
	   "query --json=yes: %s", x.err);
	run_free(&x);

	/* help start: overwrite mode, and the sessions without a file. */
	rl(&x, "help", "start", NULL, NULL, NULL);
	const char *mode = strstr(x.out, "\n  --mode MODES");
	const char *next = mode ? strstr(mode, "\n  --max-file-size") : NULL;
	ok(mode && next && memmem(mode, (size_t)(next - mode), "overwrite (", 11),
	   "help start: --mode describes overwrite");
	ASSERT_CONTAINS(x.out, "only a real-time session or an overwrite one (a\n"
			       "                        flight recorder) may have none\n");
	run_free(&x);
	/* help list: every state list prints (cli_state_name, orphaned, and
	 * invalid for a region that fails validation). */
	rl(&x, "help", "list", NULL, NULL, NULL);
	const char *states[] = { "creating", "active", "stopping", "stopped", "failed",
				 "orphaned", "invalid", "unknown" };
	for (size_t i = 0; i < sizeof states / sizeof states[0]; i++)
		ok(describes(x.out, states[i]), "help list documents the state %s", states[i]);
	run_free(&x);

	/* --help wins over the command's other arguments: start does not
	 * run (no session, no file). */
	char path[300];
	snprintf(path, sizeof path, "%s", h_path("help"));
	unlink(path);
	rl(&x, "start", h_session("help"), "-o", path, "--help");
	ASSERT_EQ(x.status, 0);
	ASSERT_CONTAINS(x.out, "usage: ringlog start NAME [-o FILE]");
	struct stat st;
	ok(stat(path, &st) < 0 && errno == ENOENT, "start --help created no file");
	run_free(&x);
	rl(&x, "query", h_session("help"), NULL, NULL, NULL);
	ASSERT_EQ(x.status, 1);
	run_free(&x);
	rl(&x, "dump", "/nonexistent.rlog", "-h", NULL, NULL);
	ASSERT_EQ(x.status, 0);
	ASSERT_CONTAINS(x.out, "usage: ringlog dump FILE");
	ASSERT_STREQ(x.err, "");
	run_free(&x);

	/* Errors: one line, exit 2. */
	rl(&x, "help", "nope", NULL, NULL, NULL);
	ASSERT_EQ(x.status, 2);
	ASSERT_STREQ(x.out, "");
	ASSERT_STREQ(x.err, "ringlog: help: unknown command 'nope' (try 'ringlog help')\n");
	run_free(&x);
	rl(&x, "help", "start", "stop", NULL, NULL);
	ASSERT_EQ(x.status, 2);
	ASSERT_STREQ(x.err, "ringlog: help: unexpected argument 'stop'\nusage: ringlog help [COMMAND]\n");
	run_free(&x);
	rl(&x, "nope", "--help", NULL, NULL, NULL);
	ASSERT_EQ(x.status, 2);
	ASSERT_STREQ(x.err, "ringlog: unknown command 'nope' (try 'ringlog help')\n");
	run_free(&x);
	/* No command: the error line, then the overview, on stderr. */
	rl(&x, NULL, NULL, NULL, NULL, NULL);
	ASSERT_EQ(x.status, 2);
	ASSERT_STREQ(x.out, "");
	ok(strncmp(x.err, "ringlog: missing COMMAND\n", 25) == 0 && strcmp(x.err + 25, o.out) == 0,
	   "no command: the error line and the overview on stderr");
	run_free(&x);

	/* Help that cannot be written is an error, not a silent success. */
	if (access("/dev/full", W_OK) == 0) {
		struct proc_bg p;
		proc_start_ex(&p, (const char *const[]){ h_bin(), "help", "start", NULL }, -1,
			      "/dev/full");
		struct run f = proc_reap(&p);
		ok(f.status == 1, "help into a full disk exits 1");
		run_free(&f);
	}

	check_manual_renders(man1);
	check_manual_renders(man5);
	run_free(&o);
	free(man);
	/* An error line never passes on what a terminal acts on, whether
	 * the user typed it or a directory held it: one line, escaped. */
	char dir[] = "/tmp/rlog-esc-XXXXXX", evil[128];
	BAIL_IF(mkdtemp(dir) == NULL, "mkdtemp");
	snprintf(evil, sizeof evil, "%s/h\x1b[31mX\a.rlog", dir);
	FILE *f = fopen(evil, "w");
	BAIL_IF(f == NULL, "cannot create %s", evil);
	fputs("junk", f);
	fclose(f);
	const char *bad[][3] = { { "start", "x", "--mode=\x1b[31mred\xc2\x9b" },
				 { "dump", dir, NULL },
				 { "stats", dir, NULL },
				 { "dump", "/nonexistent\a", NULL } };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		rl(&x, bad[i][0], bad[i][1], bad[i][2], NULL, NULL);
		size_t ctl = 0, nl = 0;
		for (const unsigned char *p = (const unsigned char *)x.err; *p; p++) {
			ctl += (*p < 0x20 && *p != '\n') || *p == 0x7f || (*p == 0xc2 && p[1] == 0x9b);
			nl += *p == '\n';
		}
		ok(x.status != 0 && ctl == 0 && nl == 1, "%s: one line, escaped (exit %d): %s",
		   bad[i][0], x.status, x.err);
		run_free(&x);
	}
	unlink(evil);
	rmdir(dir);
	return done_testing();
}
