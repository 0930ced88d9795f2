/*
 * convert.h - the converters from a ringlog log file to the formats other
 * tools read (docs/CONVERT.md has the mappings and what each loses):
 *
 *   convert_chrome.c  the Trace Event Format (JSON) of chrome://tracing and
 *                     ui.perfetto.dev
 *   convert_perfetto.c Perfetto's own protobuf trace (TracePacket stream)
 *                     for ui.perfetto.dev and trace_processor, with pb.h
 *                     (the protobuf writer)
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

#include "map.h"
#include "names.h"
#include "region_abi.h"
#include "schema.h"
#include "vec.h"
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
	uint64_t files;            /* Perfetto: files of the series (1 without a split) */
	uint64_t clamped;          /* Perfetto: events whose time was raised to the previous
				    * one's (a sequence's timestamps never go back) */
	uint64_t ftrace_events;    /* Perfetto: system events written as ftrace events */
	uint64_t process_records;  /* Perfetto: rundown records written as a ProcessTree */
};

/*
 * Open spans kept per thread by the converters and `ringlog report`.  An
 * end closes the innermost open begin of its ID, found by a scan of the
 * thread's open spans: the cap keeps that scan (and Perfetto's re-begun
 * spans) bounded on a file of unmatched begins and ends.  A begin past it
 * ends the tracking of the thread's outermost open span, which counts as a
 * begin never ended (its end, if it comes, as an end with no begin): deep
 * recursion keeps its innermost levels paired (docs/CONVERT.md).
 */
#define RLOG__SPANS_OPEN 256

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

/* One host of several converted into one Chrome trace
 * (rlog__convert_chrome_host). */
struct rlog__chrome_host {
	const char *name;          /* the host's name, file-name characters only */
	unsigned index, count;     /* this host's place among count, 0 first */
	int64_t offset_ns;         /* its start on the merged timeline (ns after ... */
	uint64_t base_realtime_ns; /* ... this CLOCK_REALTIME, the earliest start) */
};

/* A host's processes and threads are numbered RLOG__CHROME_HOST_IDS *
 * (index + 1) + the pid or tid (Linux's are below 2^22 < 10^7): one
 * process per host's process, none shared between hosts. */
#define RLOG__CHROME_HOST_IDS UINT64_C(10000000)

/*
 * rlog__convert_chrome_host - rlog__convert_chrome() for the host'th of
 * host->count files written to fd in turn as one trace (docs/CONVERT.md,
 * "Several hosts"): the first writes the prologue, the last the end; the
 * times are moved by offset_ns onto the merged timeline, the process and
 * thread numbers as RLOG__CHROME_HOST_IDS says, the process names are
 * "HOST: name".  The viewers sort by ts, so the hosts need not interleave.
 * Returns what rlog__convert_chrome() returns, or -EINVAL (host NULL or
 * index out of count).
 */
int rlog__convert_chrome_host(struct rlog_reader *r, int fd, unsigned flags,
			      struct rlog__convert_stats *st,
			      const struct rlog__chrome_host *host);

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

/* rlog__convert_ctf() of one host of several (docs/CONVERT.md, "Several
 * hosts"): the same trace, its metadata's env also holding hostname and
 * clock_error (its clock's error as `ringlog dump` says it). */
int rlog__convert_ctf_host(struct rlog_reader *r, const char *dir, struct rlog__convert_stats *st,
			   const char *hostname, const char *clock_error);

/* One host of several converted into one Perfetto trace
 * (rlog__perfetto_opts.host, docs/CONVERT.md "Several hosts"). */
struct rlog__perfetto_host {
	const char *name;          /* the host's name, file-name characters only */
	const char *id;            /* its id (32 hex digits), or "" */
	const char *clock_error;   /* its clock's error as `ringlog dump` says it */
	unsigned index, count;     /* this host's place among count, 0 first */
	uint64_t base_realtime_ns; /* the earliest host's start: merged time 0 */
	/* The first sequence id and track uuid this host may use (1 and 0
	 * for the first), raised past those it used: the next host's. */
	uint32_t seq_base;
	uint64_t uuid_base;
};

/* A host's pids and tids in Perfetto's descriptors are
 * RLOG__CHROME_HOST_IDS * (index + 1) + the pid or tid, as in the Chrome
 * output; Perfetto's pid is an int32, which bounds the hosts. */
#define RLOG__PERFETTO_MAX_HOSTS 214u

/* What rlog__convert_perfetto() writes besides the events: the window and
 * the split into a series of files.  All zero: one file, every event. */
struct rlog__perfetto_opts {
	bool has_since, has_until;
	int64_t since_ns, until_ns; /* the window, ns since the start, both included */
	int64_t split_ns;           /* > 0: a new file once an event is this much
				     * after its file's first */
	uint64_t max_size;          /* > 0: a new file before one would pass this
				     * many bytes (at least RLOG__PERFETTO_MIN_SIZE) */
	/* Called for the second file of the series and each later one (index
	 * 1, 2, ...), after the previous one was written out in full: returns
	 * the new file's descriptor (the callee closes the previous one), or
	 * -errno. */
	int (*next_file)(void *arg, unsigned index, int *fd);
	void *arg;
	/* Not NULL: r is this host of several, written after the hosts
	 * before it into the same fd as one trace (no window, no split): its
	 * times on the merged CLOCK_REALTIME timeline, its tracks, sequences
	 * and pids its own, its processes "HOST: name", its system events
	 * instants on its system track, its totals and clock error in the
	 * metadata under "ringlog.host.INDEX.". */
	struct rlog__perfetto_host *host;
	/* For tests: every event through the reader's batches, none taken
	 * straight from its block, and the output written in line, not by a
	 * thread of its own (the output is the same). */
	bool no_runs;
	/* For tests: where not NULL, set to the packets written in place
	 * from a run (run_fast), and to those of them whose lengths took
	 * more than a byte. */
	uint64_t *in_place, *in_place_long;
};

#define RLOG__PERFETTO_MIN_SIZE (1u << 20)

/*
 * rlog__convert_perfetto - writes every event of r (in the window of opt)
 * to fd as a Perfetto trace: a stream of TracePacket messages, the file's
 * own trusted sequence and one per thread (docs/CONVERT.md has the mapping,
 * docs/perfetto/ringlog_perfetto.proto the messages and field numbers).
 * @r:   an open reader, no event read yet
 * @fd:  the first file of the output
 * @opt: the window and split, or NULL for none
 * @st:  receives the counts (zeroed first); may be NULL
 * Returns 0, or -EINVAL (r NULL, max_size below RLOG__PERFETTO_MIN_SIZE, a
 * split without next_file, a host with a window or split, or past
 * RLOG__PERFETTO_MAX_HOSTS), -ENOMEM, or the -errno of a failed write(2) or
 * of next_file.  On error the output is incomplete.
 */
int rlog__convert_perfetto(struct rlog_reader *r, int fd, const struct rlog__perfetto_opts *opt,
			   struct rlog__convert_stats *st);

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
	if (s->kind == RLOG_KIND_SPAN) {
		int rule = rlog__span_rule(ev->flagged, ev->flag, ev->length);
		if (rule <= 0)
			return rule;
	}
	return rlog__values_decode(s, ev->payload, ev->length, v);
}

/*
 * The index of key's entry in the array *vp (*n entries of elem bytes,
 * found through m): an existing one, or one added at the end, zeroed
 * (*added then true).  Returns the index, or -ENOMEM.  The converters'
 * threads, processes and tracks.
 */
static inline long rlog__convert_entry(void *vp, size_t *n, size_t *cap, size_t elem,
				       struct rlog__map *m, uint64_t key, bool *added)
{
	uint32_t i = rlog__map_get(m, key);
	*added = false;
	if (i != RLOG__MAP_NONE)
		return (long)i;
	if (rlog__vec_room(vp, *n, cap, elem, 16) < 0 || rlog__map_put(m, key, (uint32_t)*n) < 0)
		return -ENOMEM;
	memset(*(char **)vp + *n * elem, 0, elem);
	*added = true;
	return (long)(*n)++;
}

/* The entry a lookup found last (consecutive events are mostly one
 * thread's): rlog__convert_entry_last. */
struct rlog__convert_last {
	uint64_t key;
	size_t index;
	bool valid;
};

/* rlog__convert_entry, answered from *last when key is the key of the
 * previous lookup, which it then becomes. */
static inline long rlog__convert_entry_last(void *vp, size_t *n, size_t *cap, size_t elem,
					    struct rlog__map *m, uint64_t key, bool *added,
					    struct rlog__convert_last *last)
{
	if (last->valid && last->key == key && last->index < *n) {
		*added = false;
		return (long)last->index;
	}
	long i = rlog__convert_entry(vp, n, cap, elem, m, key, added);
	if (i >= 0)
		*last = (struct rlog__convert_last){ key, (size_t)i, true };
	return i;
}

/* "HOST: name" (name len bytes), malloc'ed, its length in *n: a process of
 * one host of several, named so that the viewers list a host's processes
 * together (docs/CONVERT.md, "Several hosts").  NULL when out of memory. */
static inline char *rlog__convert_host_name(const char *host, const char *name, size_t len,
					    size_t *n)
{
	size_t k = strlen(host);
	char *full = malloc(k + 2 + len);
	if (!full)
		return NULL;
	memcpy(full, host, k);
	memcpy(full + k, ": ", 2);
	memcpy(full + k + 2, name, len);
	*n = k + 2 + len;
	return full;
}

/* v in decimal, written backwards ending at end; returns its start. */
static inline char *rlog__convert_u64_text(char *end, uint64_t v)
{
	do {
		*--end = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	return end;
}

/* The name `ringlog dump` gives an event: the schema's or the ID's, with
 * "/flag" for a flagged record (except a span's that matches its schema:
 * its flag is begin or end). */
static inline size_t rlog__convert_event_name(char *buf, size_t n, const struct rlog_event *ev,
						 const struct rlog_schema *s, bool matched)
{
	/* By hand: snprintf() was a tenth of the time of a conversion. */
	const char *known = s ? s->name : rlog__id_name(ev->id);
	char tmp[8], *e = tmp + sizeof(tmp), *d;
	size_t k;
	if (known) {
		k = strnlen(known, n - 8);
		memcpy(buf, known, k);
	} else {
		d = rlog__convert_u64_text(e, ev->id);
		k = (size_t)(e - d);
		memcpy(buf, d, k);
	}
	if (ev->flagged && !(matched && s->kind == RLOG_KIND_SPAN)) {
		d = rlog__convert_u64_text(e, ev->flag);
		buf[k++] = '/';
		memcpy(buf + k, d, (size_t)(e - d));
		k += (size_t)(e - d);
	}
	return k;
}

#endif
