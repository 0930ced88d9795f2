/*
 * cmd_dump.c - `ringlog dump FILE [--all]`: every event of a log file, one
 * line each, in time order.
 *
 *   # ringlog dump of FILE: session NAME, tick source tsc at F Hz, started 2026-11-22T10:00:00.123456789Z
 *   #      time_ns     pid     tid id           payload
 *                0    4242    4242 LOG_MARKER   tick_hz=... source=tsc realtime=... session=... buffers=8x16384
 *             1500    4242    4243 1025/3       01000000 02000000 ab
 *
 * time_ns counts from the LOG_MARKER (negative before it).  Payloads print
 * as hex in groups of 4 bytes, "-" when empty; RAW_*, DATA_LOSS and
 * LOG_MARKER payloads are decoded.  TIME_SYNC records show only with --all.
 *
 * Exit status: 0 for a clean file; 1 when the file cannot be read or holds
 * damaged regions (every readable event is printed first, then one line per
 * region on stderr); 2 for a usage error.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "record.h"
#include "ringlog/abi.h"
#include "ringlog/reader.h"

#define USAGE "usage: ringlog dump FILE [--all]"

/* Output is large; a big stdout buffer keeps write(2) calls rare. */
static char out_buf[1 << 20];

static const char *const reserved_names[] = {
	[RLOG_ID_LOG_MARKER] = "LOG_MARKER",
	[RLOG_ID_DATA_LOSS] = "DATA_LOSS",
	[RLOG_ID_TIME_SYNC] = "TIME_SYNC",
	[RLOG_ID_RAW_U8] = "RAW_U8",
	[RLOG_ID_RAW_I8] = "RAW_I8",
	[RLOG_ID_RAW_U16] = "RAW_U16",
	[RLOG_ID_RAW_I16] = "RAW_I16",
	[RLOG_ID_RAW_U32] = "RAW_U32",
	[RLOG_ID_RAW_I32] = "RAW_I32",
	[RLOG_ID_RAW_U64] = "RAW_U64",
	[RLOG_ID_RAW_I64] = "RAW_I64",
	[RLOG_ID_RAW_DOUBLE] = "RAW_DOUBLE",
	[RLOG_ID_RAW_STRING] = "RAW_STRING",
};

/* RFC 3339 UTC with nanoseconds: 2026-11-22T10:00:00.123456789Z. */
static void format_rfc3339(char *buf, size_t n, uint64_t ns)
{
	time_t secs = (time_t)(ns / 1000000000u);
	struct tm tm;
	char date[32];

	if (!gmtime_r(&secs, &tm) || strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%S", &tm) == 0) {
		snprintf(buf, n, "@%" PRIu64 "ns", ns);
		return;
	}
	snprintf(buf, n, "%s.%09" PRIu64 "Z", date, ns % 1000000000u);
}

static const char *tick_source_name(uint32_t source, char *buf, size_t n)
{
	if (source == RLOG_TICK_TSC)
		return "tsc";
	if (source == RLOG_TICK_MONOTONIC)
		return "monotonic";
	snprintf(buf, n, "unknown(%" PRIu32 ")", source);
	return buf;
}

static const char *loss_cause_name(uint32_t cause, char *buf, size_t n)
{
	switch (cause) {
	case RLOG_LOSS_NO_BUFFER: return "no_buffer";
	case RLOG_LOSS_NESTED: return "nested";
	case RLOG_LOSS_CORRUPT: return "corrupt";
	case RLOG_LOSS_LOG_WRITE: return "log_write";
	case RLOG_LOSS_NO_SLOT: return "no_slot";
	default:
		snprintf(buf, n, "unknown(%" PRIu32 ")", cause);
		return buf;
	}
}

static void id_string(char *buf, size_t n, const struct rlog_event *ev)
{
	const char *name = ev->id < sizeof(reserved_names) / sizeof(reserved_names[0])
				   ? reserved_names[ev->id] : NULL;
	int k = name ? snprintf(buf, n, "%s", name) : snprintf(buf, n, "%u", (unsigned)ev->id);
	if (ev->flagged && k > 0 && (size_t)k < n)
		snprintf(buf + k, n - (size_t)k, "/%u", (unsigned)ev->flag);
}

/* Bytes as a C string body: printable ASCII as is, \\ \" \n \t \r, the
 * rest as \xHH. */
static void put_escaped(FILE *f, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint8_t c = p[i];
		switch (c) {
		case '\\': fputs("\\\\", f); break;
		case '"': fputs("\\\"", f); break;
		case '\n': fputs("\\n", f); break;
		case '\t': fputs("\\t", f); break;
		case '\r': fputs("\\r", f); break;
		default:
			if (c >= 0x20 && c < 0x7f)
				putc(c, f);
			else
				fprintf(f, "\\x%02x", c);
		}
	}
}

static void put_hex(FILE *f, const uint8_t *p, size_t n)
{
	static const char digits[] = "0123456789abcdef";
	for (size_t i = 0; i < n; i++) {
		if (i > 0 && i % 4 == 0)
			putc(' ', f);
		putc(digits[p[i] >> 4], f);
		putc(digits[p[i] & 15], f);
	}
}

/* RAW_* payload as space-separated values; false if the length does not
 * fit the type (the caller prints hex). */
static bool put_raw(FILE *f, unsigned id, const uint8_t *p, size_t n)
{
	static const unsigned char width[] = { 1, 1, 2, 2, 4, 4, 8, 8, 8 };
	size_t w;

	if (id == RLOG_ID_RAW_STRING) {
		putc('"', f);
		put_escaped(f, p, n);
		putc('"', f);
		return true;
	}
	w = width[id - RLOG_ID_RAW_U8];
	if (n % w != 0)
		return false;
	for (size_t i = 0; i < n; i += w) {
		const uint8_t *q = p + i;
		if (i > 0)
			putc(' ', f);
		switch (id) {
		case RLOG_ID_RAW_U8: fprintf(f, "%u", (unsigned)q[0]); break;
		case RLOG_ID_RAW_I8: fprintf(f, "%d", (int)(int8_t)q[0]); break;
		case RLOG_ID_RAW_U16: {
			uint16_t v;
			memcpy(&v, q, 2);
			fprintf(f, "%u", (unsigned)v);
			break;
		}
		case RLOG_ID_RAW_I16: {
			int16_t v;
			memcpy(&v, q, 2);
			fprintf(f, "%d", (int)v);
			break;
		}
		case RLOG_ID_RAW_U32: fprintf(f, "%" PRIu32, rlog__get32(q)); break;
		case RLOG_ID_RAW_I32: {
			int32_t v;
			memcpy(&v, q, 4);
			fprintf(f, "%" PRId32, v);
			break;
		}
		case RLOG_ID_RAW_U64: fprintf(f, "%" PRIu64, rlog__get64(q)); break;
		case RLOG_ID_RAW_I64: {
			int64_t v;
			memcpy(&v, q, 8);
			fprintf(f, "%" PRId64, v);
			break;
		}
		case RLOG_ID_RAW_DOUBLE: {
			double v;
			memcpy(&v, q, 8);
			fprintf(f, "%.17g", v); /* enough digits to read the same double back */
			break;
		}
		}
	}
	return true;
}

static void put_payload(FILE *f, const struct rlog_event *ev)
{
	const uint8_t *p = ev->payload;
	size_t n = ev->length;
	char a[32], b[64];

	if (n == 0) {
		putc('-', f);
		return;
	}
	if (ev->id >= RLOG_ID_RAW_U8 && ev->id <= RLOG_ID_RAW_STRING && put_raw(f, ev->id, p, n))
		return;
	if (ev->id == RLOG_ID_DATA_LOSS && n >= sizeof(struct rlog_data_loss)) {
		fprintf(f, "events=%" PRIu64 " bytes=%" PRIu64 " cause=%s", rlog__get64(p),
			rlog__get64(p + 8), loss_cause_name(rlog__get32(p + 16), a, sizeof(a)));
		return;
	}
	if (ev->id == RLOG_ID_LOG_MARKER && n >= sizeof(struct rlog_log_marker)) {
		const uint8_t *name = p + offsetof(struct rlog_log_marker, session_name);
		format_rfc3339(b, sizeof(b), rlog__get64(p + 16));
		fprintf(f, "tick_hz=%" PRIu64 " source=%s realtime=%s session=", rlog__get64(p),
			tick_source_name(rlog__get32(p + 32), a, sizeof(a)), b);
		put_escaped(f, name, strnlen((const char *)name, RLOG_NAME_MAX));
		fprintf(f, " buffers=%" PRIu32 "x%" PRIu32, rlog__get32(p + 40), rlog__get32(p + 36));
		return;
	}
	put_hex(f, p, n);
}

/* v right-aligned in width columns (the digits, after a '-' if neg). */
static char *put_num(char *p, uint64_t v, bool neg, int width)
{
	char tmp[24];
	int n = 0;
	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	for (int pad = width - n - (neg ? 1 : 0); pad > 0; pad--)
		*p++ = ' ';
	if (neg)
		*p++ = '-';
	while (n > 0)
		*p++ = tmp[--n];
	return p;
}

/*
 * One event line, printf("%14" PRId64 " %7u %7u %-12s %s\n", ...) in
 * effect, formatted by hand: printf's format parsing was most of the cost
 * of a dump.  Hex payloads up to HEX_INLINE bytes go in the same buffer.
 */
#define HEX_INLINE 256
static void put_event(FILE *f, const struct rlog_event *ev)
{
	static const char digits[] = "0123456789abcdef";
	char line[64 + HEX_INLINE * 9 / 4 + 2], id[32];
	char *p = line;
	bool decoded = (ev->id >= RLOG_ID_RAW_U8 && ev->id <= RLOG_ID_RAW_STRING) ||
		       ev->id == RLOG_ID_DATA_LOSS || ev->id == RLOG_ID_LOG_MARKER;

	bool neg = ev->time_ns < 0;
	p = put_num(p, neg ? 0u - (uint64_t)ev->time_ns : (uint64_t)ev->time_ns, neg, 14);
	*p++ = ' ';
	p = put_num(p, ev->pid, false, 7);
	*p++ = ' ';
	p = put_num(p, ev->tid, false, 7);
	*p++ = ' ';
	id_string(id, sizeof(id), ev);
	size_t k = strlen(id);
	memcpy(p, id, k);
	p += k;
	for (; k < 12; k++)
		*p++ = ' ';
	*p++ = ' ';
	if (decoded || ev->length > HEX_INLINE) {
		fwrite(line, 1, (size_t)(p - line), f);
		put_payload(f, ev);
		putc('\n', f);
		return;
	}
	const uint8_t *q = ev->payload;
	if (ev->length == 0)
		*p++ = '-';
	for (size_t i = 0; i < ev->length; i++) {
		if (i > 0 && i % 4 == 0)
			*p++ = ' ';
		*p++ = digits[q[i] >> 4];
		*p++ = digits[q[i] & 15];
	}
	*p++ = '\n';
	fwrite(line, 1, (size_t)(p - line), f);
}

static int usage(void)
{
	cli_error("dump: " USAGE);
	return 2;
}

int cmd_dump(int argc, char **argv)
{
	const char *path = NULL;
	bool all = false;
	struct rlog_reader *r;
	struct rlog_event ev;
	char src[32], started[64];
	int rc;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--all") == 0)
			all = true;
		else if ((argv[i][0] == '-' && argv[i][1] != '\0') || path)
			return usage();
		else
			path = argv[i];
	}
	if (!path)
		return usage();

	rc = rlog_reader_open(path, &r);
	if (rc < 0)
		return cli_error("dump %s: %s", path, rlog_reader_strerror(rc));
	if (all)
		rlog_reader_set_flags(r, RLOG_READER_TIME_SYNC);

	setvbuf(stdout, out_buf, _IOFBF, sizeof(out_buf));
	const struct rlog_reader_info *info = rlog_reader_info(r);
	format_rfc3339(started, sizeof(started), info->sync_realtime_ns);
	printf("# ringlog dump of %s: session %s, tick source %s at %" PRIu64 " Hz, started %s\n",
	       path, info->session_name, tick_source_name(info->tick_source, src, sizeof(src)),
	       info->tick_freq_hz, started);
	printf("#      time_ns     pid     tid id           payload\n");
	while ((rc = rlog_reader_next(r, &ev)) > 0)
		put_event(stdout, &ev);
	int status = 0;
	if (fflush(stdout) != 0 || ferror(stdout))
		status = cli_error("dump %s: writing the output: %s", path, strerror(errno));
	if (rc < 0)
		status = cli_error("dump %s: %s", path, rlog_reader_strerror(rc));
	size_t nd = rlog_reader_damage_count(r);
	for (size_t i = 0; i < nd; i++) {
		struct rlog_damage d;
		if (rlog_reader_damage(r, i, &d) == 0)
			status = cli_error("dump %s: %s", path, d.message);
	}
	rlog_reader_close(r);
	return status;
}
