/*
 * prog.c - the command line of the bench/ programs (prog.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prog.h"
#include "ringlog.h"

static const char *prog_name = "bench";

static void usage(const char *prog, const char *what, const char *arg)
{
	fprintf(stderr, "%s: %s%s%s\nusage: %s [--runs N] [--events N] [--quick]\n", prog, what,
		arg ? " " : "", arg ? arg : "", prog);
	exit(2);
}

static uint64_t number(const char *prog, const char *opt, const char *s, uint64_t min,
		       uint64_t max)
{
	char *end;
	errno = 0;
	if (s == NULL || *s < '0' || *s > '9')
		usage(prog, opt, "needs a number");
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || *end || v < min || v > max)
		usage(prog, opt, "is out of range");
	return v;
}

void prog_args(int argc, char **argv, struct prog_opts *o)
{
	const char *prog = argc > 0 ? argv[0] : "bench";
	const char *slash = strrchr(prog, '/');
	prog = slash ? slash + 1 : prog;
	prog_name = prog;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--quick") == 0) {
			o->quick = true;
		} else if (strcmp(argv[i], "--runs") == 0) {
			o->runs = (unsigned)number(prog, "--runs", i + 1 < argc ? argv[++i] : NULL, 1, 101);
			o->runs_given = true;
		} else if (strcmp(argv[i], "--events") == 0) {
			o->events = number(prog, "--events", i + 1 < argc ? argv[++i] : NULL, 1000,
					   UINT64_C(1) << 32);
			o->events_given = true;
		} else {
			usage(prog, "unknown argument", argv[i]);
		}
	}
}

void prog_quick(struct prog_opts *o, unsigned runs, uint64_t events)
{
	if (!o->quick)
		return;
	if (!o->runs_given)
		o->runs = runs;
	if (!o->events_given)
		o->events = events;
}

int prog_session_open(struct bench_session *s, const char *tag,
		      const struct rlog__region_params *p)
{
	int err = bench_session_start(s, tag, p);
	if (err == 0 && (err = rlog_attach(s->name)) < 0) {
		struct rlog__stop_result res;
		bench_session_stop(s, &res);
	}
	if (err < 0)
		fprintf(stderr, "%s: session %s: %s\n", prog_name, s->name, strerror(-err));
	return err;
}

void prog_session_close(struct bench_session *s, struct rlog__stop_result *res)
{
	struct rlog__stop_result unused;
	rlog_detach();
	bench_session_stop(s, res ? res : &unused);
}
