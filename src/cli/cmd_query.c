/*
 * cmd_query.c - `ringlog query NAME` (properties and live statistics, ETW's
 * EVENT_TRACE_CONTROL_QUERY) and `ringlog list` (one line per session, or
 * "no sessions").
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "args.h"
#include "session_print.h"

int cmd_query(int argc, char **argv)
{
	if (argc != 2) {
		cli_error("query: usage: ringlog query NAME");
		return 2;
	}
	const char *name = argv[1];
	struct rlog__session_info in;
	int err = rlog__session_query(name, &in);
	if (err == -EINVAL)
		return cli_error("query: invalid session name '%s'", name);
	if (err == -ENOENT)
		return cli_error("query: no session named '%s'", name);
	if (err == -EPROTO)
		return cli_error("query: %s: not a ringlog session region of this version", name);
	if (err < 0)
		return cli_error("query: %s: %s", name, strerror(-err));
	printf("session: %s\n", in.name);
	printf("state: %s\n", cli_state_name(in.state));
	printf("file: %s\n", in.log_file);
	printf("log_file_mode: sequential\n");
	cli_kv_u64("daemon_pid", in.daemon_pid);
	cli_kv_u64("buffer_size", in.buffer_size);
	cli_kv_u64("buffers", in.buffer_count);
	cli_kv_u64("buffers_free", in.free_buffers);
	cli_kv_u64("high_water", in.high_water);
	cli_kv_u64("flush_timer_ms", in.flush_timer_ms);
	printf("enable_mask: 0x%016" PRIx64 "\n", in.enable_mask);
	printf("tick_source: %s\n", in.tick_source == RLOG_TICK_TSC ? "tsc" : "monotonic");
	cli_kv_u64("tick_freq_hz", in.tick_freq_hz);
	cli_kv_u64("producer_threads", in.producer_threads);
	cli_kv_u64("processes", in.processes);
	cli_stats_print(&in.stats);
	if (in.last_error[0])
		printf("last_error: %s\n", in.last_error);
	return 0;
}

static void list_one(int err, const struct rlog__session_info *in, void *arg)
{
	(void)arg;
	if (err < 0)
		printf("%-24s %-9s %s\n", in->name, "invalid", "-");
	else
		printf("%-24.64s %-9s %s\n", in->name, cli_state_name(in->state), in->log_file);
}

int cmd_list(int argc, char **argv)
{
	(void)argv;
	if (argc != 1) {
		cli_error("list: usage: ringlog list");
		return 2;
	}
	int n = rlog__session_list(list_one, NULL);
	if (n < 0)
		return cli_error("list: /dev/shm: %s", strerror(-n));
	/* Silence would not tell "no sessions" from "nothing worked". */
	if (n == 0)
		printf("no sessions\n");
	return 0;
}
