/*
 * inuse.h - whether a file is a session's log file: what an output
 * overwritten with --force must never be (docs/SESSIONS.md, "Output
 * files").
 */
#ifndef RLOG_COMMON_INUSE_H
#define RLOG_COMMON_INUSE_H

#include <stdbool.h>
#include <sys/stat.h>

/*
 * Whether st (its device and inode) is the log file of a session of this
 * user whose region exists (running, or its daemon dead and the session
 * not yet recovered): the file named by the region's log_file, or for a
 * newfile session one of its files 1 to the one being written.  false if
 * it cannot tell (no /dev/shm).
 */
bool rlog__log_file_session(const struct stat *st);

#endif
