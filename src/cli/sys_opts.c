/*
 * sys_opts.c - the system-event options that start and update share:
 * --system LIST, --system-pid LIST, --follow (update: --no-follow too),
 * --profile-hz N.  The parsers and the rules are src/common's
 * (sysflags_names.h, sysprops.h); this only takes argv's values to them.
 */
#include "session_print.h"

#include "args.h"
#include "cli.h"
#include "sysflags_names.h"

bool cli_sys_option(const struct cli_args *a, struct rlog__sys_props *p, uint32_t *give, int *rc)
{
	char why[512];
	int err = 0;
	*rc = 0;
	if (cli_is(a, "--system")) {
		err = rlog__sys_parse(a->value, &p->flags, why, sizeof why);
		*give |= RLOG__SYS_GIVE_FLAGS;
	} else if (cli_is(a, "--system-pid")) {
		err = rlog__sys_pids_parse(a->value, p->pids, RLOG_SYS_PIDS_MAX, &p->npids, why,
					   sizeof why);
		*give |= RLOG__SYS_GIVE_PIDS;
	} else if (cli_is(a, "--follow") || cli_is(a, "--no-follow")) {
		p->follow = cli_is(a, "--follow");
		*give |= RLOG__SYS_GIVE_FOLLOW;
	} else if (cli_is(a, "--profile-hz")) {
		err = rlog__sys_profile_hz_parse(a->value, &p->profile_hz, why, sizeof why);
		*give |= RLOG__SYS_GIVE_PROFILE_HZ;
	} else {
		return false;
	}
	if (err < 0)
		*rc = cli_error("%s: %s", a->cmd, why);
	return true;
}
