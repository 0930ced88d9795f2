/*
 * rundown_rec.c - the rundown's records (rundown_rec.h; docs/FORMAT.md,
 * "Rundown").  Their payloads follow the rule of every system event: pid
 * and tid first, then the fields; the mappings are image_load records,
 * the same as the kernel's PERF_RECORD_MMAP2 gives later ones, so a
 * reader finds an address's image the same way whenever it was mapped.
 */
#include "system/rundown_rec.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "buf.h"
#include "clock.h"
#include "format/logfile.h"
#include "record.h"
#include "schema.h"
#include "system/events.h"
#include "system/pcounters.h"

/* A block is emitted when it reaches this many bytes. */
#define BLOCK_BYTES (256u * 1024u)
/* A block is flushed once it reaches BLOCK_BYTES, so it is at most
 * BLOCK_BYTES - 1 plus what one step adds: a TIME_SYNC (16) and one
 * record (a header and at most 65535 bytes of payload, padded), which
 * with the block's header fits any log file's stage (a larger block
 * would be refused and counted lost: format/logfile.h). */
_Static_assert(BLOCK_BYTES + 16u + 8u + (RLOG_HDR_LENGTH_MASK + 1u) + RLOG__BLOCK_HDR_SIZE <=
		       RLOG__LOGFILE_STAGE_MIN,
	       "a system block must fit the smallest log-file stage");
/* As the engine's strings (docs/FORMAT.md, "System events"). */
#define STRING_CUT 255u

struct writer {
	struct rlog__buf b;
	uint32_t records, events;
	uint64_t now;
	uint64_t total;          /* events emitted */
	uint64_t dropped;        /* events of blocks no memory held */
	rlog__sys_emit_fn *emit;
	void *arg;
	bool counters;  /* a process_counters record after each process_rundown */
	uint8_t pl[16 + 2 * STRING_CUT + 2 + RLOG_SYS_RUNDOWN_CMDLINE_CUT + 2];
};

static void flush(struct writer *w)
{
	if (w->records && !w->b.oom) {
		w->emit(w->arg, RLOG_SYS_RUNDOWN_TID, w->now, w->b.p, (uint32_t)w->b.len, w->records,
			w->events);
		w->total += w->events;
	} else {
		w->dropped += w->events;
	}
	w->b.len = 0;
	w->b.oom = false;
	w->records = w->events = 0;
}

static void put(struct writer *w, unsigned id, const void *pl, uint32_t len, bool event)
{
	static const uint8_t zeros[4];
	uint32_t hw[2] = { rlog__hdr_make(id, len, true), (uint32_t)w->now };
	rlog__buf_put(&w->b, hw, sizeof hw);
	rlog__buf_put(&w->b, pl, len);
	rlog__buf_put(&w->b, zeros, rlog__record_size(id, len, true) - 8 - len);
	w->records++;
	if (event)
		w->events++;
	if (w->b.len >= BLOCK_BYTES)
		flush(w);
}

static void schema(struct writer *w, unsigned id, const char *name, const struct rlog_field *f,
		   unsigned n)
{
	struct rlog_schema sc = { .id = (uint16_t)id, .kind = RLOG_KIND_EVENT, .category = 0,
				  .field_count = (uint8_t)n, .name = name, .fields = f };
	uint8_t pl[1024];
	int len = rlog__schema_encode(&sc, pl, sizeof pl);
	if (len >= 0)
		put(w, RLOG_ID_EVENT_SCHEMA, pl, (uint32_t)len, false);
}

static void schemas(struct writer *w)
{
	static const struct rlog_field proc[] = {
		{ RLOG_FIELD_U32, 0, "pid" }, { RLOG_FIELD_U32, 0, "tid" },
		{ RLOG_FIELD_U32, 0, "ppid" }, { RLOG_FIELD_STRING, 0, "comm" },
		{ RLOG_FIELD_STRING, 0, "cmdline" },
	};
	static const struct rlog_field thr[] = {
		{ RLOG_FIELD_U32, 0, "pid" }, { RLOG_FIELD_U32, 0, "tid" },
		{ RLOG_FIELD_STRING, 0, "comm" },
	};
	schema(w, RLOG_SYS_ID_PROCESS_RUNDOWN, "process_rundown", proc, 5);
	schema(w, RLOG_SYS_ID_THREAD_RUNDOWN, "thread_rundown", thr, 3);
	/* image_load's and process_counters', as the engine writes them
	 * (events.c's table). */
	for (int i = 0; i < 2; i++) {
		if (i == 1 && !w->counters)
			break;
		const struct rlog__sys_event *e =
			rlog__sys_event(i ? RLOG_SYS_ID_PROCESS_COUNTERS : RLOG_SYS_ID_IMAGE_LOAD);
		struct rlog_field f[RLOG__SYS_FIELDS_MAX + 2] = { { RLOG_FIELD_U32, 0, "pid" },
								  { RLOG_FIELD_U32, 0, "tid" } };
		for (unsigned k = 0; e && k < e->nfields; k++)
			f[k + 2] = (struct rlog_field){ e->f[k].type, 0, e->f[k].name };
		if (e)
			schema(w, e->id, e->name, f, e->nfields + 2);
	}
}

static void put_u32(uint8_t *pl, uint32_t *n, uint32_t v)
{
	memcpy(pl + *n, &v, 4);
	*n += 4;
}

static void put_u64(uint8_t *pl, uint32_t *n, uint64_t v)
{
	memcpy(pl + *n, &v, 8);
	*n += 8;
}

/* A STRING field (u16 length, bytes) of at most cut bytes. */
static void put_str(uint8_t *pl, uint32_t *n, const char *p, size_t len, size_t cut)
{
	uint16_t l = (uint16_t)(len < cut ? len : cut);
	memcpy(pl + *n, &l, 2);
	memcpy(pl + *n + 2, p, l);
	*n += 2 + (uint32_t)l;
}

static int on_process(const struct rlog__rundown_process *p, void *arg)
{
	struct writer *w = arg;
	uint32_t n = 0;
	put_u32(w->pl, &n, p->pid);
	put_u32(w->pl, &n, p->pid);
	put_u32(w->pl, &n, p->ppid);
	put_str(w->pl, &n, p->comm, p->comm_len, STRING_CUT);
	/* The arguments as `ps` shows them: separated by a space (the
	 * kernel ends each with a NUL), the last one's NUL dropped. */
	size_t len = p->cmdline_len;
	if (len > 0 && p->cmdline[len - 1] == '\0')
		len--;
	if (len > RLOG_SYS_RUNDOWN_CMDLINE_CUT)
		len = RLOG_SYS_RUNDOWN_CMDLINE_CUT;
	uint16_t l = (uint16_t)len;
	memcpy(w->pl + n, &l, 2);
	for (size_t i = 0; i < len; i++)
		w->pl[n + 2 + i] = p->cmdline[i] == '\0' ? ' ' : (uint8_t)p->cmdline[i];
	n += 2 + (uint32_t)len;
	put(w, RLOG_SYS_ID_PROCESS_RUNDOWN, w->pl, n, true);
	struct rlog__pcounters c;
	if (w->counters && rlog__pcounters_read((pid_t)p->pid, &c) == 0)
		put(w, RLOG_SYS_ID_PROCESS_COUNTERS, w->pl, rlog__pcounters_payload(&c, w->pl), true);
	return 0;
}

static int on_thread(const struct rlog__rundown_thread *t, void *arg)
{
	struct writer *w = arg;
	uint32_t n = 0;
	put_u32(w->pl, &n, t->pid);
	put_u32(w->pl, &n, t->tid);
	put_str(w->pl, &n, t->comm, t->comm_len, STRING_CUT);
	put(w, RLOG_SYS_ID_THREAD_RUNDOWN, w->pl, n, true);
	return 0;
}

static int on_mapping(const struct rlog__rundown_mapping *m, void *arg)
{
	struct writer *w = arg;
	uint32_t n = 0;
	put_u32(w->pl, &n, m->pid);
	put_u32(w->pl, &n, m->pid);
	put_u64(w->pl, &n, m->start);
	put_u64(w->pl, &n, m->end - m->start);
	put_u64(w->pl, &n, m->offset);
	put_u32(w->pl, &n, m->prot);
	put_u32(w->pl, &n, m->shared ? MAP_SHARED : MAP_PRIVATE);
	put_str(w->pl, &n, m->path, m->path_len, STRING_CUT);
	put(w, RLOG_SYS_ID_IMAGE_LOAD, w->pl, n, true);
	return 0;
}

int rlog__sys_rundown(const uint32_t *pids, size_t npids, uint32_t tick_source,
		      rlog__sys_emit_fn *emit, void *arg, uint64_t *records, uint64_t *lost,
		      struct rlog__rundown_stats *st)
{
	return rlog__sys_rundown_flags(pids, npids, 0, tick_source, emit, arg, records, lost, st);
}

int rlog__sys_rundown_flags(const uint32_t *pids, size_t npids, uint64_t flags,
			    uint32_t tick_source, rlog__sys_emit_fn *emit, void *arg,
			    uint64_t *records, uint64_t *lost, struct rlog__rundown_stats *st)
{
	static struct writer zero;
	struct writer *w = malloc(sizeof *w);
	if (w == NULL)
		return -ENOMEM;
	*w = zero;
	w->emit = emit;
	w->arg = arg;
	w->now = rlog__ticks(tick_source);
	w->counters = (flags & RLOG_SYS_PROCESS_COUNTERS) != 0;
	schemas(w);
	struct rlog__rundown_ops ops = { on_process, on_thread, on_mapping, w };
	int rc = rlog__rundown_walk(NULL, pids, npids, &ops, st);
	bool oom = w->b.oom;
	flush(w);
	if (records)
		*records = w->total;
	if (lost)
		*lost = w->dropped;
	rlog__buf_free(&w->b);
	free(w);
	return rc < 0 ? rc : oom ? -ENOMEM : 0;
}
