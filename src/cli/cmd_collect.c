/*
 * cmd_collect.c - `ringlog collect URL -o DIR [--follow] [--group NAME]
 * [--gap-wait DURATION]`:
 * parses, runs src/collect/, prints one line per file written.
 */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "args.h"
#include "cli.h"
#include "collect/collect.h"
#include "term.h"

static const struct cli_opt opts[] = {
	{ "--output", "-o", true }, { "--follow", NULL, false }, { "--group", NULL, true },
	{ "--gap-wait", NULL, true }, { NULL, NULL, false },
};

static volatile int stop_flag;

static void on_stop(int sig)
{
	(void)sig;
	stop_flag = 1;
}

static void report(const struct rlog__collect_file *f, void *arg)
{
	(void)arg;
	printf("file: %s chunks: %" PRIu64 " duplicates: %" PRIu64 " gaps: %" PRIu64
	       " bytes: %" PRIu64 "\n", f->path, f->chunks, f->duplicates, f->gaps, f->bytes);
}

int cmd_collect(int argc, char **argv)
{
	uint64_t refused = 0;
	struct rlog__collect_opts o = { .stop = &stop_flag, .commits_refused = &refused };
	struct cli_args a;
	cli_args_init(&a, "collect", opts, 1, argc, argv);
	while (cli_args_next(&a)) {
		if (cli_is(&a, "--output"))
			o.dir = a.value;
		else if (cli_is(&a, "--follow"))
			o.follow = true;
		else if (cli_is(&a, "--group"))
			o.group = a.value;
		else if (cli_is(&a, "--gap-wait")) {
			uint32_t ms;
			if (!cli_parse_duration_ms(a.value, 3600000, &ms) || ms == 0)
				return cli_error("collect: --gap-wait '%s': expected milliseconds (or a "
						 "number with ms or s) from 1 ms to 3600 s", a.value);
			o.gap_wait_ms = ms;
		}
	}
	if (!cli_args_need(&a, 1, "URL"))
		return 2;
	if (o.dir == NULL)
		return cli_usage_error("collect", "missing -o DIR");
	o.url = a.pos[0];
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_stop;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	char why[300] = "";
	int err = rlog__collect(&o, report, NULL, why, sizeof why);
	/* Refused while the group rebalanced: not an error (the files and
	 * their state are on disk; a redelivery is dropped), but told. */
	if (refused)
		printf("commits refused by a rebalance: %" PRIu64 "\n", refused);
	fflush(stdout);
	if (err < 0)
		return cli_error("collect: %s: %s", o.url, why[0] ? why : strerror(-err));
	return 0;
}
