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
 * Every change replaces the page in one mremap(2) or mmap(2) with
 * MAP_FIXED, which the kernel does under the address space's lock: a
 * thread reading the word sees the old page or the new one, never a hole
 * or a page not yet filled.  Where that cannot be done (pages that are
 * not 4 KiB, the object not on a page of its own, a call that fails),
 * the word is stored instead and one session gets ~0: correct, and the
 * check after it decides, as before the gate.
 */
#define _GNU_SOURCE
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

static int gate_mappable(void)
{
	return sysconf(_SC_PAGESIZE) == 4096 && ((uintptr_t)&rlog__gate & 4095) == 0;
}

/* A private page whose word is v, moved over the gate whole. */
static int gate_private(uint64_t v)
{
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return -1;
	atomic_store_explicit(&((struct rlog__gate *)p)->w[RLOG__GATE_WORD], v,
			      memory_order_relaxed);
	if (mremap(p, 4096, 4096, MREMAP_MAYMOVE | MREMAP_FIXED, (void *)&rlog__gate) ==
	    MAP_FAILED) {
		munmap(p, 4096);
		return -1;
	}
	return 0;
}

void rlog__gate_set(struct rlog_shm_header *hdr, uint64_t v)
{
	if (!gate_mappable()) {
		atomic_store(&rlog__gate.w[RLOG__GATE_WORD], hdr != NULL ? ~UINT64_C(0) : v);
		return;
	}
	/* mremap of a shared mapping with old size 0 maps the same pages
	 * again (the region is MAP_SHARED and never unmapped: attach.c). */
	if (hdr != NULL && mremap(hdr, 0, 4096, MREMAP_MAYMOVE | MREMAP_FIXED,
				  (void *)&rlog__gate) != MAP_FAILED) {
		/* Read-only: nothing of this process writes the word there. */
		mprotect((void *)&rlog__gate, 4096, PROT_READ);
		gate_mapped = 1;
		return;
	}
	if (hdr != NULL)
		v = ~UINT64_C(0);
	if (gate_private(v) == 0) {
		gate_mapped = 0;
		return;
	}
	/* No page to be had: the object itself, if it is still ours. */
	if (!gate_mapped) {
		atomic_store(&rlog__gate.w[RLOG__GATE_WORD], v);
		return;
	}
	/* The region's page stays, read-only: its word is a session's
	 * mask, which the checks after it then decide against.  A page of
	 * its own never failed to map on Linux; this is the last resort. */
}
