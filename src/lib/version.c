/*
 * version.c - the library's version at run time (include/ringlog.h,
 * "Version"): the numbers of include/ringlog/version.h as they were when
 * the library was built, not when the program was.
 */
#include "ringlog.h"

unsigned int rlog_version(void)
{
	return RLOG_VERSION_HEX;
}

const char *rlog_version_string(void)
{
	return RLOG_VERSION_STRING;
}
