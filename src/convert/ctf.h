/*
 * ctf.h - the state of a CTF conversion, shared by its two files:
 *
 *   convert_ctf.c  the streams: one per thread, packets of events
 *   ctf_tsdl.c     the metadata: the TSDL text that describes them
 *
 * Private to src/convert/.
 */
#ifndef RLOG_CONVERT_CTF_H
#define RLOG_CONVERT_CTF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "convert.h"
#include "map.h"
#include "ringlog/reader.h"

/* What an event class holds. */
enum class_kind {
	CK_SCHEMA,       /* an event or counter with a schema: [flag,] its fields */
	CK_SPAN_BEGIN,   /* a span's begin: its fields */
	CK_SPAN_END,     /* a span's end: no fields */
	CK_MISMATCH,     /* a record not matching its schema: [flag,] length, payload */
	CK_RAW,          /* no schema: [flag,] length, payload bytes */
	CK_RAW_ARRAY,    /* RAW_U8 .. RAW_DOUBLE: [flag,] count, values */
	CK_RAW_STRING,   /* RAW_STRING: [flag,] value */
	CK_MARKER,       /* LOG_MARKER */
	CK_LOSS,         /* DATA_LOSS */
	CK_COUNTER,      /* COUNTER: the counter, its name, delta and value */
};

struct ev_class {
	uint8_t kind;                 /* enum class_kind */
	bool flagged;                 /* a flag field first (not for spans) */
	bool untimed;                 /* for records without a timestamp: ":untimed" in the name */
	uint16_t id;                  /* raw kinds: the event ID */
	bool has_string;              /* schema kinds: a STRING field (no plain copy) */
	const struct rlog_schema *s;  /* schema kinds: valid until the reader closes */
};

struct stream {
	uint32_t pid, tid;
	char *names;           /* process name, NUL, thread name, NUL */
	size_t names_len;
	size_t hdr;            /* PACKET_HDR + names_len */
	uint8_t *buf;          /* the packet being filled: hdr bytes, then events */
	size_t len, cap;       /* len 0: no packet open */
	uint64_t ts_begin, ts_end;
	uint64_t seq;          /* packet_seq_num of the next packet */
	uint64_t discarded;    /* events_discarded: DATA_LOSS events so far */
	bool created;          /* the file exists: later packets are appended */
};

struct ctf {
	struct rlog_reader *r;
	int dirfd;
	struct rlog__convert_stats *st;
	struct rlog__convert_stats st_local;

	struct stream *streams;
	size_t nstreams, streams_cap;
	struct rlog__map stream_map;   /* pid << 32 | tid -> stream */
	size_t last;                    /* the previous event's stream */
	size_t buffered;                /* bytes allocated for packet buffers */

	struct ev_class *classes;
	size_t nclasses, classes_cap;
	struct rlog__map class_map;    /* class key -> class */
	struct rlog__map sig_map;      /* schema signature hash -> class */

	bool started;
	int64_t bias;                   /* added to time_ns: >= 0 */
	struct rlog_value vals[RLOG_SCHEMA_MAX_FIELDS]; /* classify(): the fields, */
	struct rlog_marker marker;      /* a LOG_MARKER or */
	struct rlog_loss loss;          /* a DATA_LOSS, or */
	struct rlog_counter counter;    /* a COUNTER, decoded */
	const char *hostname;           /* one host of several: env.hostname, or NULL */
	const char *clock_error;        /* and env.clock_error */
};


/* FNV-1a over n bytes, from h. */
static inline uint64_t rlog__fnv(uint64_t h, const void *data, size_t n)
{
	const uint8_t *p = data;
	for (size_t i = 0; i < n; i++) {
		h ^= p[i];
		h *= UINT64_C(0x100000001b3);
	}
	return h;
}

/* Writes DIR/metadata: the TSDL text of the trace, its clock, the stream
 * and every event class c->classes holds.  Returns 0 or -errno. */
int rlog__ctf_metadata(struct ctf *c);

#endif
