/*
 * gate.c - the enable gate (include/ringlog.h, rlog__gate; docs/FORMAT.md,
 * "The inline path's words"): the page whose word the inline disabled
 * checks read first.
 *
 * The word must be in the process's own memory at a link-time address
 * (one load, as a tracepoint's state word), yet follow what other
 * processes write into the session region (pause, `update --mask`, the
 * daemon's stop) with nothing telling this process, which has no thread
 * of ringlog's to copy it.  So, for one session, the page IS the region's
 * first page: mapped over rlog__gate, read-only, the word at +1280 being
 * the region's enable_mask.  Otherwise the gate is a private page whose
 * word is 0 (no session) or ~0 (several sessions, a wait: the checks
 * after it decide).
 *
 * Every change replaces the page in one mremap(2), which the kernel does
 * under the address space's lock: a thread reading the word sees the old
 * page or the new one, never a hole or a page not yet filled.  A private
 * page comes from a spare one, made ahead (rlog__gate_spare: an attach
 * that cannot have one fails with -ENOMEM before it changes anything), so
 * that a process at its locked-memory limit (mlockall), where a new
 * mapping fails, still moves the gate off a session it left: a gate left
 * on a paused session's page would stop every write to the new one.
 * Where no page can be mapped at all (pages that are not 4 KiB, the
 * object not on a page of its own), the word is stored instead and one
 * session gets ~0: correct, and the checks after it decide, as before the
 * gate.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "producer.h"

struct rlog__gate rlog__gate;

_Static_assert(offsetof(struct rlog_shm_header, enable_mask) == RLOG__GATE_WORD * 8,
	       "the gate's word is the region header's enable_mask");
_Static_assert(sizeof(struct rlog__gate) == 4096, "the gate is one 4 KiB page");

/* 1 while the gate is the mapping of a region's first page. */
static int gate_mapped;

/* A private page ready to become the gate, or NULL (attach_lock held, or
 * the only thread of a fork child, or a late attach under its trylock). */
static void *spare;

static int gate_mappable(void)
{
	return sysconf(_SC_PAGESIZE) == 4096 && ((uintptr_t)&rlog__gate & 4095) == 0;
}

int rlog__gate_spare(void)
{
	if (spare != NULL || !gate_mappable())
		return 0;
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED || RLOG__TEST_ENV(RINGLOG_TEST_GATE_NOMEM) == 2) {
		if (p != MAP_FAILED)
			munmap(p, 4096);
		return -ENOMEM;
	}
	spare = p;
	return 0;
}

void rlog__gate_fork_child(void)
{
	/* The parent's other threads may have been inside rlog__gate_set
	 * at the fork: the spare already moved over the gate but not yet
	 * forgotten, the gate mapped but not yet marked.  Forget the spare
	 * (a page at most is left behind) and take the gate as possibly a
	 * region's page, never written in place. */
	spare = NULL;
	gate_mapped = 1;
}

/* After a failed mremap: kernels before 6.11 unmapped the destination
 * before they checked the rest (mremap_to), which would leave a hole where
 * every check faults.  An anonymous page there then; its word is 0. */
static void gate_hole_fill(void)
{
	unsigned char vec;
	if (mincore((void *)&rlog__gate, 4096, &vec) == 0 || errno != ENOMEM)
		return;
	mmap((void *)&rlog__gate, 4096, PROT_READ | PROT_WRITE,
	     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	gate_mapped = 0;
}

void rlog__gate_set(struct rlog_shm_header *hdr, uint64_t v)
{
	if (!gate_mappable()) {
		atomic_store(&rlog__gate.w[RLOG__GATE_WORD], hdr != NULL ? ~UINT64_C(0) : v);
		return;
	}
	/* RINGLOG_TEST_GATE_NOMEM=1: no new mapping, the spare alone (as at
	 * a locked-memory limit). */
	bool nomem = RLOG__TEST_ENV(RINGLOG_TEST_GATE_NOMEM) != 0;
	if (hdr != NULL) {
		/* mremap of a shared mapping with old size 0 maps the same
		 * pages again (the region is MAP_SHARED and never unmapped:
		 * attach.c).  Read-only: nothing of this process writes the
		 * word there. */
		if (!nomem && mremap(hdr, 0, 4096, MREMAP_MAYMOVE | MREMAP_FIXED,
				     (void *)&rlog__gate) != MAP_FAILED) {
			mprotect((void *)&rlog__gate, 4096, PROT_READ);
			gate_mapped = 1;
			return;
		}
		gate_hole_fill();
		v = ~UINT64_C(0);
	}
	if (!nomem)
		rlog__gate_spare();
	if (spare != NULL) {
		atomic_store_explicit(&((struct rlog__gate *)spare)->w[RLOG__GATE_WORD], v,
				      memory_order_relaxed);
		if (mremap(spare, 4096, 4096, MREMAP_MAYMOVE | MREMAP_FIXED, (void *)&rlog__gate) !=
		    MAP_FAILED) {
			spare = NULL;
			gate_mapped = 0;
			if (!nomem)
				rlog__gate_spare();
			return;
		}
		gate_hole_fill();
	}
	if (!gate_mapped) {
		atomic_store(&rlog__gate.w[RLOG__GATE_WORD], v);
		return;
	}
	/* Still a region's page, and not even the spare would move: the
	 * gate filters with that session's mask until the next change.
	 * Only a failure of mremap on a page of our own leads here. */
}
