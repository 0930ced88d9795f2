/*
 * convert.h - the converters from a ringlog log file to the formats other
 * tools read (docs/CONVERT.md has the mappings and what each loses):
 *
 *   convert_chrome.c  the Trace Event Format (JSON) of chrome://tracing and
 *                     ui.perfetto.dev
 *   convert_ctf.c     CTF 1.8 (TSDL metadata and binary stream files) for
 *                     babeltrace2 and Trace Compass
 *
 * Both stream: they take events from rlog_reader_next() one at a time and
 * hold only per-thread state (open spans, one packet per CTF stream), never
 * the whole trace.  They never print; the CLI (src/cli/cmd_convert.c) does.
 *
 * Also here: small helpers both converters share (names of ringlog's own
 * records and loss causes, a u64 -> index hash map).
 */
#ifndef RLOG_READER_CONVERT_H
#define RLOG_READER_CONVERT_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ringlog/abi.h"
#include "names.h"
#include "ringlog/reader.h"

/* What a conversion did; every counter starts at 0. */
struct rlog__convert_stats {
	uint64_t events_read;      /* events rlog_reader_next() returned */
	uint64_t events_written;   /* events in the output (Chrome: trace events,
				    * metadata included; CTF: event records) */
	uint64_t skipped;          /* records with no event of their own: EVENT_SCHEMA,
				    * THREAD_NAME, PROCESS_NAME (names are metadata);
				    * in Chrome also LOG_MARKER and span begins in "X"
				    * mode (the "X" is written at the end) */
	uint64_t schema_events;    /* events decoded with their schema */
	uint64_t raw_events;       /* events written as raw bytes (no schema, or a
				    * record that does not match it) */
	uint64_t mismatched;       /* of those, records that do not match their schema */
	uint64_t spans;            /* begin/end pairs matched (Chrome) */
	uint64_t unmatched_begins; /* spans still open at the end of the trace (Chrome) */
	uint64_t unmatched_ends;   /* span ends with no open begin (Chrome) */
	uint64_t loss_records;     /* DATA_LOSS records */
	uint64_t events_lost;      /* the sum of their event counts */
	uint64_t streams;          /* CTF stream files */
	uint64_t packets;          /* CTF packets */
	uint64_t event_classes;    /* CTF event classes in the metadata */
	uint64_t bytes_written;    /* output bytes, metadata included */
};

/* rlog__convert_chrome() flags. */
#define RLOG__CHROME_SPANS_BE 0x1u /* spans as "B"/"E" pairs instead of "X" */

/*
 * rlog__convert_chrome - writes every event of r, from the current position
 * to the end, to fd as one Trace Event Format JSON object.
 * @r:     an open reader, no event read yet (for the spans to pair)
 * @fd:    where the JSON goes (written with write(2), in large pieces)
 * @flags: RLOG__CHROME_* or'ed
 * @st:    receives the counts (zeroed first); may be NULL
 * Returns 0, or -EINVAL (r NULL, unknown flag), -ENOMEM, or the -errno of
 * a failed write(2) (-ENOSPC, -EIO, -EPIPE, ...).  On error the output is
 * incomplete.
 */
int rlog__convert_chrome(struct rlog_reader *r, int fd, unsigned flags,
			 struct rlog__convert_stats *st);

/*
 * rlog__convert_ctf - writes every event of r as a CTF 1.8 trace into the
 * directory dir: one stream file per thread ("stream_PID_TID", packets of up
 * to 64 KiB), then "metadata" (TSDL text), written last because the event
 * classes are those the events needed.
 * @r:   an open reader, no event read yet
 * @dir: an existing, writable directory; files of those names in it are
 *       replaced
 * @st:  receives the counts (zeroed first); may be NULL
 * Returns 0, or -EINVAL (r or dir NULL), -ENOMEM, or the -errno of a failed
 * open(2)/write(2)/close(2) (-ENOENT, -EACCES, -ENOSPC, -EMFILE, ...).  On
 * error the directory holds an incomplete trace.
 */
int rlog__convert_ctf(struct rlog_reader *r, const char *dir, struct rlog__convert_stats *st);

/* ------------------------------------------------------------------ */
/* Shared helpers                                                      */
/* ------------------------------------------------------------------ */

/* The name `ringlog dump` gives a ringlog-own ID ("LOG_MARKER", "RAW_U32",
 * ...), or NULL for IDs it prints as numbers. */
static inline const char *rlog__convert_id_name(unsigned id)
{
	return rlog__id_name(id);
}

/* The name of a DATA_LOSS cause ("no_buffer", ...), NULL if unknown. */
static inline const char *rlog__convert_cause_name(uint32_t cause)
{
	return rlog__loss_cause_name(cause);
}

/* Bytes of one element of a RAW_* array type (RAW_U8 .. RAW_DOUBLE). */
static inline unsigned rlog__convert_raw_width(unsigned id)
{
	static const unsigned char width[] = { 1, 1, 2, 2, 4, 4, 8, 8, 8 };
	return id >= RLOG_ID_RAW_U8 && id <= RLOG_ID_RAW_DOUBLE ? width[id - RLOG_ID_RAW_U8] : 0;
}

/* True for an event of ringlog's own record type id (never flagged). */
static inline bool rlog__convert_is(const struct rlog_event *ev, unsigned id)
{
	return !ev->flagged && ev->id == id;
}

/*
 * Decodes the fields of ev under its schema s into v[] (room for
 * RLOG_SCHEMA_MAX_FIELDS), by the rules of `ringlog dump`: a span's record
 * must be FLAGGED with flag RLOG_SPAN_BEGIN (the fields) or RLOG_SPAN_END
 * (no fields, an empty payload); any other record must hold exactly the
 * schema's fields (it may be flagged: the flag is extra information).
 * Returns the number of fields decoded (0 for a span's end), or -EBADMSG
 * if the record does not match its schema (convert it raw): the answer of
 * rlog_event_field_count(), with the values decoded in the same pass.
 */
static inline int rlog__convert_fields(const struct rlog_schema *s, const struct rlog_event *ev,
				       struct rlog_value *v)
{
	if (s->kind == RLOG_KIND_SPAN) {
		if (!ev->flagged || (ev->flag != RLOG_SPAN_BEGIN && ev->flag != RLOG_SPAN_END))
			return -EBADMSG;
		if (ev->flag == RLOG_SPAN_END)
			return ev->length == 0 ? 0 : -EBADMSG;
	}
	size_t off = 0;
	for (unsigned i = 0; i < s->field_count; i++)
		if (rlog_event_field(s, ev, i, &off, &v[i]) != 1)
			return -EBADMSG;
	return off == ev->length ? (int)s->field_count : -EBADMSG;
}

/*
 * A hash map from u64 keys to u32 values (open addressing, linear probing,
 * grown at half full).  Used for (pid, tid) -> thread and schema -> class.
 */
struct rlog__imap {
	uint64_t *keys;
	uint32_t *vals;  /* UINT32_MAX: empty slot */
	size_t cap;      /* a power of two, or 0 */
	size_t n;
};

static inline size_t rlog__imap_slot(uint64_t key, size_t cap)
{
	key ^= key >> 33;
	key *= UINT64_C(0xff51afd7ed558ccd);
	key ^= key >> 33;
	return (size_t)key & (cap - 1);
}

/* The value of key, or UINT32_MAX if absent. */
static inline uint32_t rlog__imap_get(const struct rlog__imap *m, uint64_t key)
{
	if (m->cap == 0)
		return UINT32_MAX;
	for (size_t i = rlog__imap_slot(key, m->cap);; i = (i + 1) & (m->cap - 1)) {
		if (m->vals[i] == UINT32_MAX)
			return UINT32_MAX;
		if (m->keys[i] == key)
			return m->vals[i];
	}
}

/* Sets key (absent) to val (not UINT32_MAX).  Returns 0 or -ENOMEM. */
static inline int rlog__imap_put(struct rlog__imap *m, uint64_t key, uint32_t val)
{
	if ((m->n + 1) * 2 > m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 64;
		uint64_t *keys = malloc(cap * sizeof(*keys));
		uint32_t *vals = malloc(cap * sizeof(*vals));
		if (!keys || !vals) {
			free(keys);
			free(vals);
			return -ENOMEM;
		}
		memset(vals, 0xff, cap * sizeof(*vals));
		for (size_t i = 0; i < m->cap; i++) {
			if (m->vals[i] == UINT32_MAX)
				continue;
			size_t j = rlog__imap_slot(m->keys[i], cap);
			while (vals[j] != UINT32_MAX)
				j = (j + 1) & (cap - 1);
			keys[j] = m->keys[i];
			vals[j] = m->vals[i];
		}
		free(m->keys);
		free(m->vals);
		m->keys = keys;
		m->vals = vals;
		m->cap = cap;
	}
	size_t i = rlog__imap_slot(key, m->cap);
	while (m->vals[i] != UINT32_MAX)
		i = (i + 1) & (m->cap - 1);
	m->keys[i] = key;
	m->vals[i] = val;
	m->n++;
	return 0;
}

static inline void rlog__imap_free(struct rlog__imap *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}

#endif
