/*
 * tap.h - a tiny TAP harness (Test Anything Protocol), header only.
 *
 *   int main(void) {
 *       plan(2);                 // or just done_testing() at the end
 *       ASSERT_EQ(add(1, 2), 3); // prints both sides on failure
 *       ok(x != NULL, "x is set");
 *       return done_testing();
 *   }
 *
 * skip_all("why") skips the whole test when it cannot run here (the TAP
 * plan "1..0 # SKIP why"; meson counts it as skipped).
 *
 * Every text a test prints (descriptions, diagnostics, the values an
 * ASSERT compares) goes out on one line: a newline or another control
 * character in it is written as \n or \xNN, since a TAP consumer (meson)
 * reads a line that is neither a test line nor a "#" comment as
 * "Unknown TAP output" and hides the failure behind it.
 */
#ifndef RLOG_TAP_H
#define RLOG_TAP_H

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int tap_n, tap_failed, tap_planned = -1;

/* Writes fmt's text to stdout on one line: control characters escaped
 * (\n, \t, \r, \xNN), a backslash as \\. */
static inline void tap_vput(const char *fmt, va_list ap)
{
	char small[1024], *t = small;
	va_list aq;
	va_copy(aq, ap);
	int n = vsnprintf(small, sizeof small, fmt, aq);
	va_end(aq);
	if (n < 0)
		n = 0;
	if ((size_t)n >= sizeof small && (t = malloc((size_t)n + 1)) != NULL)
		vsnprintf(t, (size_t)n + 1, fmt, ap);
	else if (t == NULL)
		t = small; /* cut, but on one line */
	for (const unsigned char *p = (const unsigned char *)t; *p; p++) {
		if (*p == '\n')
			fputs("\\n", stdout);
		else if (*p == '\t')
			fputs("\\t", stdout);
		else if (*p == '\r')
			fputs("\\r", stdout);
		else if (*p == '\\')
			fputs("\\\\", stdout);
		else if (*p < 0x20 || *p == 0x7f)
			printf("\\x%02x", *p);
		else
			putchar(*p);
	}
	if (t != small)
		free(t);
}

static inline void tap_put(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	tap_vput(fmt, ap);
	va_end(ap);
}

static inline void plan(int n)
{
	tap_planned = n;
	printf("1..%d\n", n);
	fflush(stdout);
}

/* A check of a known, not yet fixed defect (TAP's TODO directive): printed
 * as ok, or as not ok with "# TODO why", never counted as a failure; the why
 * names the doc that describes the defect. */
static inline int todo_ok(int cond, const char *why, const char *fmt, ...)
{
	va_list ap;
	tap_n++;
	printf("%s %d - ", cond ? "ok" : "not ok", tap_n);
	va_start(ap, fmt);
	tap_vput(fmt, ap);
	va_end(ap);
	/* Only a failure carries the directive: meson counts "ok ... # TODO"
	 * as an unexpected pass, a failure of its own. */
	if (cond)
		printf("\n");
	else
		printf(" # TODO %s\n", why);
	fflush(stdout);
	return cond;
}

static inline int ok_at(int cond, const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	tap_n++;
	printf("%s %d - ", cond ? "ok" : "not ok", tap_n);
	va_start(ap, fmt);
	tap_vput(fmt, ap);
	va_end(ap);
	printf("\n");
	if (!cond) {
		tap_failed++;
		printf("#   failed at %s:%d\n", file, line);
	}
	fflush(stdout);
	return cond;
}

#define ok(cond, ...) ok_at(!!(cond), __FILE__, __LINE__, __VA_ARGS__)

/* Compare two integers; on failure print both values. */
#define ASSERT_EQ(a, b)                                                               \
	do {                                                                          \
		long long tap_a_ = (long long)(a), tap_b_ = (long long)(b);           \
		if (!ok(tap_a_ == tap_b_, "%s == %s", #a, #b))                         \
			printf("#   left:  %lld\n#   right: %lld\n", tap_a_, tap_b_); \
	} while (0)

#define ASSERT_EQ_U64(a, b)                                                          \
	do {                                                                         \
		unsigned long long tap_a_ = (unsigned long long)(a),                 \
				   tap_b_ = (unsigned long long)(b);                 \
		if (!ok(tap_a_ == tap_b_, "%s == %s", #a, #b))                        \
			printf("#   left:  %llu\n#   right: %llu\n", tap_a_, tap_b_); \
	} while (0)

#define ASSERT_STREQ(a, b)                                                           \
	do {                                                                         \
		const char *tap_a_ = (a), *tap_b_ = (b);                             \
		if (!ok(tap_a_ && tap_b_ && strcmp(tap_a_, tap_b_) == 0, "%s == %s", #a, #b)) \
			tap_diag2("  left:  \"%s\"", tap_a_ ? tap_a_ : "(null)",      \
				  "  right: \"%s\"", tap_b_ ? tap_b_ : "(null)");     \
	} while (0)

/* a contains the substring b */
#define ASSERT_CONTAINS(a, b)                                                       \
	do {                                                                        \
		const char *tap_a_ = (a), *tap_b_ = (b);                            \
		if (!ok(tap_a_ && tap_b_ && strstr(tap_a_, tap_b_) != NULL, "%s contains %s", #a, #b)) \
			tap_diag2("  haystack: \"%s\"", tap_a_ ? tap_a_ : "(null)",   \
				  "  needle:   \"%s\"", tap_b_ ? tap_b_ : "(null)");  \
	} while (0)

static inline void diag(const char *fmt, ...)
{
	va_list ap;
	printf("# ");
	va_start(ap, fmt);
	tap_vput(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

/* Two diagnostic lines of one string each (an ASSERT's two sides). */
static inline void tap_diag2(const char *f1, const char *s1, const char *f2, const char *s2)
{
	diag(f1, s1);
	diag(f2, s2);
}

/* The whole test is skipped: under meson's TAP protocol the plan line
 * "1..0 # SKIP why" is what marks a skip (exit 77 is the convention of the
 * exitcode protocol, and TAP would count it as an error), so exit 0. */
static inline void skip_all(const char *why)
{
	printf("1..0 # SKIP ");
	tap_put("%s", why);
	printf("\n");
	fflush(stdout);
	exit(0);
}

/* Stop now if a precondition failed: later checks would only cascade. */
#define BAIL_IF(cond, ...)                                            \
	do {                                                          \
		if (cond) {                                           \
			printf("Bail out! ");                         \
			tap_put(__VA_ARGS__);                         \
			printf("\n");                                 \
			fflush(stdout);                               \
			exit(1);                                      \
		}                                                     \
	} while (0)

static inline int done_testing(void)
{
	if (tap_planned < 0)
		printf("1..%d\n", tap_n);
	else if (tap_planned != tap_n) {
		printf("# planned %d tests but ran %d\n", tap_planned, tap_n);
		return 1;
	}
	fflush(stdout);
	return tap_failed ? 1 : 0;
}

#endif
