/*
 * cmd_start.c - `ringlog start NAME [-o FILE] [properties]`: create a
 * session and its capture daemon.  Every property of ETW's
 * EVENT_TRACE_PROPERTIES has a flag (docs/SESSIONS.md); src/session/ checks
 * the combinations and does the work.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "cli.h"
#include "counter_catalog.h"
#include "session_print.h"
#include "daemon/sink_net.h"

static const struct cli_opt opts[] = {
	{ "--output", "-o", true },     { "--mode", NULL, true },
	{ "--max-file-size", NULL, true }, { "--buffer-size", NULL, true },
	{ "--min-buffers", NULL, true }, { "--max-buffers", NULL, true },
	{ "--buffers", NULL, true },    { "--flush-timer", NULL, true },
	{ "--enable", NULL, true },     { "--mask", NULL, true },
	{ "--high-water", NULL, true }, { "--age-limit", NULL, true },
	{ "--counters", NULL, true },   { "--counter-period", NULL, true },
	{ "--force", NULL, false },     { "--resume", NULL, false },
	{ "--system", NULL, true },     { "--system-pid", NULL, true },
	{ "--follow", NULL, false },    { "--profile-hz", NULL, true },
	{ "--sink", NULL, true },       { "--host-id", NULL, true },
	{ "--sink-buffer", NULL, true }, { "--sink-chunk", NULL, true },
	{ "--drain-threads", NULL, true },
	{ NULL, NULL, false },
};

/* Parses a --mode list into RLOG_MODE_* bits. */
static bool parse_modes(const char *list, uint32_t *out)
{
	static const struct { const char *name; uint32_t bit; } modes[] = {
		{ "sequential", RLOG_MODE_SEQUENTIAL }, { "circular", RLOG_MODE_CIRCULAR },
		{ "newfile", RLOG_MODE_NEWFILE },       { "preallocate", RLOG_MODE_PREALLOCATE },
		{ "real-time", RLOG_MODE_REAL_TIME },   { "overwrite", RLOG_MODE_OVERWRITE },
	};
	uint32_t m = 0;
	const char *p = list;
	while (*p) {
		size_t n = strcspn(p, ",");
		size_t k = 0;
		while (k < sizeof modes / sizeof modes[0] &&
		       !(strlen(modes[k].name) == n && strncmp(modes[k].name, p, n) == 0))
			k++;
		if (k == sizeof modes / sizeof modes[0])
			return false;
		m |= modes[k].bit;
		p += n + (p[n] == ',');
	}
	*out = m;
	return true;
}

/* `ringlog start NAME --resume`: a new daemon for an orphaned session. */
static int resume_session(const char *name)
{
	pid_t pid = 0;
	char detail[256];
	int err = rlog__session_resume(name, true, &pid, detail, sizeof detail);
	if (cli_session_refused("start", name, err))
		return 1;
	switch (err) {
	case 0:
		break;
	case -EBUSY:
		return cli_error("start: %s: its daemon is running: nothing to resume", name);
	case -ESRCH:
		return cli_error("start: %s: the session is not running (stopped, or never started): "
				 "nothing to resume", name);
	case -ECHILD:
		return cli_error("start: %s: the new daemon died before it took the session over", name);
	case -EINVAL:
	case -ENOENT:
	case -EPROTO:
	case -ENODATA: {
		struct rlog__stop_result res;
		memset(&res, 0, sizeof res);
		if (err == -ENODATA)
			return cli_error("start: %s: its log file has no LOG_MARKER block to go on "
					 "from; the session is left as it is", name);
		return cli_stop_error("start", name, &res, err);
	}
	default:
		return cli_error("start: %s: %s", name, detail[0] ? detail : strerror(-err));
	}
	fprintf(stderr, "ringlog: start: %s: resumed: a new daemon took the session over from the "
			"one that died\n", name);
	printf("session: %s\ndaemon_pid: %d\n", name, (int)pid);
	return 0;
}

bool cli_sink_arg(const struct cli_args *a, struct cli_sink_args *s)
{
	if (cli_is(a, "--sink"))
		s->url = a->value;
	else if (cli_is(a, "--host-id"))
		s->host_id = a->value;
	else if (cli_is(a, "--sink-buffer"))
		s->buffer = a->value;
	else if (cli_is(a, "--sink-chunk"))
		s->chunk = a->value;
	else
		return false;
	return true;
}

int cli_sink_options(const char *cmd, struct rlog__sink_spec *spec, const struct cli_sink_args *s)
{
	const char *host_id = s->host_id, *buffer = s->buffer, *chunk = s->chunk;
	spec->url = s->url;
	if (s->url == NULL && (host_id || buffer || chunk))
		return cli_error("%s: --host-id, --sink-buffer and --sink-chunk go with --sink", cmd);
	if (s->url == NULL)
		return 0;
	char why[200];
	if (rlog__sink_url_check(spec->url, why, sizeof why) < 0)
		return cli_error("%s: --sink '%s': %s", cmd, spec->url, why);
	int err = rlog__sink_spec_host(spec);
	if (host_id && rlog__host_id_parse(host_id, spec->host_id) < 0)
		return cli_error("%s: --host-id '%s': expected 32 hex digits", cmd, host_id);
	if (err < 0 && host_id == NULL)
		return cli_error("%s: --sink: no machine id (/etc/machine-id: %s): name one with "
				 "--host-id", cmd, strerror(-err));
	if (spec->host_name[0] == '\0')
		snprintf(spec->host_name, sizeof spec->host_name, "localhost");
	spec->buffer = RLOG__SINK_BUFFER_DEFAULT;
	if (buffer && (!cli_parse_size(buffer, &spec->buffer) || spec->buffer < RLOG__SINK_BUFFER_MIN))
		return cli_error("%s: --sink-buffer '%s': expected a size of at least 1M: 64M, 1G",
				 cmd, buffer);
	uint64_t v = 0;
	if (chunk && (!cli_parse_size(chunk, &v) || v < RLOG__SINK_CHUNK_MIN ||
		      v > RLOG__SINK_CHUNK_MAX))
		return cli_error("%s: --sink-chunk '%s': expected a size from 64K to 4M", cmd, chunk);
	spec->chunk = (uint32_t)v;
	/* Chunks of --sink-chunk and one block more go whole into the
	 * engine's --sink-buffer: the rule the daemon checks a request by
	 * (the bounds above being met, only the two chunks are left). */
	if (!rlog__sink_sizes_ok(spec->buffer, spec->chunk))
		return cli_error("%s: --sink-chunk '%s': --sink-buffer must hold two chunks "
				 "at least", cmd, chunk);
	return 0;
}

int cmd_start(int argc, char **argv)
{
	const char *out = NULL, *enable = NULL;
	bool force = false;
	struct rlog__region_params p;
	rlog__props_default(&p);
	bool min_given = false, mask_given = false, timer_given = false, resume = false;
	int options = 0, rc;
	struct rlog__sys_props sys;
	uint32_t sys_give = 0;
	rlog__sys_props_default(&sys);
	struct rlog__sink_spec sink;
	memset(&sink, 0, sizeof sink);
	struct cli_sink_args sa = { NULL, NULL, NULL, NULL };
	struct cli_args a;
	cli_args_init(&a, "start", opts, 1, argc, argv);
	while (cli_args_next(&a)) {
		const char *val = a.value;
		uint64_t v;
		options += !cli_is(&a, "--resume");
		if (cli_sys_option(&a, &sys, &sys_give, &rc)) {
			if (rc)
				return rc;
		} else if (cli_is(&a, "--resume")) {
			resume = true;
		} else if (cli_is(&a, "--output")) {
			out = val;
		} else if (cli_is(&a, "--force")) {
			force = true;
		} else if (cli_is(&a, "--buffer-size")) {
			if (!cli_parse_u64(val, 4, 1024, &v) || (v & (v - 1)) != 0)
				return cli_error("start: --buffer-size '%s': expected KB, a power of two "
						 "from 4 to 1024", val);
			p.buffer_size = (uint32_t)v * 1024;
		} else if (cli_is(&a, "--buffers")) {
			if (!cli_parse_u64(val, 2, 65536, &v))
				return cli_error("start: --buffers '%s': expected a number from 2 to 65536",
						 val);
			p.min_buffers = p.max_buffers = (uint32_t)v;
			min_given = true;
		} else if (cli_is(&a, "--min-buffers")) {
			if (!cli_parse_u64(val, 2, 65536, &v))
				return cli_error("start: --min-buffers '%s': expected a number from 2 to "
						 "65536", val);
			p.min_buffers = (uint32_t)v;
			min_given = true;
		} else if (cli_is(&a, "--max-buffers")) {
			if (!cli_parse_u64(val, 2, 65536, &v))
				return cli_error("start: --max-buffers '%s': expected a number from 2 to "
						 "65536", val);
			p.max_buffers = (uint32_t)v;
		} else if (cli_is(&a, "--flush-timer")) {
			if (!cli_parse_duration_ms(val, 3600000, &p.flush_timer_ms))
				return cli_error("start: --flush-timer '%s': expected milliseconds (or a "
						 "number with ms or s) up to 3600 s", val);
			timer_given = true;
		} else if (cli_is(&a, "--mask")) {
			if (!cli_parse_u64(val, 0, UINT64_MAX, &v))
				return cli_error("start: --mask '%s': expected a number (0x... for hex)",
						 val);
			p.enable_mask = v;
			mask_given = true;
		} else if (cli_is(&a, "--enable")) {
			enable = val;
		} else if (cli_is(&a, "--mode")) {
			if (!parse_modes(val, &p.log_file_mode))
				return cli_error("start: --mode '%s': expected a comma-separated list of "
						 "sequential, circular, newfile, preallocate, real-time, "
						 "overwrite",
						 val);
		} else if (cli_is(&a, "--max-file-size")) {
			if (!cli_parse_u64(val, 1, 1048576, &v))
				return cli_error("start: --max-file-size '%s': expected MB, 1 to 1048576",
						 val);
			p.max_file_size = v << 20;
		} else if (cli_is(&a, "--high-water")) {
			if (!cli_parse_u64(val, 1, 100, &v))
				return cli_error("start: --high-water '%s': expected a percentage of the "
						 "pool, 1 to 100", val);
			p.high_water_pct = (uint32_t)v;
		} else if (cli_is(&a, "--counters")) {
			char why[200];
			if (rlog__counter_parse(val, &p.counter_mask, why, sizeof why) < 0)
				return cli_error("start: --counters: %s", why);
		} else if (cli_is(&a, "--counter-period")) {
			if (!cli_parse_duration_ms(val, 60000, &p.counter_period_ms) ||
			    p.counter_period_ms < 10)
				return cli_error("start: --counter-period '%s': expected milliseconds (or "
						 "a number with ms or s) from 10 ms to 60 s", val);
		} else if (cli_sink_arg(&a, &sa)) {
			continue;
		} else if (cli_is(&a, "--age-limit")) {
			if (!cli_parse_u64(val, 0, 1000000, &v))
				return cli_error("start: --age-limit '%s': expected minutes", val);
			p.age_limit = (uint32_t)v;
		} else if (cli_is(&a, "--drain-threads")) {
			if (!cli_parse_u64(val, 1, RLOG__DRAIN_THREADS_MAX, &v))
				return cli_error("start: --drain-threads '%s': expected a number from 1 "
						 "to %d", val, RLOG__DRAIN_THREADS_MAX);
			p.drain_threads = (uint32_t)v;
		}
	}
	if (!cli_args_need(&a, 1, "session NAME"))
		return 2;
	const char *name = a.pos[0];
	if (resume && options)
		return cli_error("start: --resume takes no other option: the session keeps its "
				 "properties");
	if (resume)
		return resume_session(name);
	if (mask_given && enable)
		return cli_error("start: use one of --enable and --mask");
	if ((rc = cli_sink_options("start", &sink, &sa)))
		return rc;
	/* A real-time consumer waits for full buffers without a flush timer:
	 * a real-time session drains partial ones every second unless told
	 * otherwise (docs/SESSIONS.md). */
	if (!timer_given && (p.log_file_mode & RLOG_MODE_REAL_TIME))
		p.flush_timer_ms = 1000;
	/* What this machine cannot count is said, one line each, and left
	 * out; the session records the rest. */
	p.counter_mask = rlog__counters_check(p.counter_mask, cli_counter_refused, "start");
	/* A smaller maximum lowers the default minimum with it. */
	if (!min_given && p.min_buffers > p.max_buffers)
		p.min_buffers = p.max_buffers;
	struct rlog__start st = { .name = name, .path = out, .params = p, .force = force,
				  .detach = true, .enable = enable, .system = sys,
				  .system_give = sys_give, .sink = sink.url ? &sink : NULL };
	struct rlog__start_result res;
	int err = rlog__session_start(&st, &res);
	if (err < 0) {
		if (res.step == RLOG__START_PROPS && err == -EINVAL && out == NULL &&
		    !(p.log_file_mode & RLOG_MODE_REAL_TIME)) {
			/* A usage error: the one argument every start needs. */
			return cli_usage_error("start", "missing -o FILE");
		}
		return cli_start_error(&st, &res, err);
	}
	/* Drain threads that could not be created: the daemon drains with
	 * those it got, its own at least. */
	uint32_t asked = p.drain_threads ? p.drain_threads : RLOG__DRAIN_THREADS_DEFAULT;
	if (res.drain_running && res.drain_running < asked)
		fprintf(stderr, "ringlog: start: %s: %u of %u drain threads running: no more could "
				"be created\n", name, res.drain_running, asked);
	/* The absolute path, as the session records it and as query and stop
	 * print it. */
	printf("session: %s\ndaemon_pid: %d\nfile: %s\n", name, (int)res.daemon_pid,
	       res.log_file[0] ? res.log_file : "-");
	return 0;
}
