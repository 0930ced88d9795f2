/*
 * ringlog/event.h - declared events: declare an event type once, then
 * write it in one line that the compiler type-checks.
 *
 *   #include <ringlog/event.h>
 *
 *   // The fields, in order: F(TYPE, name) for each.
 *   #define HTTP_REQUEST_FIELDS(F) \
 *           F(U16, status) F(U32, bytes) F(STRING, path) F(BYTES(16), digest) F(F64, ratio)
 *   //                ident         ID    event name      category  fields
 *   RLOG_DEFINE_EVENT(http_request, 2000, "http.request", 3,        HTTP_REQUEST_FIELDS)
 *
 *   RLOG_EVENT(http_request, 200, 5120, "/index", digest, 0.5);
 *
 * RLOG_DEFINE_EVENT generates, in the including file, the type's schema
 * (struct rlog_schema of <ringlog/schema.h>) and a static inline function
 * with one parameter per field, here
 *
 *   int rlog__ev_http_request(uint16_t status, uint32_t bytes, const char *path,
 *                             const uint8_t *digest, double ratio);
 *
 * which RLOG_EVENT calls: a wrong number of arguments or an argument of an
 * incompatible type is a compile error.  The function
 *   1. returns 0 at once if the category is off (one load of the enable
 *      mask and a test: the cost of a disabled event);
 *   2. packs the fields into a stack buffer sized for the largest payload
 *      the fields can make (payload layout: docs/FORMAT.md, "Declared
 *      events");
 *   3. writes the event with rlog_write() (rlog_write_flagged() for spans),
 *      or, the first time in a session, with rlog_write_declared(), which
 *      writes the type's EVENT_SCHEMA record first.
 * It returns what rlog_write() returns (include/ringlog.h): 1, 0, -ENOBUFS,
 * -EBUSY, -EMSGSIZE, and from rlog_write_declared() also -EINVAL and
 * -EEXIST.  Counting is unchanged: the event counts as emitted when the
 * result is 1, -ENOBUFS or -EBUSY; the schema record is never counted.
 *
 * Field types (the TYPE of F(TYPE, name)), the C parameter they make, and
 * what the payload holds (little-endian, packed, in field order):
 *
 *   U8 U16 U32 U64    uint8_t .. uint64_t    the integer, 1, 2, 4, 8 bytes
 *   I8 I16 I32 I64    int8_t .. int64_t      the integer, two's complement
 *   F64               double                 IEEE 754 binary64, 8 bytes
 *   STRING            const char *           u16 length, then that many bytes
 *                                            of the NUL-terminated string, cut
 *                                            at RLOG_STRING_MAX (1024) bytes;
 *                                            NULL is the empty string
 *   BYTES(n)          const uint8_t *        n bytes (1 <= n <= 4096) copied
 *                                            from the pointer; NULL: n zeros
 *
 * Field names are C identifiers (they name the parameters).  An event type
 * without fields uses RLOG_NO_FIELDS.  IDs are the application's
 * (RLOG_ID_USER_MIN .. RLOG_ID_MAX), the category 0..63, the event name 1
 * to 255 printable ASCII characters other than space, '"' and '\' (a
 * dotted name such as "http.request" reads well in viewers).  At most
 * RLOG_SCHEMA_MAX_FIELDS fields, whose largest payload fits in 65535
 * bytes.  Every limit that the preprocessor can see is a static assertion;
 * a bad event name makes every write return -EINVAL.
 *
 * A definition can live in a header shared by several files: each file
 * gets its own static copy, and the library writes one schema record per
 * type, process and session (src/lib/declared.c).  Two different
 * definitions with one ID in one process are an error: the second one's
 * writes return -EEXIST.
 *
 * Spans and counters are declared the same way:
 *
 *   #define JOB_FIELDS(F) F(U32, job) F(U32, worker)
 *   RLOG_DEFINE_SPAN(job, 1030, "job", 0, JOB_FIELDS)
 *   RLOG_BEGIN(job, 17, 2);              // FLAGGED record, flag RLOG_SPAN_BEGIN, the fields
 *   RLOG_END(job);                       // FLAGGED record, flag RLOG_SPAN_END, no payload
 *
 *   #define DEPTH_FIELDS(F) F(U32, depth)
 *   RLOG_DEFINE_COUNTER(queue_depth, 1031, "queue.depth", 0, DEPTH_FIELDS)
 *   RLOG_COUNTER(queue_depth, 5);        // each field: a counter track's new value
 *
 * (The span macros are not called RLOG_SPAN_BEGIN/RLOG_SPAN_END: those
 * are the flag values of <ringlog/format.h>.)
 *
 * Everything here is C11; the one trick is how BYTES(n) works: the type
 * token is pasted onto a prefix (RLOG__CTYPE_ ## BYTES(16) gives
 * RLOG__CTYPE_BYTES(16)), which is then expanded as a function-like macro.
 * The type tokens themselves are therefore never macro-expanded.
 */
#ifndef RINGLOG_EVENT_H
#define RINGLOG_EVENT_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ringlog.h"
#include "ringlog/schema.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ */
/* Declaring and writing                                               */
/* ------------------------------------------------------------------ */

/* The field list of an event type without fields. */
#define RLOG_NO_FIELDS(F)

/*
 * RLOG_DEFINE_EVENT - declare an instant event type.
 * @ident:    a C identifier for the type, used by RLOG_EVENT
 * @id:       its event ID, 1024..16383, a constant expression
 * @name:     its name in the trace, a string literal (e.g. "http.request")
 * @category: 0..63, a constant expression: RLOG_EVENT writes nothing while
 *            the category is off in the session's enable mask
 * @FIELDS:   a macro taking F and expanding to F(TYPE, name) per field
 * At file scope; no semicolon needed.
 */
#define RLOG_DEFINE_EVENT(ident, id, name, category, FIELDS)                                 \
	RLOG__DEFINE_SCHEMA(ident, id, name, category, RLOG_KIND_EVENT, FIELDS)              \
	static inline int rlog__ev_##ident(RLOG__PARAMS(FIELDS))                             \
		RLOG__BODY(ident, id, category, 0, FIELDS)

/*
 * RLOG_EVENT - write an event of a type declared with RLOG_DEFINE_EVENT.
 * @ident: the type's identifier; then one argument per field, in order.
 * Returns what rlog_write() returns (see the top of this file).
 */
#define RLOG_EVENT(...) RLOG__CALL(rlog__ev_, __VA_ARGS__)

/*
 * RLOG_DEFINE_SPAN - declare a span type: a duration, written as a begin
 * (with the fields) and an end (without).  Arguments as RLOG_DEFINE_EVENT.
 * Per thread, an end closes the innermost open begin of the same type.
 */
#define RLOG_DEFINE_SPAN(ident, id, name, category, FIELDS)                                  \
	RLOG__DEFINE_SCHEMA(ident, id, name, category, RLOG_KIND_SPAN, FIELDS)               \
	static inline int rlog__span_begin_##ident(RLOG__PARAMS(FIELDS))                     \
		RLOG__BODY(ident, id, category, RLOG_SPAN_BEGIN, FIELDS)                     \
	static inline int rlog__span_end_##ident(void)                                       \
	{                                                                                    \
		if (!rlog_enabled(category))                                                 \
			return 0;                                                            \
		_Atomic uint32_t *rlog__reg;                                                 \
		const struct rlog_schema *rlog__s = rlog__schema_##ident(&rlog__reg);         \
		return rlog__declared_write(rlog__s, rlog__reg, (id), RLOG_SPAN_END, "", 0);  \
	}

/*
 * RLOG_BEGIN - begin a span: @ident, then one argument per field.
 * RLOG_END - end the innermost open span of type @ident of this thread.
 * Return what rlog_write_flagged() returns.
 */
#define RLOG_BEGIN(...) RLOG__CALL(rlog__span_begin_, __VA_ARGS__)
#define RLOG_END(ident) rlog__span_end_##ident()

/*
 * RLOG_DEFINE_COUNTER - declare a counter type: each field (at least one,
 * all of them numeric: no STRING or BYTES) is a counter track, and each
 * event gives the tracks their new values.  Arguments as RLOG_DEFINE_EVENT.
 */
#define RLOG_DEFINE_COUNTER(ident, id, name, category, FIELDS)                               \
	_Static_assert(0 FIELDS(RLOG__ONE) > 0, "counter " #ident ": no fields");            \
	_Static_assert(0 FIELDS(RLOG__NONNUM) == 0,                                          \
		       "counter " #ident ": fields must be numeric (no STRING or BYTES)");   \
	RLOG__DEFINE_SCHEMA(ident, id, name, category, RLOG_KIND_COUNTER, FIELDS)            \
	static inline int rlog__counter_##ident(RLOG__PARAMS(FIELDS))                        \
		RLOG__BODY(ident, id, category, 0, FIELDS)

/*
 * RLOG_COUNTER - write a counter sample: @ident, then one value per field.
 * Returns what rlog_write() returns.
 */
#define RLOG_COUNTER(...) RLOG__CALL(rlog__counter_, __VA_ARGS__)

/*
 * rlog_write_declared - write an event of a declared type whose schema may
 * not be in the session yet.  What the generated functions call on a
 * type's first event in a session; usable directly with a hand-built
 * schema.
 * @s:          the type's schema (valid for the life of the process)
 * @registered: a word that this function sets, once the schema is in the
 *              session, to the session generation (rlog__gen); may be NULL
 * @flag:       0 for an instant event or a counter; RLOG_SPAN_BEGIN or
 *              RLOG_SPAN_END for a span (written as a FLAGGED record)
 * @payload:    the fields, packed as described at the top of this file
 *              (a span's end: none)
 * @len:        payload bytes
 *
 * Writes the type's EVENT_SCHEMA record unless this process already wrote
 * it into the session, then the event, both in the calling thread's
 * buffer: the schema record precedes the type's first event in time, for
 * every thread of the process.  If no buffer is free, neither is written
 * and the event is counted lost; the next event of the type tries again.
 * Returns what rlog_write() returns, or:
 *   -EINVAL   a bad schema (rlog_schema_check rules: docs/FORMAT.md), an ID
 *             the producer API refuses, a flag that does not match the
 *             kind, or a payload that does not hold exactly the fields
 *   -EEXIST   this process wrote a different schema with the same ID into
 *             the session
 * Async-signal-safe.  The first event of a type that another thread is
 * writing the schema of at that moment waits for it (at most 0.2 ms).
 */
RLOG__EXPORT int rlog_write_declared(const struct rlog_schema *s, _Atomic uint32_t *registered,
				     uint16_t flag, const void *payload, size_t len);

/* ------------------------------------------------------------------ */
/* Internals of the macros above.  Not API.                            */
/* ------------------------------------------------------------------ */

/* The write every generated function ends with: the schema's generation
 * check (two loads), then the plain inline write. */
RLOG__INLINE int rlog__declared_write(const struct rlog_schema *s, _Atomic uint32_t *registered,
				      unsigned id, uint16_t flag, const void *payload, size_t len)
{
	/* Acquire pairs with the release store in src/lib/declared.c: the
	 * schema record was written before this event. */
	if (RLOG__UNLIKELY(atomic_load_explicit(registered, memory_order_acquire) !=
			   atomic_load_explicit(&rlog__gen, memory_order_relaxed)))
		return rlog_write_declared(s, registered, flag, payload, len);
	if (flag)
		return rlog_write_flagged(id, flag, payload, len);
	return rlog_write(id, payload, len);
}

/* Token pasting and argument counting. */
#define RLOG__CAT(a, b) RLOG__CAT_(a, b)
#define RLOG__CAT_(a, b) a##b
#define RLOG__HEAD(a, ...) a
/* 1 if the arguments hold a top-level comma (2 to 40 arguments), else 0. */
#define RLOG__HAS_COMMA(...)                                                                 \
	RLOG__ARG41(__VA_ARGS__, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, \
		    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, ~)
#define RLOG__ARG41(a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15, a16, a17, \
		    a18, a19, a20, a21, a22, a23, a24, a25, a26, a27, a28, a29, a30, a31, a32,  \
		    a33, a34, a35, a36, a37, a38, a39, a40, n, ...)                             \
	n
/* The arguments after the first, or nothing: plain C11 has no empty
 * __VA_ARGS__ for RLOG_EVENT(ident) of a type without fields. */
#define RLOG__TAIL(...) RLOG__CAT(RLOG__TAIL_, RLOG__HAS_COMMA(__VA_ARGS__))(__VA_ARGS__)
#define RLOG__TAIL_0(a)
#define RLOG__TAIL_1(a, ...) __VA_ARGS__
/* prefix##ident(the other arguments) */
#define RLOG__CALL(prefix, ...)                                                              \
	RLOG__CAT(prefix, RLOG__HEAD(__VA_ARGS__, ~))(RLOG__TAIL(__VA_ARGS__))

/* Per type token: the C parameter type, RLOG_FIELD_*, the BYTES count, the
 * largest payload bytes, the packing function, whether it is not numeric,
 * and whether it is valid. */
#define RLOG__CTYPE_U8 uint8_t
#define RLOG__CTYPE_U16 uint16_t
#define RLOG__CTYPE_U32 uint32_t
#define RLOG__CTYPE_U64 uint64_t
#define RLOG__CTYPE_I8 int8_t
#define RLOG__CTYPE_I16 int16_t
#define RLOG__CTYPE_I32 int32_t
#define RLOG__CTYPE_I64 int64_t
#define RLOG__CTYPE_F64 double
#define RLOG__CTYPE_STRING const char *
#define RLOG__CTYPE_BYTES(n) const uint8_t *

#define RLOG__FTYPE_U8 RLOG_FIELD_U8
#define RLOG__FTYPE_U16 RLOG_FIELD_U16
#define RLOG__FTYPE_U32 RLOG_FIELD_U32
#define RLOG__FTYPE_U64 RLOG_FIELD_U64
#define RLOG__FTYPE_I8 RLOG_FIELD_I8
#define RLOG__FTYPE_I16 RLOG_FIELD_I16
#define RLOG__FTYPE_I32 RLOG_FIELD_I32
#define RLOG__FTYPE_I64 RLOG_FIELD_I64
#define RLOG__FTYPE_F64 RLOG_FIELD_F64
#define RLOG__FTYPE_STRING RLOG_FIELD_STRING
#define RLOG__FTYPE_BYTES(n) RLOG_FIELD_BYTES

#define RLOG__FCOUNT_U8 0
#define RLOG__FCOUNT_U16 0
#define RLOG__FCOUNT_U32 0
#define RLOG__FCOUNT_U64 0
#define RLOG__FCOUNT_I8 0
#define RLOG__FCOUNT_I16 0
#define RLOG__FCOUNT_I32 0
#define RLOG__FCOUNT_I64 0
#define RLOG__FCOUNT_F64 0
#define RLOG__FCOUNT_STRING 0
#define RLOG__FCOUNT_BYTES(n) (n)

#define RLOG__FMAX_U8 1
#define RLOG__FMAX_U16 2
#define RLOG__FMAX_U32 4
#define RLOG__FMAX_U64 8
#define RLOG__FMAX_I8 1
#define RLOG__FMAX_I16 2
#define RLOG__FMAX_I32 4
#define RLOG__FMAX_I64 8
#define RLOG__FMAX_F64 8
#define RLOG__FMAX_STRING (2 + RLOG_STRING_MAX)
#define RLOG__FMAX_BYTES(n) (n)

#define RLOG__PUTFN_U8 rlog__put_u8
#define RLOG__PUTFN_U16 rlog__put_u16
#define RLOG__PUTFN_U32 rlog__put_u32
#define RLOG__PUTFN_U64 rlog__put_u64
#define RLOG__PUTFN_I8 rlog__put_i8
#define RLOG__PUTFN_I16 rlog__put_i16
#define RLOG__PUTFN_I32 rlog__put_i32
#define RLOG__PUTFN_I64 rlog__put_i64
#define RLOG__PUTFN_F64 rlog__put_f64
#define RLOG__PUTFN_STRING rlog__put_string
#define RLOG__PUTFN_BYTES(n) rlog__put_bytes

#define RLOG__NONNUM_U8 0
#define RLOG__NONNUM_U16 0
#define RLOG__NONNUM_U32 0
#define RLOG__NONNUM_U64 0
#define RLOG__NONNUM_I8 0
#define RLOG__NONNUM_I16 0
#define RLOG__NONNUM_I32 0
#define RLOG__NONNUM_I64 0
#define RLOG__NONNUM_F64 0
#define RLOG__NONNUM_STRING 1
#define RLOG__NONNUM_BYTES(n) 1

#define RLOG__VALID_U8 1
#define RLOG__VALID_U16 1
#define RLOG__VALID_U32 1
#define RLOG__VALID_U64 1
#define RLOG__VALID_I8 1
#define RLOG__VALID_I16 1
#define RLOG__VALID_I32 1
#define RLOG__VALID_I64 1
#define RLOG__VALID_F64 1
#define RLOG__VALID_STRING 1
#define RLOG__VALID_BYTES(n) ((n) >= 1 && (n) <= RLOG_BYTES_MAX)

/* The F macros applied to a field list.  Each pastes the type token
 * directly (never through another macro), so it is not expanded first. */
#define RLOG__PARAM(t, n) , RLOG__CTYPE_##t n
#define RLOG__FIELD(t, n) { RLOG__FTYPE_##t, RLOG__FCOUNT_##t, #n },
#define RLOG__ONE(t, n) +1
#define RLOG__MAX(t, n) +RLOG__FMAX_##t
#define RLOG__NONNUM(t, n) +RLOG__NONNUM_##t
#define RLOG__INVALID(t, n) +!(RLOG__VALID_##t) + (sizeof(#n) > 256)
#define RLOG__PUT(t, n) rlog__p = RLOG__PUTFN_##t(rlog__p, n, RLOG__FCOUNT_##t);

/* The parameter list: "void", or the fields' parameters without the
 * leading comma. */
#define RLOG__PARAMS(FIELDS) RLOG__PARAMS_(void FIELDS(RLOG__PARAM))
#define RLOG__PARAMS_(...) RLOG__CAT(RLOG__PARAMS_, RLOG__HAS_COMMA(__VA_ARGS__))(__VA_ARGS__)
#define RLOG__PARAMS_0(v) void
#define RLOG__PARAMS_1(v, ...) __VA_ARGS__

/* The largest payload the fields make, and a buffer size for it (an array
 * cannot have size 0). */
#define RLOG__MAXSIZE(FIELDS) (0 FIELDS(RLOG__MAX))
#define RLOG__BUFSIZE(FIELDS) (RLOG__MAXSIZE(FIELDS) > 0 ? RLOG__MAXSIZE(FIELDS) : 1)

/*
 * The schema, with the type's registered word, as function-scope statics
 * of a static inline function: an unused declaration (a header declaring
 * many types) then costs nothing and warns about nothing.  The field array
 * ends with a zero entry so that it is never empty.
 */
#define RLOG__DEFINE_SCHEMA(ident, id, name, category, kind, FIELDS)                         \
	/* (unsigned long long): a negative value fails, and no "always true"  \
	 * warning for an unsigned one. */                                                   \
	_Static_assert((unsigned long long)(id) - RLOG_ID_USER_MIN <=                        \
			       RLOG_ID_MAX - RLOG_ID_USER_MIN,                               \
		       "event " #ident ": the ID must be 1024..16383");                      \
	_Static_assert((unsigned long long)(category) <= 63,                                 \
		       "event " #ident ": the category must be 0..63");                      \
	_Static_assert(sizeof(name) >= 2 && sizeof(name) <= 256,                             \
		       "event " #ident ": the name must have 1 to 255 characters");          \
	_Static_assert(0 FIELDS(RLOG__ONE) <= RLOG_SCHEMA_MAX_FIELDS,                        \
		       "event " #ident ": more than RLOG_SCHEMA_MAX_FIELDS fields");         \
	_Static_assert(0 FIELDS(RLOG__INVALID) == 0,                                         \
		       "event " #ident ": BYTES(n) needs 1 <= n <= 4096, names <= 255");     \
	_Static_assert(RLOG__MAXSIZE(FIELDS) <= RLOG_MAX_PAYLOAD,                            \
		       "event " #ident ": the fields can exceed 65535 bytes");               \
	static inline const struct rlog_schema *rlog__schema_##ident(_Atomic uint32_t **rlog__reg) \
	{                                                                                    \
		static const struct rlog_field rlog__f[] = { FIELDS(RLOG__FIELD){ 0, 0, 0 } }; \
		static const struct rlog_schema rlog__s = {                                  \
			(id), (kind), (category), 0 FIELDS(RLOG__ONE), name, rlog__f         \
		};                                                                           \
		static _Atomic uint32_t rlog__r;                                             \
		*rlog__reg = &rlog__r;                                                       \
		return &rlog__s;                                                             \
	}

/* The body of a generated write function. */
#define RLOG__BODY(ident, id, category, flag, FIELDS)                                        \
	{                                                                                    \
		if (!rlog_enabled(category))                                                 \
			return 0;                                                            \
		uint8_t rlog__b[RLOG__BUFSIZE(FIELDS)];                                      \
		uint8_t *rlog__p = rlog__b;                                                  \
		FIELDS(RLOG__PUT)                                                            \
		_Atomic uint32_t *rlog__reg;                                                 \
		const struct rlog_schema *rlog__s = rlog__schema_##ident(&rlog__reg);         \
		/* No fields: no bytes to point at (the buffer is a dummy). */                \
		return rlog__declared_write(rlog__s, rlog__reg, (id), (flag),                 \
					    RLOG__MAXSIZE(FIELDS) > 0 ? (const void *)rlog__b  \
								      : (const void *)"", \
					    (size_t)(rlog__p - rlog__b));                      \
	}

/* Packing one field; returns the position after it.  The formats are
 * little-endian, like every target ringlog builds for (docs/FORMAT.md). */
RLOG__INLINE uint8_t *rlog__put_u8(uint8_t *p, uint8_t v, unsigned n)
{
	(void)n;
	*p = v;
	return p + 1;
}
RLOG__INLINE uint8_t *rlog__put_u16(uint8_t *p, uint16_t v, unsigned n)
{
	(void)n;
	memcpy(p, &v, 2);
	return p + 2;
}
RLOG__INLINE uint8_t *rlog__put_u32(uint8_t *p, uint32_t v, unsigned n)
{
	(void)n;
	memcpy(p, &v, 4);
	return p + 4;
}
RLOG__INLINE uint8_t *rlog__put_u64(uint8_t *p, uint64_t v, unsigned n)
{
	(void)n;
	memcpy(p, &v, 8);
	return p + 8;
}
RLOG__INLINE uint8_t *rlog__put_i8(uint8_t *p, int8_t v, unsigned n)
{
	(void)n;
	memcpy(p, &v, 1);
	return p + 1;
}
RLOG__INLINE uint8_t *rlog__put_i16(uint8_t *p, int16_t v, unsigned n)
{
	(void)n;
	memcpy(p, &v, 2);
	return p + 2;
}
RLOG__INLINE uint8_t *rlog__put_i32(uint8_t *p, int32_t v, unsigned n)
{
	(void)n;
	memcpy(p, &v, 4);
	return p + 4;
}
RLOG__INLINE uint8_t *rlog__put_i64(uint8_t *p, int64_t v, unsigned n)
{
	(void)n;
	memcpy(p, &v, 8);
	return p + 8;
}
RLOG__INLINE uint8_t *rlog__put_f64(uint8_t *p, double v, unsigned n)
{
	(void)n;
	memcpy(p, &v, 8);
	return p + 8;
}
RLOG__INLINE uint8_t *rlog__put_string(uint8_t *p, const char *s, unsigned n)
{
	(void)n;
	uint16_t len = 0;
	if (s != NULL) {
		/* memchr stops at the first NUL (C11 7.24.5.1): it never reads
		 * past a short string. */
		const char *z = (const char *)memchr(s, '\0', RLOG_STRING_MAX);
		len = z != NULL ? (uint16_t)(z - s) : (uint16_t)RLOG_STRING_MAX;
	}
	memcpy(p, &len, 2);
	if (len)
		memcpy(p + 2, s, len);
	return p + 2 + len;
}
RLOG__INLINE uint8_t *rlog__put_bytes(uint8_t *p, const uint8_t *b, unsigned n)
{
	if (b != NULL)
		memcpy(p, b, n);
	else
		memset(p, 0, n);
	return p + n;
}

#ifdef __cplusplus
}
#endif

#endif /* RINGLOG_EVENT_H */
