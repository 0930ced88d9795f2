/*
 * tap.h - a tiny TAP harness (Test Anything Protocol), header only.
 *
 *   int main(void) {
 *       plan(2);                 // or plan_lazy() and done_testing()
 *       ASSERT_EQ(add(1, 2), 3); // prints both sides on failure
 *       ok(x != NULL, "x is set");
 *       return done_testing();
 *   }
 *
 * skip_all("why") skips the whole test when it cannot run here (the TAP
 * plan "1..0 # SKIP why"; meson counts it as skipped).
 */
#ifndef RLOG_TAP_H
#define RLOG_TAP_H

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int tap_n, tap_failed, tap_planned = -1;

static inline void plan(int n)
{
	tap_planned = n;
	printf("1..%d\n", n);
	fflush(stdout);
}

static inline int ok_at(int cond, const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	tap_n++;
	printf("%s %d - ", cond ? "ok" : "not ok", tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
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
			printf("#   left:  \"%s\"\n#   right: \"%s\"\n", tap_a_ ? tap_a_ : "(null)", \
			       tap_b_ ? tap_b_ : "(null)");                          \
	} while (0)

/* a contains the substring b */
#define ASSERT_CONTAINS(a, b)                                                       \
	do {                                                                        \
		const char *tap_a_ = (a), *tap_b_ = (b);                            \
		if (!ok(tap_a_ && tap_b_ && strstr(tap_a_, tap_b_) != NULL, "%s contains %s", #a, #b)) \
			printf("#   haystack: \"%s\"\n#   needle:   \"%s\"\n", tap_a_ ? tap_a_ : "(null)", \
			       tap_b_ ? tap_b_ : "(null)");                         \
	} while (0)

static inline void diag(const char *fmt, ...)
{
	va_list ap;
	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

/* The whole test is skipped: under meson's TAP protocol the plan line
 * "1..0 # SKIP why" is what marks a skip (exit 77 is the convention of the
 * exitcode protocol, and TAP would count it as an error), so exit 0. */
static inline void skip_all(const char *why)
{
	printf("1..0 # SKIP %s\n", why);
	fflush(stdout);
	exit(0);
}

/* Stop now if a precondition failed: later checks would only cascade. */
#define BAIL_IF(cond, ...)                                            \
	do {                                                          \
		if (cond) {                                           \
			printf("Bail out! ");                         \
			printf(__VA_ARGS__);                          \
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
