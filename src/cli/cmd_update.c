/*
 * cmd_update.c - `ringlog update NAME [--enable LIST | --mask HEX]
 * [--flush-timer T] [--max-buffers N] [--counters LIST] [--counter-period
 * MS] [--system LIST] [--system-pid LIST] [--follow | --no-follow]
 * [--profile-hz N]`: change a running session's EnableFlags, FlushTimer
 * and MaximumBuffers (ETW's ControlTrace update), its counters, and the
 * system events it records.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "args.h"
#include "cli.h"
#include "session/session.h"
#include "session_print.h"

static const struct cli_opt opts[] = {
	{ "--enable", NULL, true },      { "--mask", NULL, true },     { "--flush-timer", NULL, true },
	{ "--max-buffers", NULL, true }, { "--counters", NULL, true }, { "--counter-period", NULL, true },
	{ "--system", NULL, true },      { "--system-pid", NULL, true }, { "--follow", NULL, false },
	{ "--no-follow", NULL, false },  { "--profile-hz", NULL, true },
	{ NULL, NULL, false },
};

int cmd_update(int argc, char **argv)
{
	struct rlog__update u = { 0 };
	int rc;
	/* A sink is built with the session's output at start (its chunks
	 * number the file's blocks from block 0, docs/FORMAT.md "Chunks"):
	 * one cannot join mid-session yet.  Said plainly, not as an unknown
	 * option. */
	for (int i = 1; i < argc; i++)
		for (const char *const *o = (const char *const[]){ "--sink", "--sink-buffer",
								   "--sink-chunk", "--host-id",
								   NULL };
		     *o; o++) {
			size_t k = strlen(*o);
			if (strncmp(argv[i], *o, k) == 0 && (argv[i][k] == '\0' || argv[i][k] == '='))
				return cli_error("update: %s: not supported: a session's sink is "
						 "chosen at start (stop the session and start it "
						 "again with --sink)", *o);
		}
	struct cli_args a;
	cli_args_init(&a, "update", opts, 1, argc, argv);
	while (cli_args_next(&a)) {
		const char *val = a.value;
		uint64_t v;
		if (cli_sys_option(&a, &u.system, &u.system_give, &rc)) {
			if (rc)
				return rc;
		} else if (cli_is(&a, "--enable")) {
			u.enable = val;
		} else if (cli_is(&a, "--mask")) {
			if (!cli_parse_u64(val, 0, UINT64_MAX, &v))
				return cli_error("update: --mask '%s': expected a number (0x... for hex)",
						 val);
			u.set_mask = true;
			u.mask = v;
		} else if (cli_is(&a, "--flush-timer")) {
			if (!cli_parse_duration_ms(val, 3600000, &u.flush_timer_ms))
				return cli_error("update: --flush-timer '%s': expected milliseconds (or a "
						 "number with ms or s) up to 3600 s", val);
			u.set_flush_timer = true;
		} else if (cli_is(&a, "--max-buffers")) {
			if (!cli_parse_u64(val, 2, 65536, &v))
				return cli_error("update: --max-buffers '%s': expected a number from 2 to "
						 "65536", val);
			u.set_max_buffers = true;
			u.max_buffers = (uint32_t)v;
		} else if (cli_is(&a, "--counters")) {
			char why[200];
			if (rlog__counter_parse(val, &u.counter_mask, why, sizeof why) < 0)
				return cli_error("update: --counters: %s", why);
			u.set_counters = true;
		} else if (cli_is(&a, "--counter-period")) {
			if (!cli_parse_duration_ms(val, 60000, &u.counter_period_ms) ||
			    u.counter_period_ms < 10)
				return cli_error("update: --counter-period '%s': expected milliseconds (or "
						 "a number with ms or s) from 10 ms to 60 s", val);
			u.set_counter_period = true;
		}
	}
	if (!cli_args_need(&a, 1, "session NAME"))
		return 2;
	const char *name = a.pos[0];
	if (!u.enable && !u.set_mask && !u.set_flush_timer && !u.set_max_buffers && !u.set_counters &&
	    !u.set_counter_period && !u.system_give)
		return cli_usage_error("update", "nothing to change");
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
	case -EPERM:
		return cli_error("update: %s", why);
	case -ENOENT:
		return cli_error("update: no session named '%s'", name);
	case -EPROTO:
		return cli_error("update: %s: not a ringlog session region of this version", name);
	}
	return cli_error("update: %s: %s", name, strerror(-err));
}
