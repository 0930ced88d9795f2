/*
 * cmd_update.c - `ringlog update NAME [--enable LIST | --mask HEX]
 * [--flush-timer T] [--max-buffers N] [--counters LIST] [--counter-period
 * MS]`: change a running session's EnableFlags, FlushTimer and
 * MaximumBuffers (ETW's ControlTrace update), and its counters.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "args.h"
#include "cli.h"
#include "session/session.h"
#include "session_print.h"

#define USAGE "usage: ringlog update NAME [--enable LIST] [--mask HEX] [--flush-timer T] " \
	      "[--max-buffers N] [--counters LIST] [--counter-period MS]"

int cmd_update(int argc, char **argv)
{
	const char *name = NULL;
	struct rlog__update u = { 0 };
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		uint64_t v;
		bool has_val = i + 1 < argc;
		if (strcmp(a, "--enable") == 0 && has_val) {
			u.enable = argv[++i];
		} else if (strcmp(a, "--mask") == 0 && has_val) {
			if (!cli_parse_u64(argv[++i], 0, UINT64_MAX, &v))
				return cli_error("update: --mask '%s': expected a number (0x... for hex)",
						 argv[i]);
			u.set_mask = true;
			u.mask = v;
		} else if (strcmp(a, "--flush-timer") == 0 && has_val) {
			if (!cli_parse_duration_ms(argv[++i], 3600000, &u.flush_timer_ms))
				return cli_error("update: --flush-timer '%s': expected milliseconds (or a "
						 "number with ms or s) up to 3600 s", argv[i]);
			u.set_flush_timer = true;
		} else if (strcmp(a, "--max-buffers") == 0 && has_val) {
			if (!cli_parse_u64(argv[++i], 2, 65536, &v))
				return cli_error("update: --max-buffers '%s': expected a number from 2 to "
						 "65536", argv[i]);
			u.set_max_buffers = true;
			u.max_buffers = (uint32_t)v;
		} else if (strcmp(a, "--counters") == 0 && has_val) {
			char why[200];
			if (rlog__counter_parse(argv[++i], &u.counter_mask, why, sizeof why) < 0)
				return cli_error("update: --counters: %s", why);
			u.set_counters = true;
		} else if (strcmp(a, "--counter-period") == 0 && has_val) {
			if (!cli_parse_duration_ms(argv[++i], 60000, &u.counter_period_ms) ||
			    u.counter_period_ms < 10)
				return cli_error("update: --counter-period '%s': expected milliseconds (or "
						 "a number with ms or s) from 10 ms to 60 s", argv[i]);
			u.set_counter_period = true;
		} else if (a[0] == '-') {
			cli_error("update: unknown or incomplete option '%s'", a);
			fprintf(stderr, "%s\n", USAGE);
			return 2;
		} else if (name == NULL) {
			name = a;
		} else {
			cli_error("update: unexpected argument '%s'", a);
			fprintf(stderr, "%s\n", USAGE);
			return 2;
		}
	}
	if (name == NULL || (!u.enable && !u.set_mask && !u.set_flush_timer && !u.set_max_buffers &&
			     !u.set_counters && !u.set_counter_period)) {
		cli_error("update: %s", name == NULL ? "missing session NAME" : "nothing to change");
		fprintf(stderr, "%s\n", USAGE);
		return 2;
	}
	if (u.enable && u.set_mask)
		return cli_error("update: use one of --enable and --mask");
	if (u.set_counters)
		u.counter_mask = rlog__counters_check(u.counter_mask, cli_counter_refused, "update");
	char why[256];
	int err = rlog__session_update(name, &u, why, sizeof why);
	if (cli_session_refused("update", name, err))
		return 1;
	switch (err) {
	case 0:
		return 0;
	case -EINVAL:
		if (why[0])
			return cli_error("update: %s", why);
		return cli_error("update: invalid session name '%s'", name);
	case -ERANGE:
		return cli_error("update: %s", why);
	case -ENOENT:
		return cli_error("update: no session named '%s'", name);
	case -EPROTO:
		return cli_error("update: %s: not a ringlog session region of this version", name);
	}
	return cli_error("update: %s: %s", name, strerror(-err));
}
