/*
 * region_abi.h - the shared-memory layouts: the session region (region ABI
 * version RLOG_SHM_ABI_VERSION) and the per-user wake registry.
 *
 * An ABI between ringlog's own producer library and its daemon (and the
 * CLI that reads a live region), not installed: no public function takes
 * a region.  docs/FORMAT.md documents it byte by byte for other
 * implementations; every struct is static-asserted to those sizes and
 * offsets, and tests/test_abi.c checks the same numbers against that
 * document.  Change a layout only together with RLOG_SHM_ABI_VERSION and
 * docs/FORMAT.md.  The file layouts are in <ringlog/format.h>.
 */
#ifndef RLOG_REGION_ABI_H
#define RLOG_REGION_ABI_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "ringlog/format.h"

/* ------------------------------------------------------------------ */
/* Shared-memory session region                                        */
/* ------------------------------------------------------------------ */

#define RLOG_SHM_MAGIC         0x314d4853474f4c52ull /* "RLOGSHM1" */
#define RLOG_SHM_ABI_VERSION   7
#define RLOG_SHM_PREFIX        "/ringlog."   /* shm_open name = prefix + lower-case name */
#define RLOG_NAME_MAX          64
#define RLOG_PATH_MAX          1024

/* Session states (rlog_shm_header.state). */
#define RLOG_STATE_CREATING  0  /* header not ready: producers stay away */
#define RLOG_STATE_ACTIVE    1
#define RLOG_STATE_STOPPING  2  /* daemon draining; producers no-op */
#define RLOG_STATE_STOPPED   3  /* final statistics valid; region unlinked */
#define RLOG_STATE_FAILED    4  /* daemon could not start; see the daemon log */

/*
 * Log file modes (rlog_shm_header.log_file_mode): ETW's LogFileMode.  One
 * of SEQUENTIAL, CIRCULAR and NEWFILE for the file (or NO_FILE), plus
 * PREALLOCATE and REAL_TIME; OVERWRITE is a buffer policy.
 */
#define RLOG_MODE_SEQUENTIAL  0x0000u /* one file, front to back; stops at max_file_size */
#define RLOG_MODE_CIRCULAR    0x0001u /* one file that wraps within max_file_size */
#define RLOG_MODE_NEWFILE     0x0002u /* a new file (log_file's %d = 1, 2, ...) at max_file_size */
#define RLOG_MODE_PREALLOCATE 0x0004u /* the file is allocated to max_file_size up front */
#define RLOG_MODE_REAL_TIME   0x0008u /* deliver to real-time consumers (ringlog tail) */
#define RLOG_MODE_NO_FILE     0x0010u /* no log file: real-time consumers only */
#define RLOG_MODE_OVERWRITE   0x0100u /* flight recorder: a full pool reuses the oldest buffer */

/*
 * Statistics the daemon publishes (relaxed stores; readers may see a
 * mixture of two passes while the session runs; exact after STOPPED).
 */
struct rlog_shm_stats {
	_Atomic uint64_t events_written;   /* application records written to the file */
	_Atomic uint64_t bytes_written;    /* record bytes of those */
	_Atomic uint64_t buffers_written;  /* thread blocks written to the file */
	_Atomic uint64_t events_lost;      /* total, every cause (final at STOPPED) */
	_Atomic uint64_t bytes_lost;       /* total, every cause (final at STOPPED) */
	_Atomic uint64_t log_buffers_lost; /* blocks the file could not take (ETW LogBuffersLost) */
	_Atomic uint64_t corrupt_buffers;  /* buffers that failed validation */
	_Atomic uint64_t file_bytes;       /* bytes in the log file */
	_Atomic uint64_t wakeups;          /* fill-event wake-ups the daemon received */
	_Atomic uint64_t passes;           /* drain passes */
	_Atomic uint64_t realtime_buffers_lost; /* blocks a real-time consumer missed (ETW) */
	_Atomic uint64_t file_index;       /* NEWFILE: the number of the file being written */
	_Atomic uint64_t events_overwritten; /* overwrite mode: events reused before delivery
	                                        (part of events_lost) */
	_Atomic uint64_t events_discarded; /* a flight recorder's events no snapshot took,
	                                      dropped at stop (part of events_lost) */
	_Atomic uint64_t counter_samples;  /* counter sampling passes */
	_Atomic uint64_t counter_records;  /* COUNTER records written */
};
_Static_assert(sizeof(struct rlog_shm_stats) == 128, "stats are 128 bytes");

/* A name for one bit of the enable mask (a category), declared by an
 * attached process; the first name declared for a bit stays. */
struct rlog_shm_category {
	_Atomic uint32_t state;    /* RLOG_CATEGORY_*: claimed by CAS FREE -> WRITING */
	char name[28];             /* NUL-padded; 1..27 characters of [a-z0-9_.-] */
};
_Static_assert(sizeof(struct rlog_shm_category) == 32, "category entry is 32 bytes");

#define RLOG_CATEGORY_FREE    0
#define RLOG_CATEGORY_WRITING 1  /* being named (a process that dies here leaves it so) */
#define RLOG_CATEGORY_SET     2  /* name valid (stored with release) */

struct rlog_shm_header {
	/* +0: identity and geometry, written once by the creator before it
	 * stores magic (release), never changed after. */
	_Atomic uint64_t magic;    /* RLOG_SHM_MAGIC, stored last by the creator (release) */
	uint32_t abi_version;      /* RLOG_SHM_ABI_VERSION */
	uint32_t header_size;      /* sizeof(struct rlog_shm_header) */
	uint64_t region_size;      /* bytes in the whole region */
	uint32_t buffer_size;      /* bytes per buffer (BufferSize) */
	uint32_t buffer_count;     /* capacity: descriptors and buffers the region has room for */
	uint32_t slot_count;       /* producer slots (and process entries) */
	uint32_t min_buffers;      /* MinimumBuffers: the pool's size at start */
	uint64_t desc_offset;      /* -> struct rlog_shm_desc[buffer_count] */
	uint64_t slot_offset;      /* -> struct rlog_shm_slot[slot_count] */
	uint64_t free_offset;      /* -> _Atomic uint64_t free bitmap[(buffer_count+63)/64] */
	uint64_t buffers_offset;   /* -> buffer_count * buffer_size bytes, page aligned */
	/* +72: clock, as in the LOG_MARKER; tick_source and log_file are set by
	 * the creator, the rest by the daemon before it makes the session
	 * ACTIVE (release). */
	uint64_t tick_freq_hz;
	uint64_t sync_ticks;
	uint64_t sync_realtime_ns;
	uint64_t sync_monotonic_ns;
	uint32_t tick_source;      /* RLOG_TICK_* */
	uint32_t log_file_mode;    /* RLOG_MODE_* */
	uint32_t high_water_pct;   /* % of the pool in use at which a producer wakes the daemon */
	uint32_t daemon_pid;       /* capture daemon (LoggerThreadId) */
	uint64_t proc_offset;      /* -> struct rlog_shm_proc[slot_count] */
	/* +128 */
	char name[RLOG_NAME_MAX + 8];      /* display name, NUL-terminated */
	char log_file[RLOG_PATH_MAX];      /* absolute path of the log file (NEWFILE: with %d) */
	uint64_t max_file_size;            /* MaximumFileSize in bytes; 0: no limit */
	uint32_t age_limit;                /* AgeLimit in minutes: accepted, not used (as ETW) */
	uint32_t counter_count;            /* entries of the counter table (RLOG_SHM_COUNTERS) */
	uint64_t ctl_offset;               /* -> struct rlog_shm_ctl (requests: snapshots) */
	uint64_t counter_offset;           /* -> struct rlog_shm_counter[counter_count] */
	/* +1256: the counters' live properties (`ringlog update`), read by the
	 * daemon at every pass */
	_Atomic uint64_t counter_mask;     /* the counters sampled: RLOG_CTR_BIT_* bits */
	_Atomic uint32_t counter_period_ms;/* sampling period */
	/* +1268: written by producers, rarely (once per buffer, overwrite mode only) */
	_Atomic uint32_t ow_cursor;        /* where the search for a buffer to reuse starts */
	/* +1272: written by the daemon */
	_Atomic uint32_t counter_next_id;  /* the next counter_id to give; 0: none given yet */
	uint32_t drain_threads;            /* DrainThreads: the daemon's drain threads; 0: default */
	/* +1280: read by every producer on every event: alone on its line */
	_Atomic uint64_t enable_mask;      /* 0 pauses the session; bit n enables category n */
	uint8_t pad1[56];
	/* +1344: control words */
	_Atomic uint32_t state;            /* RLOG_STATE_*; futex for `ringlog stop` */
	_Atomic uint32_t fill_waiting;     /* fSetEvent: 1 while the daemon sleeps; its futex */
	_Atomic uint32_t stop_requested;   /* set by `ringlog stop` */
	_Atomic uint32_t flush_requested;  /* flush requests made (each `ringlog flush` adds 1) */
	_Atomic uint64_t procs_attached;   /* process entries ever claimed (fetch_add) */
	_Atomic uint64_t procs_refused;    /* processes that found no free entry (fetch_add) */
	_Atomic uint32_t stop_wait_pid;    /* the stop sequence waits for this producer; 0: none */
	_Atomic uint32_t stop_wait_tid;    /* its thread (0: a process gate) */
	_Atomic uint32_t stop_wait_what;   /* RLOG_WAIT_* */
	_Atomic uint32_t flush_done;       /* the last flush request served; futex for `ringlog flush` */
	_Atomic uint32_t number_of_buffers;/* NumberOfBuffers: buffers in the pool now (grown by CAS) */
	_Atomic uint32_t max_buffers;      /* MaximumBuffers: the pool grows up to this (<= buffer_count) */
	_Atomic uint32_t flush_timer_ms;   /* FlushTimer: drain partial buffers this often; 0: only full */
	_Atomic uint32_t wake_counted;     /* 1: start counted the session in the wake registry */
	/* +1408 */
	struct rlog_shm_stats stats;
	/* +1536 */
	char last_error[256];      /* daemon's last error, NUL-terminated; "" if none */
	/* +1792 */
	struct rlog_shm_category categories[64]; /* names of the enable mask's bits */
	/* +3840 */
	_Atomic uint32_t enable_names_seq; /* seqlock of enable_names: odd while written */
	char enable_names[252];    /* category names asked for (comma-separated, NUL-terminated)
	                              that no process had declared; the daemon enables each
	                              as soon as one does */
};
_Static_assert(sizeof(struct rlog_shm_header) == 4096, "session header is one page");
_Static_assert(offsetof(struct rlog_shm_header, name) == 128, "name at +128");
_Static_assert(offsetof(struct rlog_shm_header, ctl_offset) == 1240, "request page offset at +1240");
_Static_assert(offsetof(struct rlog_shm_header, counter_mask) == 1256, "counter properties at +1256");
_Static_assert(offsetof(struct rlog_shm_header, ow_cursor) == 1268, "ow_cursor at +1268");
_Static_assert(offsetof(struct rlog_shm_header, counter_next_id) == 1272, "next id at +1272");
_Static_assert(offsetof(struct rlog_shm_header, enable_mask) == 1280, "mask at +1280");
_Static_assert(offsetof(struct rlog_shm_header, state) == 1344, "control at +1344");
_Static_assert(offsetof(struct rlog_shm_header, stats) == 1408, "stats at +1408");
_Static_assert(offsetof(struct rlog_shm_header, last_error) == 1536, "last_error at +1536");
_Static_assert(offsetof(struct rlog_shm_header, categories) == 1792, "categories at +1792");
_Static_assert(offsetof(struct rlog_shm_header, enable_names) == 3844, "enable_names at +3844");

/* Buffer states (rlog_shm_desc.state). */
#define RLOG_BUF_FREE   0  /* in the free bitmap */
#define RLOG_BUF_OWNED  1  /* a producer thread writes it */
#define RLOG_BUF_FULL   2  /* handed to the daemon */
#define RLOG_BUF_TAKING 3  /* overwrite mode: a producer took it from FULL and is
                              making it its own (the daemon leaves it alone) */

/*
 * One descriptor per buffer.  The owning producer writes every field but
 * state-after-FULL; the daemon reads them and, when the buffer is drained,
 * sets state FREE and its bit in the free bitmap.
 */
struct rlog_shm_desc {
	_Atomic uint32_t state;     /* RLOG_BUF_* */
	_Atomic uint32_t write_off; /* committed bytes (release-stored per event) */
	uint32_t pid;               /* owner process */
	uint32_t tid;               /* owner thread */
	uint32_t slot;              /* owner's producer slot */
	_Atomic uint32_t gen;       /* bumped at every take: which contents the buffer holds */
	uint64_t seq;               /* this slot's buffer sequence: 0, 1, 2, ... */
	uint64_t base_time;         /* 64-bit ticks before the first record */
	uint64_t lost_events[2];    /* owner's cumulative losses at take: [0] no buffer, [1] nested */
	uint64_t lost_bytes[2];
	/* +72: written by the owner when it hands the buffer over (before
	 * FULL, release) */
	uint32_t events;            /* application events in the buffer */
	uint32_t event_bytes;       /* their record bytes */
	uint64_t last_time;         /* 64-bit ticks of the owner's last record in it */
	_Atomic uint32_t meta_end;  /* end of the last metadata record written in it (owner) */
	/* +92: written by the daemon (overwrite protocol, docs/FORMAT.md) */
	_Atomic uint32_t reader;    /* 1 while the daemon reads the buffer: no producer takes it */
	_Atomic uint32_t meta_seen; /* the daemon has its metadata up to this offset */
	_Atomic uint32_t delivered_events; /* events of it the daemon delivered (file or snapshot) */
	_Atomic uint32_t delivered_bytes;  /* their record bytes */
	uint8_t pad[128 - 108];
};
_Static_assert(sizeof(struct rlog_shm_desc) == 128, "descriptor is 128 bytes");

/* What the stop sequence waits for (rlog_shm_header.stop_wait_what). */
#define RLOG_WAIT_NONE   0
#define RLOG_WAIT_WRITE  1  /* a thread inside a write (its slot's busy flag) */
#define RLOG_WAIT_GATE   2  /* a process counting a loss without a slot (its entry's gate) */

/* Producer slot states. */
#define RLOG_SLOT_FREE    0
#define RLOG_SLOT_ACTIVE  1
#define RLOG_SLOT_EXITED  2  /* thread gone; daemon reports final losses, then frees */

/*
 * One slot per producer thread: the first cache line is written by its
 * thread only; the second by producers that overwrite the thread's buffers
 * (overwrite mode, atomic adds).
 */
struct rlog_shm_slot {
	_Atomic uint32_t state;       /* RLOG_SLOT_*; claimed by CAS FREE -> ACTIVE */
	_Atomic uint32_t busy;        /* 1 while the thread is inside a write */
	uint32_t pid;
	uint32_t tid;
	_Atomic uint64_t lost_events[2]; /* cumulative: [0] no buffer, [1] nested */
	_Atomic uint64_t lost_bytes[2];
	_Atomic uint64_t buffers_taken;  /* next descriptor seq */
	_Atomic uint32_t taking;         /* buffer index + 1 from before its bit's CAS to OWNED, else 0 */
	_Atomic uint32_t claimer;        /* pid of the process claiming it, stamped (CAS 0 -> pid)
	                                    before the state's CAS; 0 once the daemon frees it */
	/* +64: overwrite mode, cumulative, added by the producers that took
	 * this thread's full buffers (fetch_add) */
	_Atomic uint64_t ow_events;      /* events overwritten before the daemon delivered them */
	_Atomic uint64_t ow_bytes;       /* their record bytes */
	_Atomic uint64_t ow_buffers;     /* buffers of the thread overwritten */
	_Atomic uint64_t ow_last_time;   /* the latest last_time of those buffers (ticks; CAS max) */
	uint8_t pad[32];                 /* 0 */
};
_Static_assert(sizeof(struct rlog_shm_slot) == 128, "slot is two cache lines");

/* Process entry states. */
#define RLOG_PROC_FREE    0
#define RLOG_PROC_ACTIVE  1
#define RLOG_PROC_EXITED  2  /* detached or exited; the daemon reports its losses, then frees it */
#define RLOG_PROC_REAPING 3  /* the daemon is freeing it (transient) */

/*
 * One entry per attached process (slot_count of them): where a thread with
 * no slot counts its lost events, under the entry's gate, which the stop
 * sequence waits on; and who is attached (pid, start time) for the
 * daemon's liveness checks.  Claimed by CAS FREE -> ACTIVE.
 */
struct rlog_shm_proc {
	_Atomic uint32_t state;          /* RLOG_PROC_* */
	_Atomic uint32_t gate;           /* threads inside a loss count here (fetch_add/sub) */
	_Atomic uint32_t pid;            /* owner process; 0 while being claimed */
	_Atomic uint32_t claimer;        /* pid of the process claiming it, stamped (CAS 0 -> pid)
	                                    before the state's CAS; 0 once the daemon frees it */
	_Atomic uint64_t start_time;     /* owner's start, /proc/PID/stat field 22; 0: unknown */
	_Atomic uint64_t lost_events[2]; /* cumulative: [0] no slot, [1] nested while unbound */
	_Atomic uint64_t lost_bytes[2];
	uint64_t reserved1;              /* 0 */
};
_Static_assert(sizeof(struct rlog_shm_proc) == 64, "process entry is one cache line");

/* Requests to the daemon (rlog_shm_ctl.kind). */
#define RLOG_CTL_SNAPSHOT 1  /* write the buffers to a file now, or when a trigger fires */
#define RLOG_CTL_SINK 2      /* add a multi-host sink (`ringlog update --sink`): path holds
                                "HOSTID BUFFER CHUNK URL" (docs/FORMAT.md, "Request page") */

/* rlog_shm_ctl.flags of a SNAPSHOT request. */
#define RLOG_SNAP_SINCE_LAST 0x01u /* only what no earlier snapshot held */
#define RLOG_SNAP_ON_LOSS    0x02u /* arm: take it at the first loss from now on */
#define RLOG_SNAP_ON_EVENT   0x04u /* arm: take it when an event with event_id is written */
#define RLOG_SNAP_FLAG       0x08u /* ... and with the flag word event_flag (FLAGGED) */
#define RLOG_SNAP_FORCE      0x10u /* replace an existing file */
#define RLOG_SNAP_DISARM     0x20u /* drop the armed trigger */

/* rlog_shm_ctl.trigger */
#define RLOG_TRIGGER_NONE   0
#define RLOG_TRIGGER_ARMED  1  /* waiting for its loss or event */
#define RLOG_TRIGGER_FIRED  2  /* fired; the snapshot is taken after_ms later */

/*
 * The system events a session records (`ringlog start/update --system`,
 * docs/SESSIONS.md): in the request page, for the header has no room.  A
 * live property, as counter_mask: `ringlog update` changes it while the
 * daemon runs, and the daemon reads it (rlog__sys_props_read) at every
 * pass.  Its fields go together (a pid list with its count), so they are
 * read and written under a seqlock (src/common/seqlock.h): writers take
 * turns by CAS of seq from even to odd, store the fields (release), then
 * store seq + 1 (release); a reader loads seq (acquire), the fields
 * (acquire), then seq again, and retries while it was odd or has changed.
 */
#define RLOG_SYS_PIDS_MAX   120   /* processes a --system-pid list holds */
#define RLOG_SYS_OPT_FOLLOW 0x1u  /* --follow: the attached processes and their children too */

struct rlog_shm_sys {
	_Atomic uint32_t seq;        /* seqlock of the fields below but recording: odd while
	                                one writes */
	_Atomic uint32_t options;    /* RLOG_SYS_OPT_* */
	_Atomic uint64_t flags;      /* the system events selected: RLOG_SYS_* bits
	                                (src/common/sysflags.h); 0: none */
	_Atomic uint32_t profile_hz; /* the sampled profile's rate (RLOG_SYS_PROFILE) */
	_Atomic uint32_t npids;      /* entries of pids; 0: every process of the machine */
	_Atomic uint64_t recording;  /* the flags whose sources the daemon has open now (the
	                                daemon only; outside the seqlock) */
	_Atomic uint32_t pids[RLOG_SYS_PIDS_MAX]; /* --system-pid: the processes traced */
};
_Static_assert(sizeof(struct rlog_shm_sys) == 512, "system event properties are 512 bytes");

/*
 * One page of requests from the CLI to the daemon, and their answers.  A
 * requester takes the lock (CAS 0 -> its pid; a dead holder's lock may be
 * taken over), writes the request, adds 1 to req_seq (release) and wakes
 * the daemon (fill_waiting), then waits for done_seq to reach req_seq
 * (futex) and reads the answer before it lets go of the lock.
 */
struct rlog_shm_ctl {
	_Atomic uint32_t lock;      /* the requester's pid; 0: free */
	_Atomic uint32_t req_seq;   /* requests made */
	uint32_t kind;              /* RLOG_CTL_* */
	uint32_t flags;             /* RLOG_SNAP_* */
	uint32_t event_id;          /* ON_EVENT: the event ID (16..16383) */
	uint32_t event_flag;        /* ON_EVENT with FLAG: the flag word (0..65535) */
	uint32_t after_ms;          /* a trigger's snapshot is taken this long after it fires */
	uint32_t reserved0;         /* 0 */
	char path[RLOG_PATH_MAX];   /* the snapshot file: an absolute path, NUL-terminated */
	/* +1056: written by the daemon */
	_Atomic uint32_t done_seq;  /* the last request answered; futex */
	int32_t status;             /* its result: 0 or -errno */
	_Atomic uint32_t trigger;   /* RLOG_TRIGGER_* */
	_Atomic uint32_t snapshots; /* snapshot files written (or failed); futex */
	/* +1072: the last snapshot written (or failed: last_status) */
	int32_t last_status;        /* 0 or -errno */
	uint32_t drain_running;     /* the daemon's drain threads running, its own
	                               included (fewer than asked if no more could be
	                               created); 0: not said (an older daemon) */
	uint64_t last_events;       /* events in it */
	uint64_t last_lost;         /* events its DATA_LOSS records count */
	uint64_t last_bytes;        /* file bytes */
	char message[256];          /* why the request or the last snapshot failed; "" if not */
	char last_path[RLOG_PATH_MAX]; /* the file of the last snapshot */
	uint8_t pad[4096 - 1104 - 256 - RLOG_PATH_MAX - sizeof(struct rlog_shm_sys) - 64 - 64];
	/* +3456: a multi-host sink's statistics (Kafka, NATS; docs/FORMAT.md,
	 * "Chunks"), written by the daemon at each loop. */
	_Atomic uint64_t sink_chunks_acked; /* chunks the engine acknowledged */
	_Atomic uint64_t sink_bytes_acked;  /* their bytes */
	_Atomic uint64_t sink_events_acked; /* their application events */
	_Atomic uint64_t sink_chunks_queued;/* chunks handed over, not yet acknowledged */
	_Atomic uint64_t sink_bytes_queued; /* their bytes */
	_Atomic uint64_t sink_retries;      /* requests the client library sent again */
	_Atomic uint64_t sink_chunks_lost;  /* chunks dropped (the buffer full, or at stop) */
	_Atomic uint64_t sink_events_lost;  /* their application events (DATA_LOSS cause SINK) */
	/* +3520 */
	struct rlog_shm_sys sys;    /* the system events (creator, `ringlog update`) */
	/* +4032: system events (docs/FORMAT.md, "System events"), written by
	 * the daemon after each poll; sys_handed_over (the kernel's own
	 * counts) at stop, when it is sys_written + sys_lost + sys_filtered. */
	_Atomic uint64_t sys_written;      /* system events written */
	_Atomic uint64_t sys_lost;         /* lost in the kernel (DATA_LOSS cause KERNEL) */
	_Atomic uint64_t sys_filtered;     /* of processes outside the selection, dropped */
	_Atomic uint64_t sys_handed_over;  /* at stop: the events' counts */
	_Atomic uint64_t sys_loss_records; /* DATA_LOSS records written */
	_Atomic uint64_t sys_bytes;        /* record bytes of the events written */
	/* +4080: the rundown's records (process_rundown, thread_rundown,
	 * image_load), which the daemon makes from /proc, not the kernel's
	 * rings: written, and lost (what the walk found that no memory held). */
	_Atomic uint64_t sys_rundown_written;
	_Atomic uint64_t sys_rundown_lost;
};
_Static_assert(sizeof(struct rlog_shm_ctl) == 4096, "request page is one page");
_Static_assert(offsetof(struct rlog_shm_ctl, sys) == 3520, "system events at +3520");
_Static_assert(offsetof(struct rlog_shm_ctl, sink_chunks_acked) == 3456, "sink statistics at +3456");
_Static_assert(offsetof(struct rlog_shm_ctl, sys_written) == 4032, "system statistics at +4032");

/*
 * The counter table: RLOG_SHM_COUNTERS entries at counter_offset, one per
 * application counter (rlog_counter_register), one cache line each, so
 * that counters of different threads never share a line.  An attached
 * process claims an entry (CAS FREE -> WRITING), stores its start time and
 * pid, the name, value 0, then state SET (release); from then on it adds
 * to value, and the daemon samples it.  The daemon frees the entries of
 * dead processes after their last sample.
 */
struct rlog_shm_counter {
	_Atomic uint32_t state;       /* RLOG_COUNTER_* */
	_Atomic uint32_t pid;         /* owner process; 0 while being claimed */
	_Atomic uint64_t start_time;  /* owner's start, /proc/PID/stat field 22; 0: unknown */
	_Atomic uint64_t value;       /* the counter: the application adds to it */
	char name[40];                /* 1..39 bytes, NUL-terminated */
};
_Static_assert(sizeof(struct rlog_shm_counter) == 64, "counter entry is one cache line");

#define RLOG_SHM_COUNTERS      256 /* entries in the counter table */
#define RLOG_COUNTER_NAME_MAX  39  /* longest application counter name */
#define RLOG_COUNTER_FREE      0
#define RLOG_COUNTER_WRITING   1   /* being claimed (a process that dies here leaves it so) */
#define RLOG_COUNTER_SET       2   /* name and owner valid (stored with release) */

/*
 * counter_mask: which counters the daemon samples (docs/FORMAT.md, "The
 * counter sources").  Bit RLOG_CTR_BIT_APP: the application counters;
 * RLOG_CTR_BIT_PROC + k: the process figure k (minflt, majflt, nvcsw,
 * nivcsw, utime, stime); RLOG_CTR_BIT_PERF + k and RLOG_CTR_BIT_SYSTEM + k:
 * the performance counter k (dtlb-load-misses, itlb-load-misses,
 * cache-misses, branch-misses, instructions, cycles, page-faults,
 * context-switches, cpu-migrations) of the attached processes, and of the
 * whole system.
 */
#define RLOG_CTR_BIT_APP       0
#define RLOG_CTR_BIT_PROC      1
#define RLOG_CTR_BIT_PERF      8
#define RLOG_CTR_BIT_SYSTEM    24
#define RLOG_COUNTER_PERIOD_MS 100 /* default counter_period_ms */

/* ------------------------------------------------------------------ */
/* The wake registry (late attach)                                     */
/* ------------------------------------------------------------------ */

#define RLOG_WAKE_MAGIC    0x454b41574752ull /* "RGWAKE\0\0" */
#define RLOG_WAKE_VERSION  2
#define RLOG_WAKE_PREFIX   "/ringlog-wake-v2."  /* shm_open name = prefix + decimal uid */
#define RLOG_WAKE_WORDS    256

/*
 * One per user: count[h] is the number of active sessions whose name
 * hashes to h, and mask[h] is ~0 while it is not 0, else 0.  A process
 * waiting for a session that does not exist yet reads its name's mask as
 * its enable mask on every write (src/common/wake.h): all categories
 * pass once a session of that hash is active, none before.
 */
struct rlog_wake_registry {
	_Atomic uint64_t magic;        /* RLOG_WAKE_MAGIC, stored last by the creator (release) */
	uint32_t version;              /* RLOG_WAKE_VERSION */
	uint32_t words;                /* RLOG_WAKE_WORDS */
	uint8_t reserved[48];          /* 0 */
	_Atomic uint64_t mask[RLOG_WAKE_WORDS];  /* ~0 while count is not 0, else 0 */
	_Atomic uint32_t count[RLOG_WAKE_WORDS]; /* active sessions per name hash */
	_Atomic uint16_t starts[RLOG_WAKE_WORDS]; /* sessions started per name hash, mod 2^16 */
	uint8_t pad[4096 - 64 - 14 * RLOG_WAKE_WORDS]; /* 0 */
};
_Static_assert(sizeof(struct rlog_wake_registry) == 4096, "wake registry is one page");


#endif /* RLOG_REGION_ABI_H */
