/*
 * system_out.c - the system events in the daemon (system_out.h).
 */
#include "system_out.h"

#include <stdio.h>
#include <string.h>

#include "atomics.h"
#include "record.h"
#include "sink.h"
#include "system/system.h"

void rlog__sys_to_output(void *arg, uint32_t cpu, uint64_t base_time, const void *data,
			 uint32_t size, uint32_t records, uint32_t events)
{
	(void)events;
	struct rlog__output *out = arg;
	struct rlog__out_block b = { .flags = RLOG_BLOCK_FLAG_DAEMON | RLOG_BLOCK_FLAG_SYSTEM,
				     .pid = 0, .tid = cpu, .base_time = base_time, .data = data,
				     .size = size, .records = records };
	rlog__output_system_block(out, &b);
	rlog__output_meta_block(out, 0, cpu, base_time, data, size, RLOG_ID_EVENT_SCHEMA);
}

int rlog__sys_start(struct rlog__region *r, rlog__sys_emit_fn *emit, void *arg,
		    const struct rlog__sys_config *cfg, struct rlog__sys **out)
{
	struct rlog_shm_header *h = r->hdr;
	*out = NULL;
	if (cfg->flags == 0)
		return 0;
	struct rlog__sys_clock clk = { .tick_source = h->tick_source, .tick_freq_hz = h->tick_freq_hz,
				       .sync = { .ticks = h->sync_ticks,
						 .realtime_ns = h->sync_realtime_ns,
						 .monotonic_raw_ns = h->sync_monotonic_ns } };
	char why[200];
	int rc = rlog__sys_open(cfg, &clk, emit, arg, out, why, sizeof why);
	if (rc < 0 && h->last_error[0] == '\0')
		snprintf(h->last_error, sizeof h->last_error, "system events: %s", why);
	return rc;
}

void rlog__sys_publish(struct rlog__region *r, const struct rlog__sys *s,
		       const struct rlog__sys_stats *before)
{
	struct rlog__sys_stats st = { 0 };
	if (s != NULL)
		rlog__sys_get_stats(s, &st);
	struct rlog_shm_ctl *c = r->ctl;
	store_relaxed(&c->sys_written, before->written + st.written);
	store_relaxed(&c->sys_lost, before->lost + st.lost);
	store_relaxed(&c->sys_filtered, before->filtered + st.filtered);
	store_relaxed(&c->sys_handed_over, before->handed_over + st.handed_over);
	store_relaxed(&c->sys_loss_records, before->loss_records + st.loss_records);
	store_relaxed(&c->sys_bytes, before->bytes + st.bytes);
}
