/*
 * records.c - the decoders of ringlog's own records (LOG_MARKER,
 * DATA_LOSS, TIME_SYNC, the RAW_* arrays) and the record kinds, for the
 * reader and its users: `ringlog dump`, `ringlog stats` and the converters
 * know no byte layout of their own.  Layouts: <ringlog/format.h>,
 * docs/FORMAT.md.
 */
#include <errno.h>
#include <string.h>

#include "internal.h"

int rlog_record_kind(uint16_t id, bool flagged)
{
	return rlog__record_kind(id, flagged);
}

int rlog__marker_decode(const uint8_t *p, size_t len, struct rlog_marker *out)
{
	if (len < sizeof(struct rlog_log_marker) || rlog__get64(p) == 0)
		return -EBADMSG;
	out->tick_freq_hz = rlog__get64(p + offsetof(struct rlog_log_marker, tick_freq_hz));
	out->sync_ticks = rlog__get64(p + offsetof(struct rlog_log_marker, sync_ticks));
	out->sync_realtime_ns = rlog__get64(p + offsetof(struct rlog_log_marker, sync_realtime_ns));
	out->sync_monotonic_ns =
		rlog__get64(p + offsetof(struct rlog_log_marker, sync_monotonic_ns));
	out->tick_source = rlog__get32(p + offsetof(struct rlog_log_marker, tick_source));
	out->buffer_size = rlog__get32(p + offsetof(struct rlog_log_marker, buffer_size));
	out->buffer_count = rlog__get32(p + offsetof(struct rlog_log_marker, buffer_count));
	memcpy(out->session_name, p + offsetof(struct rlog_log_marker, session_name), 64);
	out->session_name[64] = '\0';
	return 0;
}

static bool is_own(const struct rlog_event *ev, int kind)
{
	return rlog__record_kind(ev->id, ev->flagged) == kind;
}

int rlog_event_marker(const struct rlog_event *ev, struct rlog_marker *out)
{
	if (!ev || !out || !is_own(ev, RLOG_RECORD_MARKER))
		return -EINVAL;
	return rlog__marker_decode(ev->payload, ev->length, out);
}

int rlog__loss_decode(const uint8_t *p, size_t len, struct rlog_loss *out)
{
	if (len < sizeof(struct rlog_data_loss))
		return -EBADMSG;
	out->events = rlog__get64(p + offsetof(struct rlog_data_loss, events));
	out->bytes = rlog__get64(p + offsetof(struct rlog_data_loss, bytes));
	out->cause = rlog__get32(p + offsetof(struct rlog_data_loss, cause));
	out->fields = 0;
	out->blocks = 0;
	out->first_time = 0;
	out->last_time = 0;
	if (len >= sizeof(struct rlog_data_loss_blocks)) {
		out->fields |= RLOG_LOSS_HAS_BLOCKS;
		out->blocks = rlog__get64(p + offsetof(struct rlog_data_loss_blocks, blocks));
	}
	if (len >= sizeof(struct rlog_data_loss_range)) {
		out->fields |= RLOG_LOSS_HAS_RANGE;
		out->first_time = rlog__get64(p + offsetof(struct rlog_data_loss_range, first_time));
		out->last_time = rlog__get64(p + offsetof(struct rlog_data_loss_range, last_time));
	}
	return 0;
}

int rlog_event_loss(const struct rlog_event *ev, struct rlog_loss *out)
{
	if (!ev || !out || !is_own(ev, RLOG_RECORD_LOSS))
		return -EINVAL;
	return rlog__loss_decode(ev->payload, ev->length, out);
}

int rlog_event_time_sync(const struct rlog_event *ev, uint64_t *ticks)
{
	if (!ev || !ticks || !is_own(ev, RLOG_RECORD_TIME_SYNC))
		return -EINVAL;
	if (ev->length != 8)
		return -EBADMSG;
	*ticks = rlog__get64(ev->payload);
	return 0;
}

const struct rlog_field *rlog_raw_field(uint16_t id)
{
	static const struct rlog_field f[] = {
		{ RLOG_FIELD_U8, 0, "value" },  { RLOG_FIELD_I8, 0, "value" },
		{ RLOG_FIELD_U16, 0, "value" }, { RLOG_FIELD_I16, 0, "value" },
		{ RLOG_FIELD_U32, 0, "value" }, { RLOG_FIELD_I32, 0, "value" },
		{ RLOG_FIELD_U64, 0, "value" }, { RLOG_FIELD_I64, 0, "value" },
		{ RLOG_FIELD_F64, 0, "value" },
	};
	return id >= RLOG_ID_RAW_U8 && id <= RLOG_ID_RAW_DOUBLE ? &f[id - RLOG_ID_RAW_U8] : NULL;
}

/* Bytes of one element of a RAW_* array. */
static unsigned raw_width(const struct rlog_field *f)
{
	switch (f->type) {
	case RLOG_FIELD_U8: case RLOG_FIELD_I8: return 1;
	case RLOG_FIELD_U16: case RLOG_FIELD_I16: return 2;
	case RLOG_FIELD_U32: case RLOG_FIELD_I32: return 4;
	default: return 8;
	}
}

int rlog_event_raw_count(const struct rlog_event *ev)
{
	const struct rlog_field *f = ev ? rlog_raw_field(ev->id) : NULL;
	if (!f)
		return -EINVAL;
	unsigned w = raw_width(f);
	return ev->length % w == 0 ? (int)(ev->length / w) : -EBADMSG;
}

int rlog_event_raw_value(const struct rlog_event *ev, unsigned i, struct rlog_value *v)
{
	int n = rlog_event_raw_count(ev);
	if (!v || n < 0 || i >= (unsigned)n)
		return -EINVAL;
	const struct rlog_field *f = rlog_raw_field(ev->id);
	unsigned w = raw_width(f);
	const uint8_t *p = (const uint8_t *)ev->payload + (size_t)i * w;
	uint64_t u = 0;
	memcpy(&u, p, w); /* little-endian, like every target (record.h) */
	memset(v, 0, sizeof(*v));
	v->field = f;
	switch (f->type) {
	case RLOG_FIELD_I8: v->v.i = (int8_t)u; break;
	case RLOG_FIELD_I16: v->v.i = (int16_t)u; break;
	case RLOG_FIELD_I32: v->v.i = (int32_t)u; break;
	case RLOG_FIELD_I64: memcpy(&v->v.i, &u, 8); break;
	case RLOG_FIELD_F64: memcpy(&v->v.f, &u, 8); break;
	default: v->v.u = u; break;
	}
	return 1;
}
