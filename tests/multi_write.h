/*
 * multi_write.h - the numbered events of the several-session tests
 * (test_multi_fast, test_multi_oldabi, test_multi_pause): payload
 * {writer, seq}, written as a timed, an untimed or a flagged record in
 * turn (seq % 3), and read back with that layout checked.  Include it
 * after the ringlog header the file is built against
 * (multi_oldabi_write.c: the frozen one of tests/abi/).
 */
#ifndef RLOG_TEST_MULTI_WRITE_H
#define RLOG_TEST_MULTI_WRITE_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

static inline int multi_write_seq(unsigned id, uint64_t writer, uint64_t seq)
{
	uint64_t v[2] = { writer, seq };
	switch (seq % 3) {
	case 0:
		return rlog_write(id, v, sizeof v);
	case 1:
		return rlog_write_untimed(id, v, sizeof v);
	default:
		return rlog_write_flagged(id, (uint16_t)(seq & 0xfff), v, sizeof v);
	}
}

#ifdef RINGLOG_READER_H
/* An application event of id: 1 with v = its {writer, seq}, -1 if its
 * payload is not 16 bytes; 0 for any other record. */
static inline int multi_event(const struct rlog_event *ev, unsigned id, uint64_t v[2])
{
	if (ev->from_daemon || ev->id != id)
		return 0;
	if (ev->length != 2 * sizeof v[0])
		return -1;
	memcpy(v, ev->payload, 2 * sizeof v[0]);
	return 1;
}

/* Has ev the layout multi_write_seq gave seq? */
static inline bool multi_layout_ok(const struct rlog_event *ev, uint64_t seq)
{
	bool flagged = seq % 3 == 2, timed = seq % 3 != 1;
	return ev->flagged == flagged && ev->has_time == timed &&
	       (!flagged || ev->flag == (uint16_t)(seq & 0xfff));
}
#endif

#endif
