/*
 * json.h - a strict JSON parser for tests (RFC 8259), header only.
 *
 *   char err[128];
 *   struct json *doc = json_parse(text, len, err, sizeof err);
 *   const struct json *ev = json_get(doc, "traceEvents");
 *   for (size_t i = 0; ev && i < ev->n; i++) ... ev->items[i] ...
 *   json_free(doc);
 *
 * Strict on purpose, since it validates what the converters write: no
 * trailing commas, no control characters or invalid UTF-8 in strings, the
 * number grammar exactly, nothing after the value but whitespace.  Strings
 * are decoded (escapes, \uXXXX with surrogate pairs) to UTF-8 bytes, which
 * may include NUL (len counts them).  Numbers keep their text (raw) besides
 * their value, so that tests can compare the digits.  Duplicate keys are an
 * error too (the viewers would take one of them silently).
 */
#ifndef RLOG_TESTS_JSON_H
#define RLOG_TESTS_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum json_type { JSON_NULL, JSON_BOOL, JSON_NUM, JSON_STR, JSON_ARR, JSON_OBJ };

struct json {
	enum json_type type;
	bool b;               /* JSON_BOOL */
	double num;           /* JSON_NUM */
	char *s;              /* JSON_NUM: its text; JSON_STR: decoded bytes; NUL-terminated */
	size_t len;           /* strlen of s, NULs inside a string included */
	struct json **items;  /* JSON_ARR, JSON_OBJ: n values */
	char **keys;          /* JSON_OBJ: n keys */
	size_t n;
};

struct json_parser {
	const char *start, *p, *end;
	char *err;
	size_t errlen;
	int depth;
};

static inline void json_free(struct json *j)
{
	if (!j)
		return;
	for (size_t i = 0; i < j->n; i++) {
		json_free(j->items[i]);
		if (j->keys)
			free(j->keys[i]);
	}
	free(j->items);
	free(j->keys);
	free(j->s);
	free(j);
}

static inline void *json_fail(struct json_parser *ps, const char *what)
{
	if (ps->err && ps->err[0] == '\0')
		snprintf(ps->err, ps->errlen, "%s at byte %zu", what, (size_t)(ps->p - ps->start));
	return NULL;
}

static inline void json_ws(struct json_parser *ps)
{
	while (ps->p < ps->end &&
	       (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r'))
		ps->p++;
}

static inline struct json *json_new(enum json_type t)
{
	struct json *j = calloc(1, sizeof(*j));
	if (!j)
		abort();
	j->type = t;
	return j;
}

static inline void json_push(struct json *j, char *key, struct json *v)
{
	j->items = realloc(j->items, (j->n + 1) * sizeof(*j->items));
	if (!j->items)
		abort();
	if (j->type == JSON_OBJ) {
		j->keys = realloc(j->keys, (j->n + 1) * sizeof(*j->keys));
		if (!j->keys)
			abort();
		j->keys[j->n] = key;
	}
	j->items[j->n++] = v;
}

static inline void json_put_utf8(char **o, uint32_t cp)
{
	unsigned char *q = (unsigned char *)*o;
	if (cp < 0x80) {
		*q++ = (unsigned char)cp;
	} else if (cp < 0x800) {
		*q++ = (unsigned char)(0xc0 | cp >> 6);
		*q++ = (unsigned char)(0x80 | (cp & 0x3f));
	} else if (cp < 0x10000) {
		*q++ = (unsigned char)(0xe0 | cp >> 12);
		*q++ = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
		*q++ = (unsigned char)(0x80 | (cp & 0x3f));
	} else {
		*q++ = (unsigned char)(0xf0 | cp >> 18);
		*q++ = (unsigned char)(0x80 | (cp >> 12 & 0x3f));
		*q++ = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
		*q++ = (unsigned char)(0x80 | (cp & 0x3f));
	}
	*o = (char *)q;
}

static inline int json_hex4(const char *p, uint32_t *v)
{
	*v = 0;
	for (int i = 0; i < 4; i++) {
		char c = p[i];
		int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
			: c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
		if (d < 0)
			return -1;
		*v = *v << 4 | (uint32_t)d;
	}
	return 0;
}

/* Length of a valid UTF-8 sequence at p, 0 if invalid. */
static inline size_t json_utf8(const unsigned char *p, size_t n)
{
	unsigned char c = p[0];
	size_t k = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
	if (k == 0 || k > n)
		return 0;
	for (size_t i = 1; i < k; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	if ((c == 0xe0 && p[1] < 0xa0) || (c == 0xed && p[1] > 0x9f) || (c == 0xf0 && p[1] < 0x90) ||
	    (c == 0xf4 && p[1] > 0x8f))
		return 0;
	return k;
}

/* A string at ps->p (on the '"'); returns the decoded bytes (malloc'd). */
static inline char *json_string(struct json_parser *ps, size_t *len)
{
	ps->p++;
	const char *start = ps->p;
	while (ps->p < ps->end && *ps->p != '"') {
		if (*ps->p == '\\')
			ps->p++;
		ps->p++;
	}
	if (ps->p >= ps->end)
		return json_fail(ps, "unterminated string");
	const char *stop = ps->p;
	ps->p++;
	char *out = malloc((size_t)(stop - start) + 1), *o = out;
	if (!out)
		abort();
	for (const char *q = start; q < stop;) {
		unsigned char c = (unsigned char)*q;
		if (c < 0x20) {
			free(out);
			return json_fail(ps, "control character in a string");
		}
		if (c >= 0x80) {
			size_t k = json_utf8((const unsigned char *)q, (size_t)(stop - q));
			if (k == 0) {
				free(out);
				return json_fail(ps, "invalid UTF-8 in a string");
			}
			memcpy(o, q, k);
			o += k;
			q += k;
			continue;
		}
		if (c != '\\') {
			*o++ = (char)c;
			q++;
			continue;
		}
		q++;
		uint32_t cp, lo;
		switch (*q++) {
		case '"': *o++ = '"'; break;
		case '\\': *o++ = '\\'; break;
		case '/': *o++ = '/'; break;
		case 'b': *o++ = '\b'; break;
		case 'f': *o++ = '\f'; break;
		case 'n': *o++ = '\n'; break;
		case 'r': *o++ = '\r'; break;
		case 't': *o++ = '\t'; break;
		case 'u':
			if (stop - q < 4 || json_hex4(q, &cp) < 0) {
				free(out);
				return json_fail(ps, "bad \\u escape");
			}
			q += 4;
			if (cp >= 0xd800 && cp <= 0xdbff) {
				if (stop - q < 6 || q[0] != '\\' || q[1] != 'u' || json_hex4(q + 2, &lo) < 0 ||
				    lo < 0xdc00 || lo > 0xdfff) {
					free(out);
					return json_fail(ps, "lone surrogate");
				}
				q += 6;
				cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
			} else if (cp >= 0xdc00 && cp <= 0xdfff) {
				free(out);
				return json_fail(ps, "lone surrogate");
			}
			json_put_utf8(&o, cp);
			break;
		default:
			free(out);
			return json_fail(ps, "bad escape");
		}
	}
	*o = '\0';
	*len = (size_t)(o - out);
	return out;
}

static inline struct json *json_value(struct json_parser *ps);

static inline struct json *json_number(struct json_parser *ps)
{
	const char *s = ps->p, *q = s;
	if (q < ps->end && *q == '-')
		q++;
	if (q < ps->end && *q == '0')
		q++;
	else if (q < ps->end && *q >= '1' && *q <= '9')
		while (q < ps->end && *q >= '0' && *q <= '9')
			q++;
	else
		return json_fail(ps, "bad number");
	if (q < ps->end && *q == '.') {
		q++;
		if (q >= ps->end || *q < '0' || *q > '9')
			return json_fail(ps, "bad fraction");
		while (q < ps->end && *q >= '0' && *q <= '9')
			q++;
	}
	if (q < ps->end && (*q == 'e' || *q == 'E')) {
		q++;
		if (q < ps->end && (*q == '+' || *q == '-'))
			q++;
		if (q >= ps->end || *q < '0' || *q > '9')
			return json_fail(ps, "bad exponent");
		while (q < ps->end && *q >= '0' && *q <= '9')
			q++;
	}
	struct json *j = json_new(JSON_NUM);
	j->len = (size_t)(q - s);
	j->s = malloc(j->len + 1);
	if (!j->s)
		abort();
	memcpy(j->s, s, j->len);
	j->s[j->len] = '\0';
	j->num = strtod(j->s, NULL);
	ps->p = q;
	return j;
}

static inline struct json *json_value(struct json_parser *ps)
{
	json_ws(ps);
	if (ps->p >= ps->end)
		return json_fail(ps, "value expected");
	if (++ps->depth > 64)
		return json_fail(ps, "nested too deeply");
	struct json *j = NULL;
	char c = *ps->p;
	if (c == '{' || c == '[') {
		bool obj = c == '{';
		j = json_new(obj ? JSON_OBJ : JSON_ARR);
		ps->p++;
		json_ws(ps);
		if (ps->p < ps->end && *ps->p == (obj ? '}' : ']')) {
			ps->p++;
			ps->depth--;
			return j;
		}
		for (;;) {
			char *key = NULL;
			json_ws(ps);
			if (obj) {
				size_t kl;
				if (ps->p >= ps->end || *ps->p != '"' || !(key = json_string(ps, &kl))) {
					json_free(j);
					return json_fail(ps, "key expected");
				}
				for (size_t i = 0; i < j->n; i++)
					if (strcmp(j->keys[i], key) == 0) {
						free(key);
						json_free(j);
						return json_fail(ps, "duplicate key");
					}
				json_ws(ps);
				if (ps->p >= ps->end || *ps->p != ':') {
					free(key);
					json_free(j);
					return json_fail(ps, "':' expected");
				}
				ps->p++;
			}
			struct json *v = json_value(ps);
			if (!v) {
				free(key);
				json_free(j);
				return NULL;
			}
			json_push(j, key, v);
			json_ws(ps);
			if (ps->p < ps->end && *ps->p == ',') {
				ps->p++;
				continue;
			}
			if (ps->p < ps->end && *ps->p == (obj ? '}' : ']')) {
				ps->p++;
				break;
			}
			json_free(j);
			return json_fail(ps, "',' or end expected");
		}
	} else if (c == '"') {
		j = json_new(JSON_STR);
		if (!(j->s = json_string(ps, &j->len))) {
			json_free(j);
			return NULL;
		}
	} else if (c == '-' || (c >= '0' && c <= '9')) {
		j = json_number(ps);
	} else if (ps->end - ps->p >= 4 && memcmp(ps->p, "true", 4) == 0) {
		j = json_new(JSON_BOOL);
		j->b = true;
		ps->p += 4;
	} else if (ps->end - ps->p >= 5 && memcmp(ps->p, "false", 5) == 0) {
		j = json_new(JSON_BOOL);
		ps->p += 5;
	} else if (ps->end - ps->p >= 4 && memcmp(ps->p, "null", 4) == 0) {
		j = json_new(JSON_NULL);
		ps->p += 4;
	} else {
		return json_fail(ps, "unexpected character");
	}
	ps->depth--;
	return j;
}

/* Parses len bytes of text; NULL with a message in err on error. */
static inline struct json *json_parse(const char *text, size_t len, char *err, size_t errlen)
{
	struct json_parser ps = { text, text, text + len, err, errlen, 0 };
	if (err && errlen)
		err[0] = '\0';
	struct json *j = json_value(&ps);
	if (!j)
		return NULL;
	json_ws(&ps);
	if (ps.p != ps.end) {
		json_free(j);
		return json_fail(&ps, "trailing characters");
	}
	return j;
}

/* The value of key in an object, or NULL. */
static inline const struct json *json_get(const struct json *o, const char *key)
{
	if (!o || o->type != JSON_OBJ)
		return NULL;
	for (size_t i = 0; i < o->n; i++)
		if (strcmp(o->keys[i], key) == 0)
			return o->items[i];
	return NULL;
}

/* The string value of key, or NULL if absent or not a string. */
static inline const char *json_str(const struct json *o, const char *key)
{
	const struct json *v = json_get(o, key);
	return v && v->type == JSON_STR ? v->s : NULL;
}

/* The number text of key ("1.500"), or NULL if absent or not a number. */
static inline const char *json_num(const struct json *o, const char *key)
{
	const struct json *v = json_get(o, key);
	return v && v->type == JSON_NUM ? v->s : NULL;
}

#endif
