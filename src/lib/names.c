/*
 * names.c - thread and process names in the trace: the THREAD_NAME and
 * PROCESS_NAME records' contents, and when they are due.
 *
 * The records themselves are written by the slow path (write.c), before
 * the event that is being written, in the writing thread's buffer:
 *
 *   THREAD_NAME    due at every binding of a thread to a session
 *                  (thread.c sets RLOG__META_THREAD_NAME), and after
 *                  rlog_thread_name().  The name is the one the thread gave
 *                  itself, or else the kernel's (prctl(PR_GET_NAME)) at the
 *                  time of writing.  Per thread: only that thread touches it.
 *   PROCESS_NAME   due when the process's name, as of its current version,
 *                  is not yet in the session being written.  Each session
 *                  holds (version << 1 | 1) of the name claimed last for it
 *                  (struct rlog__session.pname_done, 0: none); a thread
 *                  claims writing it by CAS, so one thread of the process
 *                  writes it per session (and per rename); a thread that
 *                  cannot write it (no free buffer) hands the claim back.
 *                  A fork child forgets its parent's (attach.c), so it
 *                  records its own.
 *
 * The process name can change (rlog_process_name) while another thread
 * copies it in the slow path, maybe in a signal handler: a seqlock, whose
 * readers never wait (a reader that keeps finding it in change gives up
 * and leaves the record to the renamer, which writes it after the change).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/prctl.h>

#include "atomics.h"
#include "producer.h"

static pthread_mutex_t pname_lock = PTHREAD_MUTEX_INITIALIZER; /* serialises renamers */
static _Atomic uint32_t pname_seq;         /* seqlock: odd while the name changes */
static _Atomic uint32_t pname_len;         /* 0: the default name */
static _Atomic unsigned char pname[RLOG_PROCESS_NAME_MAX];
static _Atomic uint32_t pname_version;     /* bumped after every change */

size_t rlog__utf8_cut(const char *s, size_t max)
{
	size_t n = 0;
	while (n <= max && s[n] != '\0')
		n++;
	if (n <= max)
		return n;
	/* s[max] is the first byte left out: if it continues a character,
	 * that character is left out whole. */
	n = max;
	while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
		n--;
	return n;
}

bool rlog__process_name_claim(struct rlog__session *s, uint64_t tok[2])
{
	/* Acquire pairs with the release increment in rlog_process_name: a
	 * claim of the new version reads the new name. */
	uint64_t want = (uint64_t)load_acquire(&pname_version) << 1 | 1;
	uint64_t old = load_relaxed(&s->pname_done);
	if (old == want || !atomic_compare_exchange_strong(&s->pname_done, &old, want))
		return false;
	tok[0] = old;
	tok[1] = want;
	return true;
}

void rlog__process_name_done(struct rlog__session *s, const uint64_t tok[2], bool ok)
{
	if (ok)
		return;
	uint64_t want = tok[1];
	atomic_compare_exchange_strong(&s->pname_done, &want, tok[0]);
}

static size_t default_process_name(char *out)
{
	/* program_invocation_short_name is a glibc (and musl) extension: the
	 * base name of argv[0], without reading /proc. */
	const char *n = program_invocation_short_name;
	char comm[17] = "";
	if (n == NULL || n[0] == '\0') {
		prctl(PR_GET_NAME, comm, 0, 0, 0);
		n = comm[0] ? comm : "?";
	}
	size_t len = rlog__utf8_cut(n, RLOG_PROCESS_NAME_MAX);
	memcpy(out, n, len);
	return len;
}

size_t rlog__process_name_get(char *out)
{
	for (int tries = 0; tries < 3; tries++) {
		/* Pairs with the renamer's final store_release(pname_seq). */
		uint32_t seq = load_acquire(&pname_seq);
		if (seq & 1)
			continue;
		uint32_t n = load_relaxed(&pname_len);
		if (n > RLOG_PROCESS_NAME_MAX)
			continue;
		for (uint32_t i = 0; i < n; i++)
			out[i] = (char)load_relaxed(&pname[i]);
		/* The copy happens before the re-check (seqlock reader). */
		atomic_thread_fence(memory_order_acquire);
		if (load_relaxed(&pname_seq) != seq)
			continue;
		return n ? n : default_process_name(out);
	}
	return 0;
}

size_t rlog__thread_name_get(struct rlog__tpriv *pv, char *out)
{
	if (pv->thread_name_set) {
		memcpy(out, pv->thread_name, pv->thread_name_len);
		return pv->thread_name_len;
	}
	char comm[17] = "";
	prctl(PR_GET_NAME, comm, 0, 0, 0);
	size_t n = strlen(comm);
	if (n == 0) {
		memcpy(comm, "?", 2);
		n = 1;
	}
	memcpy(out, comm, n);
	return n;
}

void rlog__names_fork_child(void)
{
	/* The child's only thread: a renamer that was in another thread of
	 * the parent is gone, maybe mid-change. */
	pthread_mutex_init(&pname_lock, NULL);
	uint32_t seq = load_relaxed(&pname_seq);
	if (seq & 1)
		store_relaxed(&pname_seq, seq + 1);
}

/* Writes what is pending for the calling thread now, if it is writing into
 * a session; otherwise it stays pending (see the top of this file). */
static void record_now(void)
{
	struct rlog__thread *t = &rlog__thread;
	struct rlog__tpriv *pv = &rlog__tpriv;
	if (t->busy == NULL || !rlog__slow_enter(t, pv))
		return;
	(void)rlog__slow(t, pv, 0, 0, NULL, 0, 0, RLOG__CAT_ANY, NULL, NULL);
	rlog__slow_leave(t);
}

int rlog_thread_name(const char *name)
{
	if (name == NULL || name[0] == '\0')
		return -EINVAL;
	struct rlog__thread *t = &rlog__thread;
	struct rlog__tpriv *pv = &rlog__tpriv;
	/* The guard keeps a signal handler's write (which may bind the thread
	 * and read the name) out while the name changes. */
	if (!rlog__slow_enter(t, pv))
		return -EBUSY; /* a signal handler inside a write of this thread */
	size_t n = rlog__utf8_cut(name, RLOG_THREAD_NAME_MAX);
	memcpy(pv->thread_name, name, n);
	pv->thread_name_len = (uint8_t)n;
	pv->thread_name_set = true;
	bool bound = false;
	for (unsigned k = 0; k < RLOG_MAX_SESSIONS; k++) {
		if (pv->bind[k].slot != NULL) {
			pv->bind[k].meta_pending |= RLOG__META_THREAD_NAME;
			bound = true;
		}
	}
	if (bound)
		(void)rlog__slow(t, pv, 0, 0, NULL, 0, 0, RLOG__CAT_ANY, NULL, NULL);
	rlog__slow_leave(t);
	return 0;
}

int rlog_process_name(const char *name)
{
	if (name == NULL || name[0] == '\0')
		return -EINVAL;
	size_t n = rlog__utf8_cut(name, RLOG_PROCESS_NAME_MAX);
	pthread_mutex_lock(&pname_lock);
	uint32_t seq = load_relaxed(&pname_seq);
	store_relaxed(&pname_seq, seq + 1);
	/* The odd sequence is visible before any byte changes (seqlock
	 * writer; pairs with the reader's fence and re-check). */
	atomic_thread_fence(memory_order_release);
	for (size_t i = 0; i < n; i++)
		store_relaxed(&pname[i], (unsigned char)name[i]);
	store_relaxed(&pname_len, (uint32_t)n);
	store_release(&pname_seq, seq + 2); /* pairs with the reader's load_acquire */
	/* Release pairs with the claim's load_acquire(pname_version). */
	atomic_fetch_add_explicit(&pname_version, 1, memory_order_release);
	pthread_mutex_unlock(&pname_lock);
	record_now();
	return 0;
}
