/*
 * hosts.c - several hosts' files for dump, stats and convert (hosts.h).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "buf.h"
#include "hosts.h"

bool cli_hosts_wanted(const char *const *args, int nargs)
{
	struct stat st;
	return nargs > 1 || (nargs == 1 && stat(args[0], &st) == 0 && S_ISDIR(st.st_mode));
}

int cli_hosts_open(struct cli_hosts *h, const char *cmd, const char *const *args, int nargs,
		   unsigned flags)
{
	const char *bad = NULL;
	memset(h, 0, sizeof *h);
	int n = rlog__multi_paths((char *const *)args, (size_t)nargs, &h->paths, &bad);
	if (n < 0)
		return cli_error("%s %s: %s", cmd, bad,
				 n == -ENOENT ? "no such file, or a directory without .rlog files"
					      : strerror(-n));
	h->n = (size_t)n;
	size_t bi;
	int rc = rlog__multi_open(&h->m, h->paths, h->n, flags, &bi);
	if (rc < 0) {
		int st = cli_error("%s %s: %s", cmd, h->paths[bi], rlog_reader_strerror(rc));
		rlog__multi_paths_free(h->paths, h->n);
		memset(h, 0, sizeof *h);
		return st;
	}
	return 0;
}

int cli_hosts_damage(const struct cli_hosts *h, const char *cmd)
{
	int status = 0;
	for (size_t i = 0; i < h->m.n; i++) {
		size_t nd = rlog_reader_damage_count(h->m.h[i].r);
		for (size_t k = 0; k < nd; k++) {
			struct rlog_damage dm;
			if (rlog_reader_damage(h->m.h[i].r, k, &dm) == 0)
				status = cli_error("%s %s: %s", cmd, h->m.h[i].path, dm.message);
		}
	}
	return status;
}

void cli_hosts_close(struct cli_hosts *h)
{
	rlog__multi_close(&h->m);
	rlog__multi_paths_free(h->paths, h->n);
	memset(h, 0, sizeof *h);
}

const char *cli_host_clock(const struct rlog_reader_info *info, char *buf, size_t n)
{
	uint16_t est = info->clock_esterror_us, max = info->clock_maxerror_us;
	if (max == RLOG_CLOCK_ERROR_NOT_RECORDED)
		snprintf(buf, n, "not recorded");
	else if (max == RLOG_CLOCK_ERROR_UNSYNC)
		snprintf(buf, n, "unknown: not synchronized");
	else /* The clamped values are bounds from below (FORMAT.md). */
		snprintf(buf, n, "\u00b1%s%u us (max %s%u us)", est == 65535 ? ">=" : "", est,
			 max == RLOG_CLOCK_ERROR_MAX ? ">=" : "", max);
	return buf;
}

void cli_host_clock_json(struct rlog__buf *b, const struct rlog_reader_info *info)
{
	uint16_t max = info->clock_maxerror_us;
	if (max == RLOG_CLOCK_ERROR_NOT_RECORDED)
		rlog__buf_lit(b, ",\"clock_synchronized\":null,\"clock_error_ns\":null,"
			      "\"clock_max_error_ns\":null");
	else if (max == RLOG_CLOCK_ERROR_UNSYNC)
		rlog__buf_lit(b, ",\"clock_synchronized\":false,\"clock_error_ns\":null,"
			      "\"clock_max_error_ns\":null");
	else
		/* In ns as numbers: 0 us is 0, not "0000" (not JSON). */
		rlog__buf_printf(b, ",\"clock_synchronized\":true,\"clock_error_ns\":%llu,"
				 "\"clock_max_error_ns\":%llu",
				 (unsigned long long)info->clock_esterror_us * 1000u,
				 (unsigned long long)max * 1000u);
}
