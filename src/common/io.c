#include "io.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "inuse.h"

/* Pieces per writev: Linux's IOV_MAX (UIO_MAXIOV), which POSIX leaves to
 * <limits.h> under XSI only. */
#define IOV_BATCH 1024

int rlog__write_all(int fd, const void *data, size_t n, size_t *done)
{
	struct iovec iov = { .iov_base = (void *)data, .iov_len = n };
	return rlog__writev_all(fd, &iov, 1, done);
}

int rlog__writev_all(int fd, struct iovec *iov, size_t n, size_t *done)
{
	size_t off = 0, i = 0;
	int err = 0;
	while (i < n) {
		if (iov[i].iov_len == 0) {
			i++;
			continue;
		}
		int cnt = n - i < IOV_BATCH ? (int)(n - i) : IOV_BATCH;
		ssize_t w = writev(fd, iov + i, cnt);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			break;
		}
		if (w == 0) {
			err = -EIO;
			break;
		}
		off += (size_t)w;
		/* Step over what was written: whole pieces, then part of one. */
		for (size_t k = (size_t)w; k > 0;) {
			if (k >= iov[i].iov_len) {
				k -= iov[i].iov_len;
				iov[i].iov_len = 0;
				i++;
			} else {
				iov[i].iov_base = (char *)iov[i].iov_base + k;
				iov[i].iov_len -= k;
				k = 0;
			}
		}
	}
	if (done)
		*done = off;
	return err;
}

void rlog__output_discard(const char *path)
{
	struct stat st;
	if (lstat(path, &st) == 0 && S_ISREG(st.st_mode))
		unlink(path);
}

int rlog__create_output_at(int dirfd, const char *path, unsigned flags, bool *created)
{
	/* Two rounds: a link removed in the first is created over in the
	 * second; a link planted again meanwhile is refused (-EEXIST). */
	for (int round = 0; round < 2; round++) {
		int fd = openat(dirfd, path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
				0600);
		if (fd >= 0) {
			/* 0600 even under a umask that takes the owner's bits. */
			if (fchmod(fd, 0600) < 0) {
				int err = -errno;
				close(fd);
				unlinkat(dirfd, path, 0);
				return err;
			}
			if (created)
				*created = true;
			return fd;
		}
		if (errno != EEXIST || !(flags & RLOG_OUT_FORCE))
			return -errno;
		struct stat st;
		if (fstatat(dirfd, path, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			if (errno == ENOENT)
				continue; /* gone meanwhile: create it */
			return -errno;
		}
		if (S_ISLNK(st.st_mode)) {
			/* Replace the link, never write through it: its target
			 * may be any file its planter wants overwritten. */
			if (unlinkat(dirfd, path, 0) < 0 && errno != ENOENT)
				return -errno;
			continue;
		}
		bool reg = S_ISREG(st.st_mode);
		if (reg && (st.st_nlink > 1 || st.st_uid != geteuid())) {
			/* A file with another name (a planted hard link) or
			 * another owner is replaced like a link: truncating it
			 * would write into a file that is not only ours. */
			if (unlinkat(dirfd, path, 0) < 0 && errno != ENOENT)
				return -errno;
			continue;
		}
		/* A session's live log file is never overwritten: its data
		 * would be gone while its statistics still count it. */
		if (reg && !(flags & RLOG_OUT_OWN) && rlog__log_file_session(&st))
			return -ETXTBSY;
		fd = openat(dirfd, path,
			    O_WRONLY | O_NOFOLLOW | O_CLOEXEC |
				    (reg && !(flags & RLOG_OUT_KEEP) ? O_TRUNC : 0));
		if (fd < 0)
			return -errno;
		if (reg && fchmod(fd, 0600) < 0) {
			int err = -errno;
			close(fd);
			return err;
		}
		if (created)
			*created = false;
		return fd;
	}
	return -EEXIST;
}

const char *rlog__output_strerror(int err)
{
	return err == ETXTBSY ? "it is the log file of a session (stop or recover that session "
				"first, or choose another file)"
			      : strerror(err);
}

int rlog__create_output(const char *path, unsigned flags, bool *created)
{
	return rlog__create_output_at(AT_FDCWD, path, flags, created);
}

int rlog__file_name(const char *pattern, uint64_t index, char *out, size_t n)
{
	size_t k = 0;
	for (const char *p = pattern; *p; p++) {
		char num[24];
		const char *s = p;
		size_t len = 1;
		if (p[0] == '%' && p[1] == '%') {
			p++;
		} else if (p[0] == '%' && p[1] == 'd') {
			snprintf(num, sizeof num, "%llu", (unsigned long long)index);
			s = num;
			len = strlen(num);
			p++;
		}
		if (k + len >= n)
			return -ENAMETOOLONG;
		memcpy(out + k, s, len);
		k += len;
	}
	out[k] = '\0';
	return 0;
}
