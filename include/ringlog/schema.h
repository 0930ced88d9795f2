/*
 * ringlog/schema.h - self-describing events: the description of an event
 * type (its schema) and the decoded value of one field.
 *
 * Producers declare event types with the macros of <ringlog/event.h>,
 * which build a struct rlog_schema; the library writes it into the trace
 * as an EVENT_SCHEMA record (layout in <ringlog/format.h>, docs/FORMAT.md)
 * before the first event of the type.  Readers get the same struct back
 * from rlog_reader_schema() and decode payloads field by field.
 */
#ifndef RINGLOG_SCHEMA_H
#define RINGLOG_SCHEMA_H

#include <stddef.h>
#include <stdint.h>

#include "ringlog/format.h"

#ifdef __cplusplus
extern "C" {
#endif

struct rlog_field {
	uint8_t type;        /* RLOG_FIELD_* */
	uint16_t count;      /* RLOG_FIELD_BYTES: array length; else 0 */
	const char *name;    /* a C identifier, NUL-terminated */
};

struct rlog_schema {
	uint16_t id;                    /* event ID described: 16..16383, not 32..38 */
	uint8_t kind;                   /* RLOG_KIND_* */
	uint8_t category;               /* 0..63 */
	uint8_t field_count;            /* 0..RLOG_SCHEMA_MAX_FIELDS */
	const char *name;               /* e.g. "http.request", NUL-terminated */
	const struct rlog_field *fields;
};

/* One decoded field of an event payload. */
struct rlog_value {
	const struct rlog_field *field;
	union {
		uint64_t u;      /* U8..U64 */
		int64_t i;       /* I8..I64 */
		double f;        /* F64 */
	} v;
	const uint8_t *bytes;    /* BYTES and STRING: points into the payload */
	uint16_t len;            /* BYTES and STRING: byte count */
};

#ifdef __cplusplus
}
#endif

#endif
