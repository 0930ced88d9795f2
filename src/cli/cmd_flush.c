/*
 * cmd_flush.c - `ringlog flush NAME`: the daemon drains every buffer,
 * partly filled ones too, into the log file; returns when that is done
 * (ETW's FlushTrace).
 */
#include <errno.h>
#include <string.h>

#include "args.h"
#include "cli.h"
#include "session/session.h"

int cmd_flush(int argc, char **argv)
{
	struct cli_args a;
	cli_args_init(&a, "flush", NULL, 1, argc, argv);
	while (cli_args_next(&a))
		;
	if (!cli_args_need(&a, 1, "session NAME"))
		return 2;
	const char *name = a.pos[0];
	int err = rlog__session_flush(name);
	if (cli_session_refused("flush", name, err))
		return 1;
	switch (err) {
	case 0:
		return 0;
	case -EINVAL:
		return cli_error("flush: invalid session name '%s'", name);
	case -ENOENT:
		return cli_error("flush: no session named '%s'", name);
	case -EPROTO:
		return cli_error("flush: %s: not a ringlog session region of this version", name);
	case -ESRCH:
		return cli_error("flush: %s: the session's daemon is not running (ringlog stop "
				 "--force %s recovers what its buffers hold)", name, name);
	case -ETIMEDOUT:
		return cli_error("flush: %s: the daemon did not flush within 30 s", name);
	}
	return cli_error("flush: %s: %s", name, strerror(-err));
}
