/*
 * fuzz_stream.c - libFuzzer target for a real-time stream as `ringlog
 * tail` reads it (src/format/live.c): the input, cut into pieces of
 * sizes taken from its own bytes, is fed to the framing; every image it
 * makes is opened with the reader, read to the end (events, schemas,
 * names, losses) and its damage walked.  Whatever the bytes, no crash, no
 * read out of bounds, no hang, memory bounded.  scripts/fuzz.sh builds and
 * runs it from tests/fuzz/corpus/stream/ (streams a real daemon sent).
 */
#include <stddef.h>
#include <stdint.h>

#include "format/live.h"
#include "ringlog/reader.h"

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);

static volatile uint8_t sink;

static void read_image(const uint8_t *img, size_t len)
{
	struct rlog_reader *r;
	if (rlog_reader_open_mem(img, len, &r) < 0)
		return;
	struct rlog_event ev;
	while (rlog_reader_next(r, &ev) == 1) {
		for (size_t i = 0; i < ev.length; i++)
			sink ^= ((const uint8_t *)ev.payload)[i];
		const struct rlog_schema *s = rlog_reader_schema(r, &ev);
		if (s)
			sink ^= (uint8_t)(s->name[0] ^ rlog_event_field_count(s, &ev));
		const char *tn = rlog_reader_thread_name(r, ev.pid, ev.tid);
		sink ^= (uint8_t)(tn ? tn[0] : 0);
		struct rlog_loss l;
		if (rlog_event_loss(&ev, &l) == 0)
			sink ^= (uint8_t)(l.events ^ l.cause);
	}
	for (size_t i = 0; i < rlog_reader_damage_count(r); i++) {
		struct rlog_damage dm;
		rlog_reader_damage(r, i, &dm);
		sink ^= (uint8_t)dm.message[0];
	}
	rlog_reader_close(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	struct rlog__live t;
	rlog__live_init(&t);
	/* Piece sizes: 1 + the low bits of the first byte, times 7. */
	size_t step = n ? (size_t)(d[0] % 64 + 1) * 7 : 1;
	for (size_t off = 0; off < n;) {
		size_t k = n - off < step ? n - off : step;
		int rc = rlog__live_feed(&t, d + off, k);
		off += k;
		const uint8_t *img;
		size_t len;
		while (rlog__live_image(&t, &img, &len) > 0)
			read_image(img, len);
		if (rc < 0)
			break;
	}
	sink ^= (uint8_t)rlog__live_pending(&t);
	rlog__live_free(&t);
	return 0;
}
