/*
 * cmd_start.c - `ringlog start NAME -o FILE [options]`: create a session and
 * its capture daemon (sequential log file mode).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "cli.h"
#include "session_print.h"

#define USAGE "usage: ringlog start NAME -o FILE [--buffer-size KB] [--buffers N] " \
	      "[--flush-timer MS] [--mask HEX] [--force]"

int cmd_start(int argc, char **argv)
{
	const char *name = NULL, *out = NULL;
	bool force = false;
	struct rlog__region_params p = {
		.buffer_size = RLOG_DEFAULT_BUFFER_SIZE,
		.buffer_count = RLOG_DEFAULT_BUFFER_COUNT,
		.flush_timer_ms = 0,
		.enable_mask = ~UINT64_C(0),
	};
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		uint64_t v;
		bool has_val = i + 1 < argc;
		if ((strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0) && has_val) {
			out = argv[++i];
		} else if (strcmp(a, "--force") == 0) {
			force = true;
		} else if (strcmp(a, "--buffer-size") == 0 && has_val) {
			if (!cli_parse_u64(argv[++i], 4, 16384, &v) || v % 4 != 0)
				return cli_error("start: --buffer-size '%s': expected KB, a multiple of 4 "
						 "from 4 to 16384", argv[i]);
			p.buffer_size = (uint32_t)v * 1024;
		} else if (strcmp(a, "--buffers") == 0 && has_val) {
			if (!cli_parse_u64(argv[++i], 2, 65536, &v))
				return cli_error("start: --buffers '%s': expected a number from 2 to 65536",
						 argv[i]);
			p.buffer_count = (uint32_t)v;
		} else if (strcmp(a, "--flush-timer") == 0 && has_val) {
			if (!cli_parse_u64(argv[++i], 0, 3600000, &v))
				return cli_error("start: --flush-timer '%s': expected milliseconds from 0 "
						 "to 3600000", argv[i]);
			p.flush_timer_ms = (uint32_t)v;
		} else if (strcmp(a, "--mask") == 0 && has_val) {
			if (!cli_parse_u64(argv[++i], 0, UINT64_MAX, &v))
				return cli_error("start: --mask '%s': expected a number (0x... for hex)",
						 argv[i]);
			p.enable_mask = v;
		} else if (a[0] == '-') {
			cli_error("start: unknown or incomplete option '%s'", a);
			fprintf(stderr, "%s\n", USAGE);
			return 2;
		} else if (name == NULL) {
			name = a;
		} else {
			cli_error("start: unexpected argument '%s'", a);
			fprintf(stderr, "%s\n", USAGE);
			return 2;
		}
	}
	if (name == NULL || out == NULL) {
		cli_error("start: %s", name == NULL ? "missing session NAME" : "missing -o FILE");
		fprintf(stderr, "%s\n", USAGE);
		return 2;
	}
	struct rlog__start st = { .name = name, .path = out, .params = p, .force = force,
				  .detach = true };
	struct rlog__start_result res;
	int err = rlog__session_start(&st, &res);
	if (err < 0)
		return cli_start_error(&st, &res, err);
	/* The absolute path, as the session records it and as query and stop
	 * print it. */
	printf("session: %s\ndaemon_pid: %d\nfile: %s\n", name, (int)res.daemon_pid, res.log_file);
	return 0;
}
