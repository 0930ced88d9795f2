/*
 * multi_oldabi_write.c - test_multi_oldabi's old writer (with
 * test_multi_fast.c built with RLOG_TEST_OLDABI): a write compiled
 * against the header before the several-session inline path
 * (tests/abi/ringlog-ce824cb.h), whose inline path sends every write
 * with two or more sessions to the library.  Its own translation unit:
 * the two headers declare struct rlog__thread differently.
 */
#include "abi/ringlog-ce824cb.h"
#include "multi_write.h"

int old_write_seq(unsigned th, uint64_t seq, unsigned id);

/* As test_multi_fast's write_seq, through the old inline path. */
int old_write_seq(unsigned th, uint64_t seq, unsigned id)
{
	return multi_write_seq(id, th, seq);
}
