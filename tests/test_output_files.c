/*
 * test_output_files - every file ringlog writes is created 0600 whatever
 * the umask (022 here), with O_EXCL and O_NOFOLLOW: a symbolic link
 * planted at an output path is refused without --force and replaced with
 * it, and its target is never written.  Checked for start -o, newfile's
 * later files (a link planted for file 2), snapshot -o, recover -o,
 * convert -o (Chrome JSON and a CTF directory) and ring-flush -o.
 */
#include "harness.h"

#include <sys/stat.h>

#include "tap.h"

#define VICTIM "victim\n"

static char target[256], link_path[256];

/* A link at link_path to target, which holds VICTIM, mode 0644. */
static void plant(void)
{
	unlink(link_path);
	unlink(target);
	FILE *f = fopen(target, "w");
	BAIL_IF(f == NULL || fputs(VICTIM, f) < 0 || fclose(f) != 0, "cannot write %s", target);
	BAIL_IF(chmod(target, 0644) < 0 || symlink(target, link_path) < 0, "cannot plant %s",
		link_path);
}

/* The target still holds VICTIM, mode 0644. */
static void untouched(const char *what)
{
	char buf[64] = "";
	FILE *f = fopen(target, "r");
	size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
	if (f)
		fclose(f);
	buf[n] = '\0';
	struct stat st;
	ok(strcmp(buf, VICTIM) == 0 && stat(target, &st) == 0 && (st.st_mode & 07777) == 0644,
	   "%s: the link's target is untouched", what);
}

/* path is a regular file (not a link) of mode 0600. */
static void private_file(const char *path, const char *what)
{
	struct stat st;
	int rc = lstat(path, &st);
	ok(rc == 0 && S_ISREG(st.st_mode) && (st.st_mode & 07777) == 0600,
	   "%s: %s is a regular file of mode 0600 (mode %04o, %s)", what, path,
	   rc == 0 ? (unsigned)(st.st_mode & 07777) : 0u,
	   rc == 0 && S_ISLNK(st.st_mode) ? "a link" : "not a link");
}

static void still_link(const char *what)
{
	struct stat st;
	ok(lstat(link_path, &st) == 0 && S_ISLNK(st.st_mode), "%s: the link is left as it was",
	   what);
}

/* A command given the link without --force (its result in *r): refused
 * with the one line want, the link and its target as they were. */
static void refused(const char *what, const struct h_run *r, const char *want)
{
	ok(r->status == 1, "%s: refused (status %d)", what, r->status);
	ASSERT_STREQ(r->err, want);
	still_link(what);
	untouched(what);
}

static void start_file(void)
{
	struct h_run r;
	char name[64], line[512];
	snprintf(name, sizeof name, "%s", h_session("ostart"));
	plant();
	h_ringlog(&r, "start", name, "-o", link_path, NULL);
	snprintf(line, sizeof line, "ringlog: start: %s: file exists (use --force to overwrite)\n",
		 link_path);
	refused("start", &r, line);

	h_ringlog(&r, "start", name, "-o", link_path, "--force", NULL);
	ASSERT_EQ(r.status, 0);
	h_ringlog(&r, "emit", name, "1024", "--count", "10", NULL);
	ASSERT_EQ(r.status, 0);
	h_ringlog(&r, "stop", name, NULL);
	ASSERT_EQ(r.status, 0);
	ASSERT_EQ_U64(h_kv(r.out, "events_written"), 10);
	private_file(link_path, "start --force");
	untouched("start --force");
	struct h_summary sum;
	h_summarize(link_path, &sum);
	ASSERT_EQ_U64(sum.events, 10);

	/* convert -o, from that file. */
	char out[256];
	snprintf(out, sizeof out, "%s", link_path);
	snprintf(link_path, sizeof link_path, "/tmp/rlog-test-oconv-%d.json", (int)getpid());
	plant();
	h_ringlog(&r, "convert", out, "--to", "chrome", "-o", link_path, NULL);
	snprintf(line, sizeof line, "ringlog: convert: %s: file exists (use --force to overwrite)\n",
		 link_path);
	refused("convert", &r, line);
	h_ringlog(&r, "convert", out, "--to", "chrome", "-o", link_path, "--force", NULL);
	ASSERT_EQ(r.status, 0);
	private_file(link_path, "convert --force");
	untouched("convert --force");
	unlink(link_path);
	/* 0600 whatever the umask, even one that takes the owner's bits. */
	mode_t old = umask(0277);
	h_ringlog(&r, "convert", out, "--to", "chrome", "-o", link_path, NULL);
	umask(old);
	ASSERT_EQ(r.status, 0);
	private_file(link_path, "convert under umask 0277");
	unlink(link_path);

	char dir[256], file[300];
	snprintf(dir, sizeof dir, "/tmp/rlog-test-octf-%d", (int)getpid());
	h_ringlog(&r, "convert", out, "--to", "ctf", "-o", dir, NULL);
	ASSERT_EQ(r.status, 0);
	struct stat st;
	ok(lstat(dir, &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & 07777) == 0700,
	   "the CTF directory is 0700");
	snprintf(file, sizeof file, "%s/metadata", dir);
	private_file(file, "CTF metadata");
	/* Its stream file, and the directory cleaned up. */
	snprintf(line, sizeof line, "rm -rf '%s'", dir);
	char cmd[512];
	snprintf(cmd, sizeof cmd, "for f in '%s'/stream_*; do test -f \"$f\" -a ! -L \"$f\" && "
		 "test \"$(stat -c %%a \"$f\")\" = 600 || exit 1; done", dir);
	ok(system(cmd) == 0, "CTF stream files are regular files of mode 0600");
	ok(system(line) == 0, "removed %s", dir);

	/* A link planted for the CTF directory, to a directory holding a
	 * file named as a conversion's: refused, then replaced by --force. */
	char victim_dir[128];
	snprintf(victim_dir, sizeof victim_dir, "/tmp/rlog-test-ovictim-%d", (int)getpid());
	snprintf(file, sizeof file, "%s/metadata", victim_dir);
	snprintf(link_path, sizeof link_path, "%s", dir);
	snprintf(target, sizeof target, "%s/metadata", victim_dir);
	BAIL_IF(mkdir(victim_dir, 0755) < 0, "mkdir %s", victim_dir);
	plant(); /* the victim file, and a link to it at dir... */
	BAIL_IF(unlink(dir) < 0 || symlink(victim_dir, dir) < 0, "cannot plant %s", dir);
	h_ringlog(&r, "convert", out, "--to", "ctf", "-o", dir, NULL);
	snprintf(line, sizeof line, "ringlog: convert: %s: file exists (use --force to overwrite)\n",
		 dir);
	refused("convert --to ctf", &r, line);
	h_ringlog(&r, "convert", out, "--to", "ctf", "-o", dir, "--force", NULL);
	ASSERT_EQ(r.status, 0);
	ok(lstat(dir, &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & 07777) == 0700,
	   "convert --to ctf --force: the link is replaced by a directory of mode 0700");
	untouched("convert --to ctf --force");
	snprintf(cmd, sizeof cmd, "rm -rf '%s' '%s'", dir, victim_dir);
	ok(system(cmd) == 0, "removed %s and %s", dir, victim_dir);
	snprintf(target, sizeof target, "/tmp/rlog-test-victim-%d", (int)getpid());
	unlink(out);
}

static void newfile(void)
{
	struct h_run r;
	char name[64], pat[256], f1[256];
	snprintf(name, sizeof name, "%s", h_session("onew"));
	snprintf(pat, sizeof pat, "/tmp/rlog-test-onew-%d_%%d.rlog", (int)getpid());
	snprintf(f1, sizeof f1, "/tmp/rlog-test-onew-%d_1.rlog", (int)getpid());
	snprintf(link_path, sizeof link_path, "/tmp/rlog-test-onew-%d_2.rlog", (int)getpid());
	for (int force = 0; force < 2; force++) {
		plant();
		unlink(f1);
		/* 512 buffers of 16 KiB hold all 2.4 MB: nothing is lost to a
		 * daemon that drains late, and the files are 1, 2 and 3. */
		h_ringlog(&r, "start", name, "-o", pat, "--mode", "newfile", "--max-file-size", "1",
			  "--buffers", "512", force ? "--force" : NULL, NULL);
		ASSERT_EQ(r.status, 0);
		char payload[2 * 112 + 1];
		memset(payload, 'a', sizeof payload - 1);
		payload[sizeof payload - 1] = '\0';
		h_ringlog(&r, "emit", name, "1024", "--count", "20000", "--payload", payload, NULL);
		ASSERT_EQ(r.status, 0);
		ASSERT_EQ_U64(h_kv(r.out, "lost"), 0);
		h_ringlog(&r, "stop", name, NULL);
		private_file(f1, force ? "newfile --force, file 1" : "newfile, file 1");
		if (force) {
			ASSERT_EQ(r.status, 0);
			private_file(link_path, "newfile --force, file 2");
		} else {
			ASSERT_EQ(r.status, 1);
			ASSERT_CONTAINS(r.err, "creating log file 2 (it exists; start with --force to "
					       "overwrite)");
			still_link("newfile");
		}
		untouched(force ? "newfile --force" : "newfile");
		char cmd[512];
		snprintf(cmd, sizeof cmd, "rm -f /tmp/rlog-test-onew-%d_*.rlog", (int)getpid());
		ok(system(cmd) == 0, "removed the files");
	}
}

static void snapshot(void)
{
	struct h_run r;
	char name[64], line[512];
	snprintf(name, sizeof name, "%s", h_session("osnap"));
	snprintf(link_path, sizeof link_path, "/tmp/rlog-test-osnap-%d.rlog", (int)getpid());
	plant();
	h_ringlog(&r, "start", name, "--mode", "overwrite", NULL);
	ASSERT_EQ(r.status, 0);
	h_ringlog(&r, "emit", name, "1024", "--count", "10", NULL);
	ASSERT_EQ(r.status, 0);
	h_ringlog(&r, "snapshot", name, "-o", link_path, NULL);
	snprintf(line, sizeof line, "ringlog: snapshot: %s: file exists (use --force to "
		 "overwrite)\n", link_path);
	refused("snapshot", &r, line);
	h_ringlog(&r, "snapshot", name, "-o", link_path, "--force", NULL);
	ASSERT_EQ(r.status, 0);
	private_file(link_path, "snapshot --force");
	untouched("snapshot --force");
	h_ringlog(&r, "stop", name, NULL);
	ASSERT_EQ(r.status, 0);
	unlink(link_path);
}

static void recover(void)
{
	struct h_run r;
	char name[64], line[512], path[256];
	snprintf(name, sizeof name, "%s", h_session("orec"));
	snprintf(path, sizeof path, "%s", h_path("orec"));
	snprintf(link_path, sizeof link_path, "/tmp/rlog-test-orec2-%d.rlog", (int)getpid());
	plant();
	h_start(name, path, NULL, NULL);
	h_ringlog(&r, "emit", name, "1024", "--count", "10", NULL);
	ASSERT_EQ(r.status, 0);
	h_kill_daemon(name);
	h_ringlog(&r, "recover", name, "-o", link_path, NULL);
	snprintf(line, sizeof line, "ringlog: recover: %s: the file exists (--force overwrites it)\n",
		 link_path);
	refused("recover", &r, line);
	h_ringlog(&r, "recover", name, "-o", link_path, "--force", NULL);
	ASSERT_EQ(r.status, 0);
	private_file(link_path, "recover --force");
	private_file(path, "start");
	untouched("recover --force");
	struct h_summary a, b;
	h_summarize(path, &a);
	h_summarize(link_path, &b);
	ASSERT_EQ_U64(a.events + b.events, 10);
	unlink(link_path);
	unlink(path);
}

static void ring_flush(void)
{
	struct h_run r;
	char ring[128], line[512];
	snprintf(ring, sizeof ring, "/dev/shm/rlog-test-oring-%d", (int)getpid());
	snprintf(link_path, sizeof link_path, "/tmp/rlog-test-oring-%d.rlog", (int)getpid());
	unlink(ring);
	plant();
	h_ringlog(&r, "ring-flush", ring, "--create", "64", "-o", link_path, "--once", NULL);
	snprintf(line, sizeof line, "ringlog: ring-flush: %s: file exists (use --force to "
		 "overwrite)\n", link_path);
	refused("ring-flush", &r, line);
	h_ringlog(&r, "ring-flush", ring, "--create", "64", "-o", link_path, "--once", "--force",
		  NULL);
	ASSERT_EQ(r.status, 0);
	private_file(link_path, "ring-flush --force");
	untouched("ring-flush --force");
	unlink(link_path);
	unlink(ring);
}

/* A hard link to the victim, planted at the output path: --force replaces
 * it with a file of its own, never truncates the victim through it. */
static void hard_link(void)
{
	struct h_run r;
	char name[64];
	snprintf(name, sizeof name, "%s", h_session("ohard"));
	plant();
	unlink(link_path);
	BAIL_IF(link(target, link_path) < 0, "cannot plant a hard link at %s", link_path);
	h_ringlog(&r, "start", name, "-o", link_path, "--force", NULL);
	ASSERT_EQ(r.status, 0);
	h_ringlog(&r, "stop", name, NULL);
	ASSERT_EQ(r.status, 0);
	private_file(link_path, "start --force over a hard link");
	struct stat st;
	ok(stat(target, &st) == 0 && st.st_nlink == 1,
	   "start --force over a hard link: the victim keeps only its own name");
	untouched("start --force over a hard link");

	unlink(link_path);
	BAIL_IF(link(target, link_path) < 0, "cannot plant a hard link at %s", link_path);
	char ring[128];
	snprintf(ring, sizeof ring, "/dev/shm/rlog-test-ohard-%d", (int)getpid());
	unlink(ring);
	h_ringlog(&r, "ring-flush", ring, "--create", "64", "-o", link_path, "--once", "--force",
		  NULL);
	ASSERT_EQ(r.status, 0);
	private_file(link_path, "ring-flush --force over a hard link");
	untouched("ring-flush --force over a hard link");
	unlink(link_path);
	unlink(ring);
}

int main(void)
{
	umask(022);
	snprintf(target, sizeof target, "/tmp/rlog-test-victim-%d", (int)getpid());
	snprintf(link_path, sizeof link_path, "/tmp/rlog-test-olink-%d.rlog", (int)getpid());
	start_file();
	newfile();
	snapshot();
	recover();
	ring_flush();
	hard_link();
	unlink(target);
	return done_testing();
}
