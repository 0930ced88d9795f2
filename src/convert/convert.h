/*
 * convert.h - the converters from a ringlog log file to the formats other
 * tools read (docs/CONVERT.md has the mappings and what each loses):
 *
 *   convert_chrome.c  the Trace Event Format (JSON) of chrome://tracing and
 *                     ui.perfetto.dev
 *   convert_ctf.c     CTF 1.8 (binary stream files) for babeltrace2 and
 *                     Trace Compass, with ctf_tsdl.c (the TSDL metadata)
 *
 * Both stream: they take events from rlog_reader_next() one at a time and
 * hold only per-thread state (open spans, one packet per CTF stream), never
 * the whole trace.  They never print; the CLI (src/cli/cmd_convert.c) does.
 *
 * Also here: the decoding of a schema'd event both converters share.  The
 * names of ringlog's own records and loss causes are src/common/names.h's,
 * the record decoders the reader's (<ringlog/reader.h>).
 */
#ifndef RLOG_READER_CONVERT_H
#define RLOG_READER_CONVERT_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "region_abi.h"
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
	uint64_t counter_records;  /* COUNTER records */
	uint64_t counter_unknown;  /* of those, records whose value was not known (Chrome:
				    * not written: a track needs the value) */
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
	int nf = rlog_event_field_count(s, ev);
	size_t off = 0;
	for (int i = 0; i < nf; i++)
		if (rlog_event_field(s, ev, (unsigned)i, &off, &v[i]) != 1)
			return -EBADMSG;
	return nf;
}

#endif
