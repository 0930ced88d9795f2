/*
 * cmd_query.c - `ringlog query NAME` (properties and live statistics, ETW's
 * EVENT_TRACE_CONTROL_QUERY) and `ringlog list` (one line per session, or
 * "no sessions").
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "args.h"
#include "atomics.h"
#include "cli.h"
#include "control.h"

static const char *state_name(uint32_t s)
{
	switch (s) {
	case RLOG_STATE_CREATING: return "creating";
	case RLOG_STATE_ACTIVE: return "active";
	case RLOG_STATE_STOPPING: return "stopping";
	case RLOG_STATE_STOPPED: return "stopped";
	case RLOG_STATE_FAILED: return "failed";
	default: return "unknown";
	}
}

static int open_session(const char *cmd, const char *name, struct rlog__region *r)
{
	if (rlog__name_validate(name) < 0)
		return cli_error("%s: invalid session name '%s'", cmd, name);
	int err = rlog__region_open(name, r);
	if (err == -ENOENT)
		return cli_error("%s: no session named '%s'", cmd, name);
	if (err == -EPROTO)
		return cli_error("%s: %s: not a ringlog session region of this version", cmd, name);
	if (err < 0)
		return cli_error("%s: %s: %s", cmd, name, strerror(-err));
	return 0;
}

int cmd_query(int argc, char **argv)
{
	if (argc != 2) {
		cli_error("query: usage: ringlog query NAME");
		return 2;
	}
	struct rlog__region r;
	if (open_session("query", argv[1], &r) != 0)
		return 1;
	struct rlog_shm_header *h = r.hdr;
	uint32_t threads = 0;
	for (uint32_t i = 0; i < r.slot_count; i++)
		threads += load_relaxed(&r.slots[i].state) == RLOG_SLOT_ACTIVE;
	uint32_t free_buffers = rlog__region_free_count(&r);
	printf("session: %.*s\n", RLOG_NAME_MAX, h->name);
	printf("state: %s\n", state_name(load_acquire(&h->state)));
	printf("file: %.*s\n", RLOG_PATH_MAX - 1, h->log_file);
	printf("log_file_mode: sequential\n");
	cli_kv_u64("daemon_pid", h->daemon_pid);
	cli_kv_u64("buffer_size", r.buffer_size);
	cli_kv_u64("buffers", r.buffer_count);
	cli_kv_u64("buffers_free", free_buffers);
	cli_kv_u64("high_water", r.high_water);
	cli_kv_u64("flush_timer_ms", h->flush_timer_ms);
	printf("enable_mask: 0x%016" PRIx64 "\n", load_relaxed(&h->enable_mask));
	printf("tick_source: %s\n", h->tick_source == RLOG_TICK_TSC ? "tsc" : "monotonic");
	cli_kv_u64("tick_freq_hz", h->tick_freq_hz);
	cli_kv_u64("producer_threads", threads);
	struct rlog_shm_stats_copy s;
	ctl_stats_copy(h, &s);
	ctl_stats_print(&s);
	if (h->last_error[0])
		printf("last_error: %.*s\n", 255, h->last_error);
	rlog__region_close(&r);
	return 0;
}

static void list_one(const char *name, void *arg)
{
	(void)arg;
	struct rlog__region r;
	if (rlog__region_open(name, &r) < 0) {
		printf("%-24s %-9s %s\n", name, "invalid", "-");
		return;
	}
	printf("%-24.64s %-9s %.*s\n", r.hdr->name, state_name(load_acquire(&r.hdr->state)),
	       RLOG_PATH_MAX - 1, r.hdr->log_file);
	rlog__region_close(&r);
}

int cmd_list(int argc, char **argv)
{
	(void)argv;
	if (argc != 1) {
		cli_error("list: usage: ringlog list");
		return 2;
	}
	int n = rlog__region_list(list_one, NULL);
	if (n < 0)
		return cli_error("list: /dev/shm: %s", strerror(-n));
	/* Silence would not tell "no sessions" from "nothing worked". */
	if (n == 0)
		printf("no sessions\n");
	return 0;
}
