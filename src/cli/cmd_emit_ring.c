/*
 * cmd_emit_ring.c - `ringlog emit --ring PATH ID ...`: write events into a
 * single ring (include/ringlog/ring.h) from the shell, time-stamped with
 * the ring's clock.  While it runs, emit is the ring's producer: no other
 * producer may write into the ring at the same time (the ring has one).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "clock.h"
#include "ring/map.h"
#include "ringlog/ring.h"

int emit_ring(const char *path, unsigned id, bool flagged, uint16_t flag, const uint8_t *payload,
	      size_t len, uint64_t count)
{
	char why[256];
	struct rlog__ring_view v;
	int err = rlog__ring_map(path, &v, why, sizeof why);
	if (err < 0)
		return cli_error("emit: %s: %s", path, why);
	if (v.tick_source == RLOG_TICK_COUNTER) {
		rlog__ring_unmap(&v);
		return cli_error("emit: %s: the ring's clock is its producer's own counter, which "
				 "emit cannot read", path);
	}
	if (rlog_ring_record_size(len, flagged) > v.size - RLOG_RING_GAP) {
		uint32_t size = v.size;
		rlog__ring_unmap(&v);
		return cli_error("emit: %s: a record of %zu payload bytes does not fit in the "
				 "%u-byte ring", path, len, size);
	}
	uint64_t written = 0, lost = 0;
	for (uint64_t i = 0; i < count; i++) {
		uint32_t ts = (uint32_t)rlog__ticks(v.tick_source);
		int r = flagged ? rlog_ring_write_flagged(v.hdr, id, flag, payload, len, ts)
				: rlog_ring_write(v.hdr, id, payload, len, ts);
		if (r == 1) {
			written++;
		} else if (r == -ENOBUFS || r == -EBUSY) {
			lost++;
		} else {
			rlog__ring_unmap(&v);
			printf("emitted: %" PRIu64 "\nwritten: %" PRIu64 "\nlost: %" PRIu64 "\n",
			       written + lost, written, lost);
			const char *what = r == -EPROTO ? "the ring's offsets are damaged"
							 : strerror(-r);
			return cli_error("emit: %s: %s", path, what);
		}
	}
	rlog__ring_unmap(&v);
	printf("emitted: %" PRIu64 "\nwritten: %" PRIu64 "\nlost: %" PRIu64 "\n", written + lost,
	       written, lost);
	return 0;
}
