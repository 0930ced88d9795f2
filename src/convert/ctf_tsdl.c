/*
 * ctf_tsdl.c - the metadata file of a CTF 1.8 trace (TSDL, the Trace
 * Stream Description Language): types, trace, env, clock, the stream and
 * one event class per kind of record the streams hold (docs/CONVERT.md).
 * Written last, by rlog__convert_ctf(), once the classes are known.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ctf.h"
#include "names.h"
#include "io.h"

/* A TSDL string literal's body: anything but printable ASCII, '"' and '\'
 * becomes '_' (event names are printable ASCII without those already). */
static void tsdl_string(FILE *f, const char *s, size_t n)
{
	for (size_t i = 0; i < n && s[i]; i++) {
		char ch = s[i];
		putc(ch >= 0x20 && ch < 0x7f && ch != '"' && ch != '\\' ? ch : '_', f);
	}
}

static const char *field_type(uint8_t t)
{
	switch (t) {
	case RLOG_FIELD_U8: return "uint8_t";
	case RLOG_FIELD_U16: return "uint16_t";
	case RLOG_FIELD_U32: return "uint32_t";
	case RLOG_FIELD_U64: return "uint64_t";
	case RLOG_FIELD_I8: return "int8_t";
	case RLOG_FIELD_I16: return "int16_t";
	case RLOG_FIELD_I32: return "int32_t";
	case RLOG_FIELD_I64: return "int64_t";
	case RLOG_FIELD_F64: return "double";
	default: return "uint8_t"; /* BYTES: an array of them */
	}
}

/* The TSDL type of a RAW_* array's elements. */
static const char *raw_elem_type(unsigned id)
{
	const struct rlog_field *f = rlog_raw_field((uint16_t)id);
	return f ? field_type(f->type) : "uint8_t";
}

/*
 * Field names go out with a '_' in front, which CTF readers remove: that
 * makes any C identifier (also "string", "struct", "align", ...) a valid
 * TSDL field name.  A name taken already ("flag" in a flagged event's
 * class; schemas themselves never repeat a field name, docs/FORMAT.md)
 * gets "_<index>" appended.
 */
static void field_name(FILE *f, const struct ev_class *k, unsigned i)
{
	const struct rlog_schema *s = k->s;
	bool dup = k->flagged && strcmp(s->fields[i].name, "flag") == 0;
	putc('_', f);
	for (const char *p = s->fields[i].name; *p; p++) /* a C identifier already */
		putc((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9')
		     ? *p : '_', f);
	if (dup)
		fprintf(f, "_%u", i);
}

static void class_name(FILE *f, const struct ev_class *k)
{
	const char *n = rlog__id_name(k->id);
	switch (k->kind) {
	case CK_SCHEMA:
	case CK_MISMATCH: tsdl_string(f, k->s->name, SIZE_MAX); break;
	case CK_SPAN_BEGIN: tsdl_string(f, k->s->name, SIZE_MAX); fputs(":begin", f); break;
	case CK_SPAN_END: tsdl_string(f, k->s->name, SIZE_MAX); fputs(":end", f); break;
	case CK_MARKER: fputs("LOG_MARKER", f); break;
	case CK_LOSS: fputs("DATA_LOSS", f); break;
	case CK_COUNTER: fputs("COUNTER", f); break;
	default:
		if (n)
			fputs(n, f);
		else
			fprintf(f, "%u", (unsigned)k->id);
	}
	if (k->untimed)
		fputs(":untimed", f);
}

static void class_fields(FILE *f, const struct ev_class *k)
{
	if (k->flagged)
		fputs("\t\tuint16_t _flag;\n", f);
	switch (k->kind) {
	case CK_SCHEMA:
	case CK_SPAN_BEGIN:
		for (unsigned i = 0; i < k->s->field_count; i++) {
			const struct rlog_field *fl = &k->s->fields[i];
			fprintf(f, "\t\t%s ", fl->type == RLOG_FIELD_STRING ? "string" : field_type(fl->type));
			field_name(f, k, i);
			if (fl->type == RLOG_FIELD_BYTES)
				fprintf(f, "[%u]", (unsigned)fl->count);
			fputs(";\n", f);
		}
		break;
	case CK_SPAN_END:
		break;
	case CK_MISMATCH:
	case CK_RAW:
		fputs("\t\tuint16_t _length;\n\t\tuint8_t _payload[_length];\n", f);
		break;
	case CK_RAW_ARRAY:
		fprintf(f, "\t\tuint16_t _count;\n\t\t%s _values[_count];\n", raw_elem_type(k->id));
		break;
	case CK_RAW_STRING:
		fputs("\t\tstring _value;\n", f);
		break;
	case CK_MARKER:
		fputs("\t\tuint64_t _tick_freq_hz;\n"
		      "\t\tuint64_t _sync_ticks;\n"
		      "\t\tuint64_t _sync_realtime_ns;\n"
		      "\t\tuint64_t _sync_monotonic_ns;\n"
		      "\t\tenum : uint32_t { tsc = 1, monotonic = 2, counter = 3 } _tick_source;\n"
		      "\t\tuint32_t _buffer_size;\n"
		      "\t\tuint32_t _buffer_count;\n"
		      "\t\tstring _session_name;\n", f);
		break;
	case CK_LOSS:
		fputs("\t\tuint64_t _events;\n"
		      "\t\tuint64_t _bytes;\n"
		      "\t\tenum : uint32_t { no_buffer = 1, nested = 2, corrupt = 3, log_write = 4, "
		      "no_slot = 5, real_time = 6, overwritten = 7 } _cause;\n", f);
		break;
	case CK_COUNTER:
		fputs("\t\tuint32_t _counter;\n"
		      "\t\tstring _name;\n"
		      "\t\tuint16_t _flags;\n"
		      "\t\tuint16_t _seq;\n"
		      "\t\tuint64_t _delta;\n"
		      "\t\tuint8_t _value_known;\n"
		      "\t\tuint64_t _value;\n", f);
		break;
	}
}

int rlog__ctf_metadata(struct ctf *c)
{
	const struct rlog_reader_info *info = rlog_reader_info(c->r);
	int fd = rlog__create_output_at(c->dirfd, "metadata", RLOG_OUT_FORCE, NULL);
	if (fd < 0)
		return fd;
	FILE *f = fdopen(fd, "w");
	if (!f) {
		int rc = -errno;
		close(fd);
		return rc;
	}

	/* A UUID derived from the source file's identity: converting the
	 * same file twice gives the same trace UUID. */
	uint64_t h1 = UINT64_C(0xcbf29ce484222325);
	h1 = rlog__fnv(h1, &info->tick_freq_hz, 8);
	h1 = rlog__fnv(h1, &info->start_ticks, 8);
	h1 = rlog__fnv(h1, &info->sync_realtime_ns, 8);
	h1 = rlog__fnv(h1, &info->sync_monotonic_ns, 8);
	h1 = rlog__fnv(h1, info->session_name, strlen(info->session_name));
	uint64_t h2 = rlog__fnv(h1 ^ UINT64_C(0x9e3779b97f4a7c15), &info->created_realtime_ns, 8);
	h2 = rlog__fnv(h2, &info->file_size, 8);
	uint8_t u[16];
	memcpy(u, &h1, 8);
	memcpy(u + 8, &h2, 8);
	u[6] = (uint8_t)((u[6] & 0x0f) | 0x80); /* version 8: custom (RFC 9562) */
	u[8] = (uint8_t)((u[8] & 0x3f) | 0x80); /* variant 10 */

	/* The clock's origin: the wall clock at time_ns 0, minus the bias. */
	int64_t off_s;
	uint64_t off_ns;
	if (info->sync_realtime_ns >= (uint64_t)c->bias) {
		uint64_t t = info->sync_realtime_ns - (uint64_t)c->bias;
		off_s = (int64_t)(t / 1000000000u);
		off_ns = t % 1000000000u;
	} else {
		uint64_t d = (uint64_t)c->bias - info->sync_realtime_ns;
		uint64_t up = (d + 999999999u) / 1000000000u;
		off_s = -(int64_t)up;
		off_ns = up * 1000000000u - d;
	}

	fputs("/* CTF 1.8 */\n\n"
	      "/* Written by `ringlog convert --to ctf` (docs/CONVERT.md).  Every type is\n"
	      " * byte-aligned and little-endian; a leading '_' of a field name is not part\n"
	      " * of the name (CTF readers remove it). */\n\n", f);
	static const char *const ints[] = { "8", "16", "32", "64" };
	for (int sg = 0; sg < 2; sg++)
		for (int i = 0; i < 4; i++)
			fprintf(f, "typealias integer { size = %s; align = 8; signed = %s; } := %sint%s_t;\n",
				ints[i], sg ? "true" : "false", sg ? "" : "u", ints[i]);
	fputs("typealias floating_point { exp_dig = 11; mant_dig = 53; byte_order = le; align = 8; } := double;\n\n", f);
	fprintf(f, "trace {\n\tmajor = 1;\n\tminor = 8;\n\tbyte_order = le;\n"
		"\tuuid = \"%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x\";\n"
		"\tpacket.header := struct {\n\t\tuint32_t magic;\n\t\tuint32_t stream_id;\n\t};\n};\n\n",
		u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13],
		u[14], u[15]);
	fputs("env {\n\tdomain = \"ringlog\";\n\ttracer_name = \"ringlog\";\n"
	      "\ttracer_major = 0;\n\ttracer_minor = 1;\n\tsession_name = \"", f);
	tsdl_string(f, info->session_name, sizeof(info->session_name));
	const char *src = rlog__tick_source_name(info->tick_source);
	fprintf(f, "\";\n\ttick_source = \"%s\";\n\ttick_freq_hz = %" PRIu64 ";\n"
		"\tfile_version_major = %u;\n\tfile_version_minor = %u;\n",
		src ? src : "unknown",
		info->tick_freq_hz & INT64_MAX, (unsigned)info->version_major,
		(unsigned)info->version_minor);
	if (c->hostname) {
		/* One host of several: "hostname" as LTTng names it, which
		 * babeltrace2 prints with -f trace:hostname. */
		fputs("\thostname = \"", f);
		tsdl_string(f, c->hostname, strlen(c->hostname) + 1);
		fputs("\";\n\tclock_error = \"", f);
		/* TSDL strings are ASCII: the sign "\u00b1" as "+-". */
		const char *ce = c->clock_error;
		if (strncmp(ce, "\u00b1", 2) == 0) {
			fputs("+-", f);
			ce += 2;
		}
		tsdl_string(f, ce, strlen(ce) + 1);
		fputs("\";\n", f);
	}
	fputs("};\n\n", f);
	fprintf(f, "clock {\n\tname = \"ringlog\";\n"
		"\tdescription = \"ns since the session start (plus %" PRId64 "); origin: the Unix epoch\";\n"
		"\tfreq = 1000000000;\n\tprecision = 1;\n"
		"\toffset_s = %" PRId64 ";\n\toffset = %" PRIu64 ";\n\tabsolute = true;\n};\n\n",
		c->bias, off_s, off_ns);
	fputs("typealias integer { size = 64; align = 8; signed = false; map = clock.ringlog.value; } := uint64_clock_t;\n\n"
	      "stream {\n\tid = 0;\n"
	      "\tpacket.context := struct {\n"
	      "\t\tuint64_clock_t timestamp_begin;\n\t\tuint64_clock_t timestamp_end;\n"
	      "\t\tuint64_t content_size;\n\t\tuint64_t packet_size;\n"
	      "\t\tuint64_t packet_seq_num;\n\t\tuint64_t events_discarded;\n"
	      "\t\tuint32_t pid;\n\t\tuint32_t tid;\n"
	      "\t\tstring process_name;\n\t\tstring thread_name;\n\t};\n"
	      "\tevent.header := struct {\n\t\tuint32_t id;\n\t\tuint64_clock_t timestamp;\n\t};\n};\n", f);
	for (size_t i = 0; i < c->nclasses; i++) {
		const struct ev_class *k = &c->classes[i];
		fputs("\nevent {\n\tname = \"", f);
		class_name(f, k);
		fprintf(f, "\";\n\tid = %zu;\n\tstream_id = 0;\n\tfields := struct {\n", i);
		class_fields(f, k);
		fputs("\t};\n};\n", f);
	}
	long size = ftell(f);
	int rc = ferror(f) ? -EIO : 0;
	if (fclose(f) != 0 && rc == 0)
		rc = errno ? -errno : -EIO;
	if (rc == 0 && size > 0)
		c->st->bytes_written += (uint64_t)size;
	return rc;
}

