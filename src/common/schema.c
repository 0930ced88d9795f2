#define _GNU_SOURCE
#include "schema.h"

#include <errno.h>
#include <string.h>

unsigned rlog__field_fixed_size(uint8_t type, uint16_t count)
{
	switch (type) {
	case RLOG_FIELD_U8: case RLOG_FIELD_I8: return 1;
	case RLOG_FIELD_U16: case RLOG_FIELD_I16: return 2;
	case RLOG_FIELD_U32: case RLOG_FIELD_I32: return 4;
	case RLOG_FIELD_U64: case RLOG_FIELD_I64: case RLOG_FIELD_F64: return 8;
	case RLOG_FIELD_BYTES: return count;
	case RLOG_FIELD_STRING: return 2;
	default: return 0;
	}
}

static bool ident_ok(const char *n, size_t len)
{
	if (len == 0 || len > 255)
		return false;
	for (size_t i = 0; i < len; i++) {
		char c = n[i];
		bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
		if (!(alpha || (i > 0 && c >= '0' && c <= '9')))
			return false;
	}
	return true;
}

static bool event_name_ok(const char *n, size_t len)
{
	if (len == 0 || len > 255)
		return false;
	for (size_t i = 0; i < len; i++)
		if (n[i] < 0x21 || n[i] > 0x7e || n[i] == '"' || n[i] == '\\')
			return false;
	return true;
}

/* The IDs a schema may describe are those the producer API writes
 * (rlog__id_ok in <ringlog.h>): 16..16383 except ringlog's own 32..38, whose
 * records are never an application's (docs/FORMAT.md, "Event IDs"). */
static bool schema_id_ok(unsigned id)
{
	return id >= RLOG_ID_RAW_U8 && id <= RLOG_ID_MAX &&
	       (id < RLOG_ID_COUNTER || id > RLOG_ID_COUNTER_NAME);
}

int rlog__schema_check(const struct rlog_schema *s)
{
	if (!schema_id_ok(s->id) || s->kind > RLOG_KIND_COUNTER ||
	    s->category > 63 || s->field_count > RLOG_SCHEMA_MAX_FIELDS || s->name == NULL ||
	    !event_name_ok(s->name, strlen(s->name)))
		return -EINVAL;
	for (unsigned i = 0; i < s->field_count; i++) {
		const struct rlog_field *f = &s->fields[i];
		if (f->name == NULL || !ident_ok(f->name, strlen(f->name)) ||
		    rlog__field_fixed_size(f->type, f->count) == 0 ||
		    (f->type == RLOG_FIELD_BYTES && f->count > RLOG_BYTES_MAX) ||
		    (f->type != RLOG_FIELD_BYTES && f->count != 0))
			return -EINVAL;
		if (s->kind == RLOG_KIND_COUNTER &&
		    (f->type == RLOG_FIELD_BYTES || f->type == RLOG_FIELD_STRING))
			return -EINVAL; /* a counter track holds numbers */
		/* Field names are distinct: a JSON object or a CTF structure
		 * holds one member of a name (docs/FORMAT.md). */
		for (unsigned j = 0; j < i; j++)
			if (strcmp(s->fields[j].name, f->name) == 0)
				return -EINVAL;
	}
	return 0;
}

int rlog__schema_encode(const struct rlog_schema *s, uint8_t *out, size_t cap)
{
	if (rlog__schema_check(s) < 0)
		return -EINVAL;
	size_t nl = strlen(s->name), n = 6 + nl;
	for (unsigned i = 0; i < s->field_count; i++)
		n += 4 + strlen(s->fields[i].name);
	if (n > cap || n > RLOG_MAX_PAYLOAD)
		return -EMSGSIZE;
	out[0] = (uint8_t)s->id;
	out[1] = (uint8_t)(s->id >> 8);
	out[2] = s->kind;
	out[3] = s->category;
	out[4] = (uint8_t)nl;
	out[5] = s->field_count;
	memcpy(out + 6, s->name, nl);
	size_t off = 6 + nl;
	for (unsigned i = 0; i < s->field_count; i++) {
		const struct rlog_field *f = &s->fields[i];
		size_t fl = strlen(f->name);
		out[off] = f->type;
		out[off + 1] = (uint8_t)fl;
		out[off + 2] = (uint8_t)f->count;
		out[off + 3] = (uint8_t)(f->count >> 8);
		memcpy(out + off + 4, f->name, fl);
		off += 4 + fl;
	}
	return (int)off;
}

int rlog__schema_decode(const uint8_t *p, size_t n, struct rlog__schema_buf *out)
{
	if (n < 6)
		return -EBADMSG;
	memset(&out->s, 0, sizeof out->s);
	out->s.id = (uint16_t)(p[0] | p[1] << 8);
	out->s.kind = p[2];
	out->s.category = p[3];
	size_t nl = p[4];
	out->s.field_count = p[5];
	if (out->s.field_count > RLOG_SCHEMA_MAX_FIELDS || 6 + nl > n)
		return -EBADMSG;
	char *names = out->names;
	memcpy(names, p + 6, nl);
	names[nl] = '\0';
	out->s.name = names;
	names += nl + 1;
	size_t off = 6 + nl;
	for (unsigned i = 0; i < out->s.field_count; i++) {
		if (off + 4 > n)
			return -EBADMSG;
		struct rlog_field *f = &out->fields[i];
		f->type = p[off];
		size_t fl = p[off + 1];
		f->count = (uint16_t)(p[off + 2] | p[off + 3] << 8);
		if (off + 4 + fl > n)
			return -EBADMSG;
		memcpy(names, p + off + 4, fl);
		names[fl] = '\0';
		f->name = names;
		names += fl + 1;
		off += 4 + fl;
	}
	if (off != n)
		return -EBADMSG;
	out->s.fields = out->fields;
	return rlog__schema_check(&out->s) < 0 ? -EBADMSG : 0;
}

static uint64_t get_le(const uint8_t *p, unsigned size)
{
	uint64_t v = 0;
	for (unsigned k = 0; k < size; k++)
		v |= (uint64_t)p[k] << (8 * k);
	return v;
}

int rlog__value_decode(const struct rlog_schema *s, unsigned idx, const uint8_t *payload,
		       size_t len, size_t *off, struct rlog_value *v)
{
	if (idx >= s->field_count)
		return -EBADMSG;
	const struct rlog_field *f = &s->fields[idx];
	unsigned size = rlog__field_fixed_size(f->type, f->count);
	if (size == 0 || *off + size > len)
		return -EBADMSG;
	const uint8_t *p = payload + *off;
	memset(v, 0, sizeof *v);
	v->field = f;
	switch (f->type) {
	case RLOG_FIELD_U8: case RLOG_FIELD_U16: case RLOG_FIELD_U32: case RLOG_FIELD_U64:
		v->v.u = get_le(p, size);
		break;
	case RLOG_FIELD_I8: case RLOG_FIELD_I16: case RLOG_FIELD_I32: case RLOG_FIELD_I64: {
		uint64_t u = get_le(p, size);
		if (size < 8 && (u >> (8 * size - 1)) & 1)
			u |= ~UINT64_C(0) << (8 * size); /* sign-extend */
		memcpy(&v->v.i, &u, 8);
		break;
	}
	case RLOG_FIELD_F64: {
		uint64_t u = get_le(p, 8);
		memcpy(&v->v.f, &u, 8);
		break;
	}
	case RLOG_FIELD_BYTES:
		v->bytes = p;
		v->len = f->count;
		break;
	case RLOG_FIELD_STRING: {
		uint16_t sl = (uint16_t)get_le(p, 2);
		if (*off + 2 + (size_t)sl > len)
			return -EBADMSG;
		v->bytes = p + 2;
		v->len = sl;
		size += sl;
		break;
	}
	}
	*off += size;
	return 1;
}

int rlog__values_decode(const struct rlog_schema *s, const uint8_t *payload, size_t len,
			struct rlog_value *v)
{
	size_t off = 0;
	for (unsigned i = 0; i < s->field_count; i++, v++) {
		const struct rlog_field *f = &s->fields[i];
		size_t left = len - off; /* off <= len throughout */
		const uint8_t *p = payload + off;
		v->field = f;
		v->bytes = NULL;
		v->len = 0;
		v->v.u = 0;
		if (f->type >= RLOG_FIELD_U8 && f->type <= RLOG_FIELD_F64) {
			unsigned n = rlog__num_size(f->type);
			if (left < n)
				return -EBADMSG;
			v->v.u = rlog__num_load(p, f->type);
			off += n;
			continue;
		}
		switch (f->type) {
		case RLOG_FIELD_BYTES:
			if (f->count == 0 || left < f->count)
				return -EBADMSG;
			v->bytes = p;
			v->len = f->count;
			off += f->count;
			break;
		case RLOG_FIELD_STRING: {
			uint16_t sl;
			if (left < 2)
				return -EBADMSG;
			memcpy(&sl, p, 2);
			if (left - 2 < sl)
				return -EBADMSG;
			v->bytes = p + 2;
			v->len = sl;
			off += 2u + sl;
			break;
		}
		default:
			return -EBADMSG;
		}
	}
	return off == len ? (int)s->field_count : -EBADMSG;
}

bool rlog__payload_matches(const struct rlog_schema *s, const uint8_t *payload, size_t len)
{
	struct rlog_value v[RLOG_SCHEMA_MAX_FIELDS];
	return rlog__values_decode(s, payload, len, v) >= 0;
}
