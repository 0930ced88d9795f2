/*
 * multi_oldabi_write.c - test_multi_oldabi's old writer (with
 * test_multi_fast.c built with RLOG_TEST_OLDABI): a write compiled
 * against the header before the several-session inline path
 * (tests/abi/ringlog-ce824cb.h), whose inline path sends every write
 * with two or more sessions to the library.  Its own translation unit:
 * the two headers declare struct rlog__thread differently.
 */
#include "abi/ringlog-ce824cb.h"

int old_write_seq(unsigned th, uint64_t seq, unsigned id);

/* As test_multi_fast's write_seq: timed, untimed, flagged in turn. */
int old_write_seq(unsigned th, uint64_t seq, unsigned id)
{
	uint64_t v[2] = { th, seq };
	switch (seq % 3) {
	case 0:
		return rlog_write(id, v, sizeof v);
	case 1:
		return rlog_write_untimed(id, v, sizeof v);
	default:
		return rlog_write_flagged(id, (uint16_t)(seq & 0xfff), v, sizeof v);
	}
}
