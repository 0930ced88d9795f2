/*
 * format.c - names, times and time arguments for `ringlog dump` and
 * `ringlog stats` (format.h, docs/DUMP.md).  Values go through the output
 * buffer and the JSON writer of src/common (buf.h, json.h).
 */
#include "format.h"

#include "names.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "region_abi.h"

void fmt_rfc3339(char *buf, size_t n, uint64_t ns)
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

/* name, or "unknown(v)" written into buf. */
static const char *name_or_unknown(const char *name, uint32_t v, char *buf, size_t n)
{
	if (name)
		return name;
	snprintf(buf, n, "unknown(%" PRIu32 ")", v);
	return buf;
}

const char *fmt_tick_source(uint32_t source, char *buf, size_t n)
{
	return name_or_unknown(rlog__tick_source_name(source), source, buf, n);
}

const char *fmt_loss_cause(uint32_t cause, char *buf, size_t n)
{
	return name_or_unknown(rlog__loss_cause_name(cause), cause, buf, n);
}

const char *fmt_field_type(uint8_t type)
{
	static const char *const names[] = {
		[RLOG_FIELD_U8] = "u8", [RLOG_FIELD_U16] = "u16", [RLOG_FIELD_U32] = "u32",
		[RLOG_FIELD_U64] = "u64", [RLOG_FIELD_I8] = "i8", [RLOG_FIELD_I16] = "i16",
		[RLOG_FIELD_I32] = "i32", [RLOG_FIELD_I64] = "i64", [RLOG_FIELD_F64] = "f64",
		[RLOG_FIELD_BYTES] = "bytes", [RLOG_FIELD_STRING] = "string",
	};
	return type < sizeof(names) / sizeof(names[0]) && names[type] ? names[type] : "unknown";
}

const char *fmt_kind(uint8_t kind)
{
	switch (kind) {
	case RLOG_KIND_EVENT: return "event";
	case RLOG_KIND_SPAN: return "span";
	case RLOG_KIND_COUNTER: return "counter";
	default: return "unknown";
	}
}

/* ---------------------------------------------------------------- */
/* Time arguments                                                   */
/* ---------------------------------------------------------------- */

/* Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's
 * days_from_civil). */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
	y -= m <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	unsigned yoe = (unsigned)(y - era * 400);
	unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
	unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + (int64_t)doe - 719468;
}

/* n decimal digits at *p into *v; advances *p.  False if not n digits. */
static bool digits(const char **p, int n, unsigned *v)
{
	*v = 0;
	for (int i = 0; i < n; i++) {
		char c = (*p)[i];
		if (c < '0' || c > '9')
			return false;
		*v = *v * 10 + (unsigned)(c - '0');
	}
	*p += n;
	return true;
}

/* A fraction ".F" at *p as nanoseconds (digits past the 9th dropped). */
static bool fraction(const char **p, uint64_t *ns)
{
	*ns = 0;
	if (**p != '.')
		return true;
	(*p)++;
	int n = 0;
	if (**p < '0' || **p > '9')
		return false;
	for (; **p >= '0' && **p <= '9'; (*p)++, n++)
		if (n < 9)
			*ns = *ns * 10 + (uint64_t)(**p - '0');
	for (; n < 9; n++)
		*ns *= 10;
	return true;
}

static int parse_rfc3339(const char *s, struct cli_time *t)
{
	const char *p = s;
	unsigned y, mo, d, h, mi, sec, oh = 0, om = 0;
	uint64_t frac;
	int sign = 0;

	if (!digits(&p, 4, &y) || *p++ != '-' || !digits(&p, 2, &mo) || *p++ != '-' ||
	    !digits(&p, 2, &d))
		return -EINVAL;
	if (*p != 'T' && *p != 't' && *p != ' ')
		return -EINVAL;
	p++;
	if (!digits(&p, 2, &h) || *p++ != ':' || !digits(&p, 2, &mi) || *p++ != ':' ||
	    !digits(&p, 2, &sec) || !fraction(&p, &frac))
		return -EINVAL;
	if (*p == 'Z' || *p == 'z') {
		p++;
	} else if (*p == '+' || *p == '-') {
		sign = *p++ == '+' ? 1 : -1;
		if (!digits(&p, 2, &oh) || *p++ != ':' || !digits(&p, 2, &om))
			return -EINVAL;
	} else {
		return -EINVAL;
	}
	if (*p != '\0')
		return -EINVAL;
	static const unsigned mdays[] = { 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
	if (mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1] || (mo == 2 && d == 29 && !leap) ||
	    h > 23 || mi > 59 || sec > 60 || oh > 23 || om > 59)
		return -EINVAL;
	int64_t secs = days_from_civil(y, mo, d) * 86400 + (int64_t)h * 3600 + mi * 60 + sec -
		       sign * ((int64_t)oh * 3600 + (int64_t)om * 60);
	/* Years 0000-9999: seconds stay far from overflow; ns may not. */
	if (secs < 0 || secs > INT64_MAX / 1000000000 - 1)
		return -ERANGE;
	t->wall = true;
	t->ns = secs * 1000000000 + (int64_t)frac;
	return 0;
}

int cli_parse_time(const char *s, struct cli_time *t)
{
	if (s == NULL || *s == '\0')
		return -EINVAL;
	if (strlen(s) >= 10 && s[4] == '-' && s[7] == '-')
		return parse_rfc3339(s, t);

	const char *p = s;
	bool neg = *p == '-';
	if (neg)
		p++;
	if (*p < '0' || *p > '9')
		return -EINVAL;
	uint64_t whole = 0;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (whole > (UINT64_MAX - 9) / 10)
			return -ERANGE;
		whole = whole * 10 + (uint64_t)(*p - '0');
	}
	uint64_t frac9; /* the fraction in units of 1e-9 */
	if (!fraction(&p, &frac9))
		return -EINVAL;
	uint64_t unit;
	if (strcmp(p, "") == 0 || strcmp(p, "ns") == 0)
		unit = 1;
	else if (strcmp(p, "us") == 0)
		unit = 1000;
	else if (strcmp(p, "ms") == 0)
		unit = 1000000;
	else if (strcmp(p, "s") == 0)
		unit = 1000000000;
	else
		return -EINVAL;
	if (whole > (uint64_t)INT64_MAX / unit)
		return -ERANGE;
	uint64_t ns = whole * unit + frac9 * unit / 1000000000u;
	if (ns > (uint64_t)INT64_MAX)
		return -ERANGE;
	t->wall = false;
	t->ns = neg ? -(int64_t)ns : (int64_t)ns;
	return 0;
}

int64_t cli_time_ns(const struct cli_time *t, uint64_t origin_realtime_ns)
{
	if (!t->wall)
		return t->ns;
	/* Both are below 2^63: the difference fits. */
	int64_t base = origin_realtime_ns > (uint64_t)INT64_MAX ? INT64_MAX
								 : (int64_t)origin_realtime_ns;
	return t->ns - base;
}
