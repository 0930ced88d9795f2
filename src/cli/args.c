#include "args.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool cli_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	if (s == NULL || *s == '\0' || !isxdigit((unsigned char)s[0]))
		return false;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 0);
	if (errno != 0 || *end != '\0' || v < min || v > max)
		return false;
	*out = v;
	return true;
}

void cli_kv_u64(const char *key, uint64_t v)
{
	printf("%s: %" PRIu64 "\n", key, v);
}

bool cli_parse_duration_ms(const char *s, uint32_t max_ms, uint32_t *ms)
{
	char *end;
	if (s[0] < '0' || s[0] > '9')
		return false;
	unsigned long long v = strtoull(s, &end, 10);
	unsigned long long mul = 1;
	if (strcmp(end, "s") == 0)
		mul = 1000;
	else if (*end != '\0' && strcmp(end, "ms") != 0)
		return false;
	if (v > max_ms || v * mul > max_ms)
		return false;
	*ms = (uint32_t)(v * mul);
	return true;
}
