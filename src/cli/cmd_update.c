/*
 * cmd_update.c - `ringlog update NAME [--enable LIST | --mask MASK]
 * [--flush-timer T] [--max-buffers N] [--counters LIST] [--counter-period
 * MS] [--system LIST] [--system-pid LIST] [--follow | --no-follow]
 * [--profile-hz N] [--sink URL [--host-id ID] [--sink-buffer SIZE]
 * [--sink-chunk SIZE]]`: change a running session's EnableFlags,
 * FlushTimer and MaximumBuffers (ETW's ControlTrace update), its counters,
 * and the system events it records; add a multi-host sink.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "args.h"
#include "cli.h"
#include "daemon/sink_net.h"
#include "session/session.h"
#include "session_print.h"

static const struct cli_opt opts[] = {
	{ "--enable", NULL, true },      { "--mask", NULL, true },     { "--flush-timer", NULL, true },
	{ "--max-buffers", NULL, true }, { "--counters", NULL, true }, { "--counter-period", NULL, true },
	{ "--system", NULL, true },      { "--system-pid", NULL, true }, { "--follow", NULL, false },
	{ "--no-follow", NULL, false },  { "--profile-hz", NULL, true },
	{ "--sink", NULL, true },        { "--host-id", NULL, true },  { "--sink-buffer", NULL, true },
	{ "--sink-chunk", NULL, true },
	{ NULL, NULL, false },
};

int cmd_update(int argc, char **argv)
{
	struct rlog__update u = { 0 };
	int rc;
	struct rlog__sink_spec sink;
	memset(&sink, 0, sizeof sink);
	struct cli_sink_args sa = { NULL, NULL, NULL, NULL };
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
		} else {
			cli_sink_arg(&a, &sa);
		}
	}
	if (!cli_args_need(&a, 1, "session NAME"))
		return 2;
	const char *name = a.pos[0];
	bool others = u.enable || u.set_mask || u.set_flush_timer || u.set_max_buffers ||
		      u.set_counters || u.set_counter_period || u.system_give;
	if (!others && !sa.url && !sa.host_id && !sa.buffer && !sa.chunk)
		return cli_usage_error("update", "nothing to change");
	if ((rc = cli_sink_options("update", &sink, &sa)))
		return rc;
	if (u.enable && u.set_mask)
		return cli_error("update: use one of --enable and --mask");
	if (u.set_counters)
		u.counter_mask = rlog__counters_check(u.counter_mask, cli_counter_refused, "update");
	char why[256];
	int err = others ? rlog__session_update(name, &u, why, sizeof why) : 0;
	if (err == 0 && sink.url) {
		/* The daemon opens the sink (the request page, docs/FORMAT.md):
		 * "HOSTID BUFFER CHUNK URL". */
		char req[RLOG_PATH_MAX];
		int k = 0;
		for (int i = 0; i < 16; i++)
			k += snprintf(req + k, sizeof req - (size_t)k, "%02x", sink.host_id[i]);
		int m = snprintf(req + k, sizeof req - (size_t)k, " %llu %u %s",
				 (unsigned long long)sink.buffer, sink.chunk, sink.url);
		if (m < 0 || (size_t)m >= sizeof req - (size_t)k)
			return cli_error("update: %s: --sink: the URL is too long for the "
					 "request page (%zu bytes)", name, strlen(sink.url));
		err = rlog__session_sink_add(name, req, why, sizeof why);
		if (err == -EEXIST || (err < 0 && why[0] && err != -ENOENT && err != -EACCES))
			return cli_error("update: %s: --sink %s: %s", name, sink.url, why);
		if (err == -ECANCELED)
			return cli_error("update: %s: the session is not running", name);
	}
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
