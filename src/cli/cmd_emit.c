/*
 * cmd_emit.c - `ringlog emit (NAME | --ring PATH) ID [--count N]
 * [--payload HEX] [--flag F]`: write events from a shell script (a marker
 * between the phases of a job, as logger(1) does for syslog), into a
 * session or into a single ring (cmd_emit_ring.c).
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "args.h"
#include "cli.h"
#include "ringlog.h"

static const struct cli_opt opts[] = {
	{ "--count", NULL, true }, { "--payload", NULL, true }, { "--ring", NULL, true },
	{ "--flag", NULL, true },  { NULL, NULL, false },
};

static int hex_value(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = tolower(c);
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

int cmd_emit(int argc, char **argv)
{
	const char *hex = "", *ring = NULL;
	uint64_t count = 1, id, flag = 0;
	bool flagged = false;
	struct cli_args a;
	cli_args_init(&a, "emit", opts, 2, argc, argv);
	while (cli_args_next(&a)) {
		if (cli_is(&a, "--count")) {
			if (!cli_parse_u64(a.value, 0, UINT64_C(1) << 40, &count))
				return cli_error("emit: --count '%s': expected a number", a.value);
		} else if (cli_is(&a, "--payload")) {
			hex = a.value;
		} else if (cli_is(&a, "--ring")) {
			ring = a.value;
		} else if (cli_is(&a, "--flag")) {
			if (!cli_parse_u64(a.value, 0, 65535, &flag))
				return cli_error("emit: --flag '%s': expected 0 to 65535", a.value);
			flagged = true;
		}
	}
	if (a.bad)
		return 2;
	/* NAME ID, or --ring PATH and ID alone. */
	const char *const *pos = a.pos;
	const char *name = ring ? NULL : pos[0], *id_s = ring ? pos[0] : pos[1];
	if (ring && a.npos > 1)
		return cli_usage_error("emit", "with --ring, give the event ID alone (not '%s %s')",
				       pos[0], pos[1]);
	if (!cli_args_need(&a, ring ? 1 : a.npos ? 2 : 1,
			   ring == NULL && name == NULL ? "session NAME" : "event ID"))
		return 2;
	if (!cli_parse_u64(id_s, RLOG_ID_RAW_U8, RLOG_ID_MAX, &id))
		return cli_error("emit: ID '%s': expected %d to %d (IDs below %d are reserved)", id_s,
				 RLOG_ID_RAW_U8, RLOG_ID_MAX, RLOG_ID_RAW_U8);
	size_t hl = strlen(hex);
	if (hl % 2 != 0 || hl / 2 > RLOG_MAX_PAYLOAD)
		return cli_error("emit: --payload: expected an even number of hex digits, at most "
				 "65535 bytes");
	static uint8_t payload[RLOG_MAX_PAYLOAD];
	for (size_t i = 0; i < hl / 2; i++) {
		int hi = hex_value((unsigned char)hex[2 * i]), lo = hex_value((unsigned char)hex[2 * i + 1]);
		if (hi < 0 || lo < 0)
			return cli_error("emit: --payload: '%c%c' is not a hex byte", hex[2 * i],
					 hex[2 * i + 1]);
		payload[i] = (uint8_t)(hi << 4 | lo);
	}
	if (ring != NULL)
		return emit_ring(ring, (unsigned)id, flagged, (uint16_t)flag, payload, hl / 2, count);
	int err = rlog_attach(name);
	if (cli_session_refused("emit", name, err))
		return 1;
	if (err == -EINVAL)
		return cli_error("emit: invalid session name '%s'", name);
	if (err == -ENOENT)
		return cli_error("emit: no session named '%s'", name);
	if (err < 0)
		return cli_error("emit: %s: %s", name, strerror(-err));
	uint64_t written = 0, lost = 0, off = 0;
	for (uint64_t i = 0; i < count; i++) {
		int r = flagged ? rlog_write_flagged((unsigned)id, (uint16_t)flag, payload, hl / 2)
				: rlog_write((unsigned)id, payload, hl / 2);
		if (r == 1)
			written++;
		else if (r == -ENOBUFS || r == -EBUSY)
			lost++;
		else if (r == 0)
			off++;
		else {
			rlog_detach();
			if (r == -EINVAL)
				return cli_error("emit: ID %llu is not one an application may write: "
						 "1024 to 16383, or 16 to 25 (32 to 38 are ringlog's own)",
						 (unsigned long long)id);
			if (r == -EMSGSIZE)
				return cli_error("emit: %s: an event of %zu payload bytes does not fit in "
						 "one of the session's buffers (ringlog query %s: "
						 "buffer_size)", name, hl / 2, name);
			return cli_error("emit: %s", strerror(-r));
		}
	}
	rlog_detach();
	printf("emitted: %llu\nwritten: %llu\nlost: %llu\n", (unsigned long long)(written + lost),
	       (unsigned long long)written, (unsigned long long)lost);
	if (off)
		return cli_error("emit: %s: %llu events not recorded: the session is paused or "
				 "stopping", name, (unsigned long long)off);
	return 0;
}
