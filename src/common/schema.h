/*
 * schema.h - encoding and decoding EVENT_SCHEMA records and schema'd
 * payloads (layout in include/ringlog/format.h).  Shared by the producer
 * library, the reader and the converters.
 */
#ifndef RLOG_COMMON_SCHEMA_H
#define RLOG_COMMON_SCHEMA_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ringlog/format.h"
#include "ringlog/schema.h"

/* Size of a field's fixed part in a payload (STRING: its u16 length);
 * 0 for an unknown type. */
unsigned rlog__field_fixed_size(uint8_t type, uint16_t count);

/* Checks a schema (IDs, kind, category, names, field types and counts).
 * Returns 0 or -EINVAL. */
int rlog__schema_check(const struct rlog_schema *s);

/* Encodes s as an EVENT_SCHEMA payload into out.  Returns the payload
 * size, -EINVAL (rlog__schema_check failed) or -EMSGSIZE (cap too small). */
int rlog__schema_encode(const struct rlog_schema *s, uint8_t *out, size_t cap);

/* A decoded schema that owns its names. */
struct rlog__schema_buf {
	struct rlog_schema s;
	struct rlog_field fields[RLOG_SCHEMA_MAX_FIELDS];
	char names[(RLOG_SCHEMA_MAX_FIELDS + 1) * 256];
};

/* Decodes an EVENT_SCHEMA payload of n bytes.  Returns 0 or -EBADMSG
 * (malformed, truncated, trailing bytes, or fails rlog__schema_check). */
int rlog__schema_decode(const uint8_t *p, size_t n, struct rlog__schema_buf *out);

/*
 * Decodes field number idx of a payload, starting at *off (0 for the first
 * field; advanced past the field).  Returns 1, or -EBADMSG if the payload
 * is too short for the field.  Call for idx = 0 .. field_count-1 in order.
 */
int rlog__value_decode(const struct rlog_schema *s, unsigned idx, const uint8_t *payload,
		       size_t len, size_t *off, struct rlog_value *v);

/* True if the payload holds exactly the schema's fields. */
/*
 * The span rule of rlog_event_field_count (<ringlog/reader.h>), for an
 * event of a span's schema: -EBADMSG unless it is a FLAGGED record with
 * flag RLOG_SPAN_BEGIN or RLOG_SPAN_END; 0 for an END without payload
 * (no fields); 1 for a BEGIN, whose payload holds the schema's fields.
 */
static inline int rlog__span_rule(bool flagged, uint16_t flag, uint16_t length)
{
	if (!flagged)
		return -EBADMSG;
	if (flag == RLOG_SPAN_END)
		return length == 0 ? 0 : -EBADMSG;
	return flag == RLOG_SPAN_BEGIN ? 1 : -EBADMSG;
}

/* The payload bytes of a number field of type t (RLOG_FIELD_U8 to F64). */
static inline unsigned rlog__num_size(unsigned t)
{
	static const uint8_t size[RLOG_FIELD_F64 + 1] = { 0, 1, 2, 4, 8, 1, 2, 4, 8, 8 };
	return size[t];
}

/* The number of type t (RLOG_FIELD_U8 to F64) at p, rlog__num_size(t)
 * bytes, little-endian: a signed one sign-extended, an F64 its bits.  The
 * loads are memcpy's: the formats are little-endian, and so is every
 * target we build for (record.h). */
static inline uint64_t rlog__num_load(const uint8_t *p, unsigned t)
{
	uint16_t h;
	uint32_t w;
	uint64_t d;
	switch (t) {
	case RLOG_FIELD_U8: return p[0];
	case RLOG_FIELD_I8: return (uint64_t)(int64_t)(int8_t)p[0];
	case RLOG_FIELD_U16: memcpy(&h, p, 2); return h;
	case RLOG_FIELD_I16: memcpy(&h, p, 2); return (uint64_t)(int64_t)(int16_t)h;
	case RLOG_FIELD_U32: memcpy(&w, p, 4); return w;
	case RLOG_FIELD_I32: memcpy(&w, p, 4); return (uint64_t)(int64_t)(int32_t)w;
	default: memcpy(&d, p, 8); return d;
	}
}

/*
 * Decodes every field of a payload of len bytes into v[0 .. field_count),
 * in one pass: what rlog__value_decode gives field by field.  Returns
 * field_count, or -EBADMSG if the payload does not hold exactly those
 * fields (too short for one, or bytes left over): rlog__payload_matches's
 * answer (v is then partly filled).
 */
int rlog__values_decode(const struct rlog_schema *s, const uint8_t *payload, size_t len,
			struct rlog_value *v);

bool rlog__payload_matches(const struct rlog_schema *s, const uint8_t *payload, size_t len);

#endif
