/*
 * test_abi.c - the layouts in include/ringlog/format.h (the files) and
 *   src/common/region_abi.h (the session region) against docs/FORMAT.md.
 *
 * FORMAT.md is the ABI document; this test reads it (path in the
 * environment variable RINGLOG_FORMAT_MD, or argv[1]) and parses its
 * machine-readable tables (described at its end):
 *
 *   #... struct rlog_NAME             starts a structure's section
 *   | +OFF | SIZE | field | ... |     one field (FIELD[N] for arrays)
 *   Total: N bytes                    sizeof the structure
 *   | `RLOG_X` | VALUE | ... |         a constant (decimal, 0x hex, "string")
 *
 * and checks, naming the field or constant on every failure:
 *   - every documented field exists in the structure with that offset and
 *     size, and every field below is documented;
 *   - each documented structure is tiled by its rows and has the right size;
 *   - every documented constant exists below with that value, and every
 *     constant below is documented.
 * The tables below are the C side: offsetof/sizeof of every member.  Each
 * structure's rows must tile it too, so a member added to a header without a
 * row here fails the test.
 */
#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "region_abi.h"
#include "ringlog/ring.h"
#include "record.h"
#include "daemon/journal.h"
#include "daemon/sink_realtime.h"
#include "format/chunk.h"
#include "shm.h"
#include "sysflags.h"
#include "md_table.h"
#include "tap.h"

/* ------------------------------------------------------------------ */
/* The C side                                                          */
/* ------------------------------------------------------------------ */

struct c_field {
	const char *strct;
	const char *field;
	size_t off, size;
	int seen; /* documented */
};

#define F(s, f) { #s, #f, offsetof(struct s, f), sizeof(((struct s *)0)->f), 0 }

static struct c_field c_fields[] = {
	F(rlog_log_marker, tick_freq_hz),
	F(rlog_log_marker, sync_ticks),
	F(rlog_log_marker, sync_realtime_ns),
	F(rlog_log_marker, sync_monotonic_ns),
	F(rlog_log_marker, tick_source),
	F(rlog_log_marker, buffer_size),
	F(rlog_log_marker, buffer_count),
	F(rlog_log_marker, clock_esterror_us),
	F(rlog_log_marker, clock_maxerror_us),
	F(rlog_log_marker, session_name),

	F(rlog_data_loss, events),
	F(rlog_data_loss, bytes),
	F(rlog_data_loss, cause),
	F(rlog_data_loss, reserved),

	F(rlog_counter_delta, counter_id),
	F(rlog_counter_delta, flags),
	F(rlog_counter_delta, seq),
	F(rlog_counter_delta, delta),
	F(rlog_counter_delta, value),

	F(rlog_counter_name, counter_id),
	F(rlog_counter_name, source),
	F(rlog_counter_name, unit),
	F(rlog_counter_name, name_len),
	F(rlog_counter_name, flags),

	F(rlog_data_loss_blocks, loss),
	F(rlog_data_loss_blocks, blocks),

	F(rlog_file_header, magic),
	F(rlog_file_header, version_major),
	F(rlog_file_header, version_minor),
	F(rlog_file_header, header_size),
	F(rlog_file_header, created_realtime_ns),
	F(rlog_file_header, flags),
	F(rlog_file_header, marker_crc32),
	F(rlog_file_header, reserved),
	F(rlog_file_header, marker),

	F(rlog_block_header, magic),
	F(rlog_block_header, header_size),
	F(rlog_block_header, flags),
	F(rlog_block_header, seq),
	F(rlog_block_header, pid),
	F(rlog_block_header, tid),
	F(rlog_block_header, base_time),
	F(rlog_block_header, data_size),
	F(rlog_block_header, record_count),
	F(rlog_block_header, crc32),
	F(rlog_block_header, reserved),

	F(rlog_shm_stats, events_written),
	F(rlog_shm_stats, bytes_written),
	F(rlog_shm_stats, buffers_written),
	F(rlog_shm_stats, events_lost),
	F(rlog_shm_stats, bytes_lost),
	F(rlog_shm_stats, log_buffers_lost),
	F(rlog_shm_stats, corrupt_buffers),
	F(rlog_shm_stats, file_bytes),
	F(rlog_shm_stats, wakeups),
	F(rlog_shm_stats, passes),
	F(rlog_shm_stats, realtime_buffers_lost),
	F(rlog_shm_stats, file_index),
	F(rlog_shm_stats, events_overwritten),
	F(rlog_shm_stats, events_discarded),
	F(rlog_shm_stats, counter_samples),
	F(rlog_shm_stats, counter_records),

	F(rlog_shm_header, magic),
	F(rlog_shm_header, abi_version),
	F(rlog_shm_header, header_size),
	F(rlog_shm_header, region_size),
	F(rlog_shm_header, buffer_size),
	F(rlog_shm_header, buffer_count),
	F(rlog_shm_header, slot_count),
	F(rlog_shm_header, min_buffers),
	F(rlog_shm_header, desc_offset),
	F(rlog_shm_header, slot_offset),
	F(rlog_shm_header, free_offset),
	F(rlog_shm_header, buffers_offset),
	F(rlog_shm_header, tick_freq_hz),
	F(rlog_shm_header, sync_ticks),
	F(rlog_shm_header, sync_realtime_ns),
	F(rlog_shm_header, sync_monotonic_ns),
	F(rlog_shm_header, tick_source),
	F(rlog_shm_header, log_file_mode),
	F(rlog_shm_header, high_water_pct),
	F(rlog_shm_header, daemon_pid),
	F(rlog_shm_header, proc_offset),
	F(rlog_shm_header, name),
	F(rlog_shm_header, log_file),
	F(rlog_shm_header, max_file_size),
	F(rlog_shm_header, age_limit),
	F(rlog_shm_header, counter_count),
	F(rlog_shm_header, ctl_offset),
	F(rlog_shm_header, counter_offset),
	F(rlog_shm_header, counter_mask),
	F(rlog_shm_header, counter_period_ms),
	F(rlog_shm_header, ow_cursor),
	F(rlog_shm_header, counter_next_id),
	F(rlog_shm_header, drain_threads),
	F(rlog_shm_header, enable_mask),
	F(rlog_shm_header, pad1),
	F(rlog_shm_header, state),
	F(rlog_shm_header, fill_waiting),
	F(rlog_shm_header, stop_requested),
	F(rlog_shm_header, flush_requested),
	F(rlog_shm_header, procs_attached),
	F(rlog_shm_header, procs_refused),
	F(rlog_shm_header, stop_wait_pid),
	F(rlog_shm_header, stop_wait_tid),
	F(rlog_shm_header, stop_wait_what),
	F(rlog_shm_header, flush_done),
	F(rlog_shm_header, number_of_buffers),
	F(rlog_shm_header, max_buffers),
	F(rlog_shm_header, flush_timer_ms),
	F(rlog_shm_header, wake_counted),
	F(rlog_shm_header, stats),
	F(rlog_shm_header, last_error),
	F(rlog_shm_header, categories),
	F(rlog_shm_header, enable_names_seq),
	F(rlog_shm_header, enable_names),

	F(rlog_shm_category, state),
	F(rlog_shm_category, name),

	F(rlog_wake_registry, magic),
	F(rlog_wake_registry, version),
	F(rlog_wake_registry, words),
	F(rlog_wake_registry, reserved),
	F(rlog_wake_registry, mask),
	F(rlog_wake_registry, count),
	F(rlog_wake_registry, starts),
	F(rlog_wake_registry, pad),
	F(rlog_rt_end, magic),
	F(rlog_rt_end, version),
	F(rlog_rt_end, state),
	F(rlog_rt_end, stream_bytes),
	F(rlog_rt_end, blocks_whole),
	F(rlog_rt_end, lost_blocks),
	F(rlog_rt_end, lost_events),
	F(rlog_rt_end, lost_bytes),
	F(rlog_rt_end, last_time),
	F(rlog_chunk_header, magic),
	F(rlog_chunk_header, version_major),
	F(rlog_chunk_header, version_minor),
	F(rlog_chunk_header, header_size),
	F(rlog_chunk_header, seq),
	F(rlog_chunk_header, first_time),
	F(rlog_chunk_header, last_time),
	F(rlog_chunk_header, events),
	F(rlog_chunk_header, event_bytes),
	F(rlog_chunk_header, lost_events),
	F(rlog_chunk_header, data_size),
	F(rlog_chunk_header, block_count),
	F(rlog_chunk_header, flags),
	F(rlog_chunk_header, host_id),
	F(rlog_chunk_header, host_name_len),
	F(rlog_chunk_header, session_name_len),
	F(rlog_chunk_header, reserved),
	F(rlog_chunk_header, crc32),
	F(rlog_chunk_header, run_id),
	F(rlog_chunk_header, events_before),
	F(rlog_chunk_header, event_bytes_before),
	F(rlog_chunk_header, blocks_before),

	F(rlog_shm_desc, state),
	F(rlog_shm_desc, write_off),
	F(rlog_shm_desc, pid),
	F(rlog_shm_desc, tid),
	F(rlog_shm_desc, slot),
	F(rlog_shm_desc, gen),
	F(rlog_shm_desc, seq),
	F(rlog_shm_desc, base_time),
	F(rlog_shm_desc, lost_events),
	F(rlog_shm_desc, lost_bytes),
	F(rlog_shm_desc, events),
	F(rlog_shm_desc, event_bytes),
	F(rlog_shm_desc, last_time),
	F(rlog_shm_desc, meta_end),
	F(rlog_shm_desc, reader),
	F(rlog_shm_desc, meta_seen),
	F(rlog_shm_desc, delivered_events),
	F(rlog_shm_desc, delivered_bytes),
	F(rlog_shm_desc, pad),

	F(rlog_shm_slot, state),
	F(rlog_shm_slot, busy),
	F(rlog_shm_slot, pid),
	F(rlog_shm_slot, tid),
	F(rlog_shm_slot, lost_events),
	F(rlog_shm_slot, lost_bytes),
	F(rlog_shm_slot, buffers_taken),
	F(rlog_shm_slot, taking),
	F(rlog_shm_slot, claimer),
	F(rlog_shm_slot, ow_events),
	F(rlog_shm_slot, ow_bytes),
	F(rlog_shm_slot, ow_buffers),
	F(rlog_shm_slot, ow_last_time),
	F(rlog_shm_slot, pad),

	F(rlog_data_loss_range, loss),
	F(rlog_data_loss_range, blocks),
	F(rlog_data_loss_range, first_time),
	F(rlog_data_loss_range, last_time),

	F(rlog_shm_ctl, lock),
	F(rlog_shm_ctl, req_seq),
	F(rlog_shm_ctl, kind),
	F(rlog_shm_ctl, flags),
	F(rlog_shm_ctl, event_id),
	F(rlog_shm_ctl, event_flag),
	F(rlog_shm_ctl, after_ms),
	F(rlog_shm_ctl, reserved0),
	F(rlog_shm_ctl, path),
	F(rlog_shm_ctl, done_seq),
	F(rlog_shm_ctl, status),
	F(rlog_shm_ctl, trigger),
	F(rlog_shm_ctl, snapshots),
	F(rlog_shm_ctl, last_status),
	F(rlog_shm_ctl, drain_running),
	F(rlog_shm_ctl, last_events),
	F(rlog_shm_ctl, last_lost),
	F(rlog_shm_ctl, last_bytes),
	F(rlog_shm_ctl, message),
	F(rlog_shm_ctl, last_path),
	F(rlog_shm_ctl, pad),
	F(rlog_shm_ctl, sink_chunks_acked),
	F(rlog_shm_ctl, sink_bytes_acked),
	F(rlog_shm_ctl, sink_events_acked),
	F(rlog_shm_ctl, sink_chunks_queued),
	F(rlog_shm_ctl, sink_bytes_queued),
	F(rlog_shm_ctl, sink_retries),
	F(rlog_shm_ctl, sink_chunks_lost),
	F(rlog_shm_ctl, sink_events_lost),
	F(rlog_shm_ctl, sys),

	F(rlog_shm_sys, seq),
	F(rlog_shm_sys, options),
	F(rlog_shm_sys, flags),
	F(rlog_shm_sys, profile_hz),
	F(rlog_shm_sys, npids),
	F(rlog_shm_sys, recording),
	F(rlog_shm_sys, pids),
	F(rlog_shm_ctl, sys_written),
	F(rlog_shm_ctl, sys_lost),
	F(rlog_shm_ctl, sys_filtered),
	F(rlog_shm_ctl, sys_handed_over),
	F(rlog_shm_ctl, sys_loss_records),
	F(rlog_shm_ctl, sys_bytes),
	F(rlog_shm_ctl, sys_rundown_written),
	F(rlog_shm_ctl, sys_rundown_lost),

	F(rlog_shm_proc, state),
	F(rlog_shm_proc, gate),
	F(rlog_shm_proc, pid),
	F(rlog_shm_proc, claimer),
	F(rlog_shm_proc, start_time),
	F(rlog_shm_proc, lost_events),
	F(rlog_shm_proc, lost_bytes),
	F(rlog_shm_proc, reserved1),

	F(rlog_shm_counter, state),
	F(rlog_shm_counter, pid),
	F(rlog_shm_counter, start_time),
	F(rlog_shm_counter, value),
	F(rlog_shm_counter, name),

	/* the single ring (ringlog/ring.h) */
	F(rlog_ring, magic),
	F(rlog_ring, version),
	F(rlog_ring, header_size),
	F(rlog_ring, size),
	F(rlog_ring, min_free),
	F(rlog_ring, tick_freq_hz),
	F(rlog_ring, tick_source),
	F(rlog_ring, pid),
	F(rlog_ring, tid),
	F(rlog_ring, reserved0),
	F(rlog_ring, pad0),
	F(rlog_ring, write_off),
	F(rlog_ring, lost_events),
	F(rlog_ring, lost_bytes),
	F(rlog_ring, nested_events),
	F(rlog_ring, nested_bytes),
	F(rlog_ring, fill_signals),
	F(rlog_ring, read_cache),
	F(rlog_ring, busy),
	F(rlog_ring, pad1),
	F(rlog_ring, read_off),
	F(rlog_ring, set_event),
	F(rlog_ring, reported_lost_events),
	F(rlog_ring, reported_lost_bytes),
	F(rlog_ring, reported_nested_events),
	F(rlog_ring, reported_nested_bytes),
	F(rlog_ring, pad2),
};
#define N_FIELDS (sizeof c_fields / sizeof c_fields[0])

struct c_struct {
	const char *strct;
	size_t size;
	int seen;
};

#define S(s) { #s, sizeof(struct s), 0 }

static struct c_struct c_structs[] = {
	S(rlog_log_marker), S(rlog_data_loss),	S(rlog_file_header), S(rlog_block_header),
	S(rlog_shm_stats),  S(rlog_shm_header), S(rlog_shm_desc),    S(rlog_shm_slot),
	S(rlog_shm_proc),     S(rlog_data_loss_blocks),
	S(rlog_shm_counter),
	S(rlog_counter_delta),
	S(rlog_counter_name),
	S(rlog_shm_category),
	S(rlog_wake_registry),
	S(rlog_rt_end),
	S(rlog_chunk_header),
	S(rlog_ring),
	S(rlog_data_loss_range), S(rlog_shm_ctl), S(rlog_shm_sys),
};
#define N_STRUCTS (sizeof c_structs / sizeof c_structs[0])

struct c_const {
	const char *name;
	unsigned long long value; /* if str is NULL */
	const char *str;
	int seen;
};

#define K(c) { #c, (unsigned long long)(c), NULL, 0 }
#define KS(c) { #c, 0, c, 0 }

static struct c_const c_consts[] = {
	K(RLOG_HDR_LENGTH_MASK),
	K(RLOG_HDR_ID_SHIFT),
	K(RLOG_HDR_ID_MASK),
	K(RLOG_HDR_RESERVED_BIT),
	K(RLOG_HDR_TIMESTAMP_BIT),
	K(RLOG_MAX_PAYLOAD),

	K(RLOG_ID_INVALID),
	K(RLOG_ID_LOG_MARKER),
	K(RLOG_ID_DATA_LOSS),
	K(RLOG_ID_FLAGGED),
	K(RLOG_ID_TIME_SYNC),
	K(RLOG_ID_RAW_U8),
	K(RLOG_ID_RAW_I8),
	K(RLOG_ID_RAW_U16),
	K(RLOG_ID_RAW_I16),
	K(RLOG_ID_RAW_U32),
	K(RLOG_ID_RAW_I32),
	K(RLOG_ID_RAW_U64),
	K(RLOG_ID_RAW_I64),
	K(RLOG_ID_RAW_DOUBLE),
	K(RLOG_ID_RAW_STRING),
	K(RLOG_ID_COUNTER),
	K(RLOG_ID_EVENT_SCHEMA),
	K(RLOG_ID_THREAD_NAME),
	K(RLOG_ID_PROCESS_NAME),
	K(RLOG_ID_SPAN_BEGIN),
	K(RLOG_ID_SPAN_END),
	K(RLOG_ID_COUNTER_NAME),
	K(RLOG_ID_USER_MIN),
	K(RLOG_ID_MAX),

	K(RLOG_KIND_EVENT),
	K(RLOG_KIND_SPAN),
	K(RLOG_KIND_COUNTER),
	K(RLOG_FIELD_U8),
	K(RLOG_FIELD_U16),
	K(RLOG_FIELD_U32),
	K(RLOG_FIELD_U64),
	K(RLOG_FIELD_I8),
	K(RLOG_FIELD_I16),
	K(RLOG_FIELD_I32),
	K(RLOG_FIELD_I64),
	K(RLOG_FIELD_F64),
	K(RLOG_FIELD_BYTES),
	K(RLOG_FIELD_STRING),
	K(RLOG_SCHEMA_MAX_FIELDS),
	K(RLOG_BYTES_MAX),
	K(RLOG_STRING_MAX),
	K(RLOG_SPAN_BEGIN),
	K(RLOG_SPAN_END),

	K(RLOG_TICK_TSC),
	K(RLOG_TICK_MONOTONIC),
	K(RLOG_TICK_COUNTER),
	K(RLOG_CLOCK_ERROR_NOT_RECORDED),
	K(RLOG_CLOCK_ERROR_UNSYNC),
	K(RLOG_CLOCK_ERROR_MAX),

	K(RLOG_LOSS_NO_BUFFER),
	K(RLOG_LOSS_NESTED),
	K(RLOG_LOSS_CORRUPT),
	K(RLOG_LOSS_LOG_WRITE),
	K(RLOG_LOSS_NO_SLOT),
	K(RLOG_LOSS_REAL_TIME),
	K(RLOG_LOSS_OVERWRITTEN),
	K(RLOG_LOSS_KERNEL),
	K(RLOG_LOSS_SINK),

	K(RLOG_COUNTER_FLAG_VALUE),
	K(RLOG_COUNTER_FLAG_RESET),
	K(RLOG_COUNTER_KEY_EVERY),
	K(RLOG_COUNTER_SRC_APP),
	K(RLOG_COUNTER_SRC_PROC),
	K(RLOG_COUNTER_SRC_PERF),
	K(RLOG_COUNTER_SRC_SYSTEM),
	K(RLOG_COUNTER_UNIT_COUNT),
	K(RLOG_COUNTER_UNIT_NS),
	K(RLOG_COUNTER_INFO_USER),

	KS(RLOG_FILE_MAGIC),
	K(RLOG_FILE_VERSION_MAJOR),
	K(RLOG_FILE_VERSION_MINOR),
	K(RLOG_FILE_FLAG_MARKER),
	K(RLOG_FILE_FLAG_CIRCULAR),
	K(RLOG_FILE_FLAG_PREALLOCATED),
	K(RLOG_BLOCK_MAGIC),
	K(RLOG_BLOCK_FLAG_DAEMON),
	K(RLOG_BLOCK_FLAG_METADATA),
	K(RLOG_BLOCK_FLAG_SYSTEM),
	K(RLOG_BLOCK_DATA_MAX),

	K(RLOG_RECORD_EVENT),
	K(RLOG_RECORD_TIME_SYNC),
	K(RLOG_RECORD_METADATA),
	K(RLOG_RECORD_MARKER),
	K(RLOG_RECORD_LOSS),
	K(RLOG_RECORD_COUNTER),

	K(RLOG_SHM_MAGIC),
	K(RLOG_SHM_ABI_VERSION),
	KS(RLOG_SHM_PREFIX),
	KS(RLOG_RT_PREFIX),
	KS(RLOG_RT_END_MAGIC),
	K(RLOG_RT_END_VERSION),
	K(RLOG_RT_END_OPEN),
	K(RLOG_RT_END_FINAL),
	KS(RLOG_CHUNK_MAGIC),
	K(RLOG_CHUNK_VERSION_MAJOR),
	K(RLOG_CHUNK_VERSION_MINOR),
	K(RLOG_CHUNK_HEADER_MIN),
	K(RLOG_CHUNK_FLAG_METADATA),
	K(RLOG_CHUNK_FLAG_FINAL),
	K(RLOG_CHUNK_META_EVERY),
	KS(RLOG_JOURNAL_PREFIX),
	K(RLOG_NAME_MAX),
	K(RLOG_PATH_MAX),

	K(RLOG_STATE_CREATING),
	K(RLOG_STATE_ACTIVE),
	K(RLOG_STATE_STOPPING),
	K(RLOG_STATE_STOPPED),
	K(RLOG_STATE_FAILED),

	K(RLOG_BUF_FREE),
	K(RLOG_BUF_OWNED),
	K(RLOG_BUF_FULL),
	K(RLOG_BUF_TAKING),
	K(RLOG_CTL_SNAPSHOT),
	K(RLOG_CTL_SINK),
	K(RLOG_SNAP_SINCE_LAST),
	K(RLOG_SNAP_ON_LOSS),
	K(RLOG_SNAP_ON_EVENT),
	K(RLOG_SNAP_FLAG),
	K(RLOG_SNAP_FORCE),
	K(RLOG_SNAP_DISARM),
	K(RLOG_TRIGGER_NONE),
	K(RLOG_TRIGGER_ARMED),
	K(RLOG_TRIGGER_FIRED),
	K(RLOG_SYS_PIDS_MAX),
	K(RLOG_SYS_OPT_FOLLOW),
	K(RLOG_SYS_PROCESS),
	K(RLOG_SYS_THREAD),
	K(RLOG_SYS_IMAGE_LOAD),
	K(RLOG_SYS_PROCESS_COUNTERS),
	K(RLOG_SYS_CSWITCH),
	K(RLOG_SYS_DPC),
	K(RLOG_SYS_INTERRUPT),
	K(RLOG_SYS_SYSTEMCALL),
	K(RLOG_SYS_DISK_IO),
	K(RLOG_SYS_MEMORY_PAGE_FAULTS),
	K(RLOG_SYS_MEMORY_HARD_FAULTS),
	K(RLOG_SYS_NETWORK_TCPIP),
	K(RLOG_SYS_PROFILE),
	K(RLOG_SYS_FILE_IO),
	K(RLOG_SYS_WAKEUP),
	K(RLOG_SLOT_FREE),
	K(RLOG_SLOT_ACTIVE),
	K(RLOG_SLOT_EXITED),
	K(RLOG_MODE_SEQUENTIAL),
	K(RLOG_MODE_CIRCULAR),
	K(RLOG_MODE_NEWFILE),
	K(RLOG_MODE_PREALLOCATE),
	K(RLOG_MODE_REAL_TIME),
	K(RLOG_MODE_NO_FILE),
	K(RLOG_MODE_OVERWRITE),
	K(RLOG_CATEGORY_FREE),
	K(RLOG_CATEGORY_WRITING),
	K(RLOG_CATEGORY_SET),
	K(RLOG_WAKE_MAGIC),
	K(RLOG_WAKE_VERSION),
	KS(RLOG_WAKE_PREFIX),
	K(RLOG_WAKE_WORDS),
	K(RLOG_PROC_FREE),
	K(RLOG_PROC_ACTIVE),
	K(RLOG_PROC_EXITED),
	K(RLOG_PROC_REAPING),
	K(RLOG_WAIT_NONE),
	K(RLOG_WAIT_WRITE),
	K(RLOG_WAIT_GATE),
	K(RLOG_SHM_COUNTERS),
	K(RLOG_COUNTER_NAME_MAX),
	K(RLOG_COUNTER_FREE),
	K(RLOG_COUNTER_WRITING),
	K(RLOG_COUNTER_SET),
	K(RLOG_COUNTER_PERIOD_MS),
	K(RLOG_CTR_BIT_APP),
	K(RLOG_CTR_BIT_PROC),
	K(RLOG_CTR_BIT_PERF),
	K(RLOG_CTR_BIT_SYSTEM),

	/* geometry limits (src/common/shm.h) */
	K(RLOG_MIN_BUFFER_SIZE),
	K(RLOG_MAX_BUFFER_SIZE),
	K(RLOG_MIN_BUFFER_COUNT),
	K(RLOG_MAX_BUFFER_COUNT),
	K(RLOG_MAX_REGION_SIZE),
	K(RLOG_DEFAULT_BUFFER_SIZE),
	K(RLOG_DEFAULT_BUFFER_COUNT),
	K(RLOG_SLOTS_EXTRA),
	K(RLOG_DEFAULT_HIGH_WATER),

	/* the single ring (ringlog/ring.h) */
	K(RLOG_RING_MAGIC),
	K(RLOG_RING_VERSION),
	K(RLOG_RING_HEADER_SIZE),
	K(RLOG_RING_MIN_SIZE),
	K(RLOG_RING_MAX_SIZE),
	K(RLOG_RING_GAP),
};
#define N_CONSTS (sizeof c_consts / sizeof c_consts[0])

/* ------------------------------------------------------------------ */
/* The document side                                                   */
/* ------------------------------------------------------------------ */

#define MAX_CELLS 8

/* "+123" -> 123 */
static int parse_offset(const char *s, unsigned long long *out)
{
	if (s[0] != '+' || !isdigit((unsigned char)s[1]))
		return -EINVAL;
	return parse_number(s + 1, out);
}

/* Copies a field cell without backquotes and without an "[N]" suffix. */
static void field_name(const char *cell, char *out, size_t cap)
{
	size_t j = 0;
	for (size_t i = 0; cell[i] && cell[i] != '[' && j + 1 < cap; i++)
		if (cell[i] != '`')
			out[j++] = cell[i];
	out[j] = '\0';
}

static struct c_field *find_field(const char *s, const char *f)
{
	for (size_t i = 0; i < N_FIELDS; i++)
		if (strcmp(c_fields[i].strct, s) == 0 && strcmp(c_fields[i].field, f) == 0)
			return &c_fields[i];
	return NULL;
}

static struct c_struct *find_struct(const char *s)
{
	for (size_t i = 0; i < N_STRUCTS; i++)
		if (strcmp(c_structs[i].strct, s) == 0)
			return &c_structs[i];
	return NULL;
}

static struct c_const *find_const(const char *name)
{
	for (size_t i = 0; i < N_CONSTS; i++)
		if (strcmp(c_consts[i].name, name) == 0)
			return &c_consts[i];
	return NULL;
}

/* State of the current structure section while parsing. */
struct section {
	char strct[64];     /* "" outside a structure section */
	unsigned long long next_off; /* where the next row must start */
	int rows;
	int tiled;          /* every row started where the previous ended */
	int total_seen;
	int line;           /* heading line, for messages */
};

static void section_end(struct section *sec)
{
	if (sec->strct[0] == '\0')
		return;
	struct c_struct *cs = find_struct(sec->strct);
	if (cs == NULL) {
		ok(0, "FORMAT.md:%d documents struct %s, which the test does not know", sec->line,
		   sec->strct);
	} else {
		cs->seen = 1;
		ok(sec->total_seen, "struct %s: FORMAT.md gives its size (\"Total: N bytes\")",
		   sec->strct);
		ok(sec->rows > 0 && sec->tiled && sec->next_off == cs->size,
		   "struct %s: FORMAT.md rows tile the structure (rows end at +%llu, sizeof %zu)",
		   sec->strct, sec->next_off, cs->size);
	}
	sec->strct[0] = '\0';
}

static void parse_heading(struct section *sec, const char *line, int lineno)
{
	section_end(sec);
	const char *p = strstr(line, "struct rlog_");
	if (p == NULL)
		return;
	p += strlen("struct ");
	size_t n = 0;
	while ((isalnum((unsigned char)p[n]) || p[n] == '_') && n + 1 < sizeof sec->strct)
		n++;
	memcpy(sec->strct, p, n);
	sec->strct[n] = '\0';
	sec->next_off = 0;
	sec->rows = 0;
	sec->tiled = 1;
	sec->total_seen = 0;
	sec->line = lineno;
}

static void parse_field_row(struct section *sec, char **cells, int n, int lineno)
{
	unsigned long long off, size;
	if (n < 3 || parse_offset(cells[0], &off) < 0)
		return;
	char name[64];
	field_name(cells[2], name, sizeof name);
	if (parse_number(cells[1], &size) < 0) {
		ok(0, "FORMAT.md:%d: %s.%s: size \"%s\" is not a number", lineno, sec->strct, name,
		   cells[1]);
		return;
	}
	if (off != sec->next_off)
		sec->tiled = 0;
	sec->next_off = off + size;
	sec->rows++;
	struct c_field *cf = find_field(sec->strct, name);
	if (cf == NULL) {
		ok(0, "FORMAT.md:%d documents %s.%s, which is not a member in the headers (or not in this test)",
		   lineno, sec->strct, name);
		return;
	}
	cf->seen++;
	if (!ok(cf->off == off && cf->size == size, "%s.%s: FORMAT.md +%llu size %llu, C +%zu size %zu",
		sec->strct, name, off, size, cf->off, cf->size))
		diag("FORMAT.md:%d disagrees with the headers about %s.%s", lineno, sec->strct, name);
}

static void parse_const_row(char **cells, int n, int lineno)
{
	char name[64];
	size_t len = strlen(cells[0]);
	if (len < 3 || len - 2 >= sizeof name)
		return;
	memcpy(name, cells[0] + 1, len - 2);
	name[len - 2] = '\0';
	struct c_const *cc = find_const(name);
	if (cc == NULL) {
		ok(0, "FORMAT.md:%d documents %s, which the test does not know", lineno, name);
		return;
	}
	cc->seen++;
	if (n < 2) {
		ok(0, "FORMAT.md:%d: %s has no value cell", lineno, name);
		return;
	}
	const char *v = cells[1];
	if (cc->str) {
		/* "text" or `"text"` */
		char buf[128];
		size_t vl = strlen(v);
		if (vl >= 2 && v[0] == '`' && v[vl - 1] == '`') {
			v++;
			vl -= 2;
		}
		int good = vl >= 2 && v[0] == '"' && v[vl - 1] == '"' && vl - 2 < sizeof buf;
		if (good) {
			memcpy(buf, v + 1, vl - 2);
			buf[vl - 2] = '\0';
		} else {
			buf[0] = '\0';
		}
		ok(good && strcmp(buf, cc->str) == 0, "%s: FORMAT.md %s, code \"%s\"", name, cells[1],
		   cc->str);
		return;
	}
	unsigned long long val;
	if (parse_number(v, &val) < 0) {
		ok(0, "FORMAT.md:%d: %s: value \"%s\" is not a number", lineno, name, v);
		return;
	}
	ok(val == cc->value, "%s: FORMAT.md %s (%llu), code %llu", name, v, val, cc->value);
}

static int check_document(FILE *f)
{
	struct section sec = { .strct = "" };
	char line[4096];
	int lineno = 0, in_code = 0;
	while (fgets(line, sizeof line, f)) {
		lineno++;
		if (strncmp(line, "```", 3) == 0) {
			in_code = !in_code;
			continue;
		}
		if (in_code)
			continue;
		if (line[0] == '#') {
			parse_heading(&sec, line, lineno);
			continue;
		}
		unsigned long long total;
		if (sec.strct[0] && sscanf(line, "Total: %llu bytes", &total) == 1) {
			struct c_struct *cs = find_struct(sec.strct);
			sec.total_seen = 1;
			if (cs)
				ok(cs->size == total, "sizeof(struct %s): FORMAT.md %llu, C %zu",
				   sec.strct, total, cs->size);
			continue;
		}
		char *cells[MAX_CELLS];
		int n = split_row(line, cells, MAX_CELLS);
		if (n == 0)
			continue;
		if (cells[0][0] == '`' && strncmp(cells[0] + 1, "RLOG_", 5) == 0 &&
		    cells[0][strlen(cells[0]) - 1] == '`')
			parse_const_row(cells, n, lineno);
		else if (sec.strct[0] && cells[0][0] == '+')
			parse_field_row(&sec, cells, n, lineno);
	}
	section_end(&sec);
	return lineno;
}

/* The C tables must cover every member: their rows tile each structure. */
static void check_c_tables(void)
{
	for (size_t s = 0; s < N_STRUCTS; s++) {
		size_t next = 0;
		int tiled = 1;
		for (size_t i = 0; i < N_FIELDS; i++) {
			if (strcmp(c_fields[i].strct, c_structs[s].strct) != 0)
				continue;
			if (c_fields[i].off != next)
				tiled = 0;
			next = c_fields[i].off + c_fields[i].size;
		}
		ok(tiled && next == c_structs[s].size,
		   "test_abi.c lists every member of struct %s (a new member needs a row here)",
		   c_structs[s].strct);
	}
}

int main(int argc, char **argv)
{
	const char *path = getenv("RINGLOG_FORMAT_MD");
	if ((path == NULL || *path == '\0') && argc > 1)
		path = argv[1];
	if (path == NULL || *path == '\0')
		path = "docs/FORMAT.md";
	FILE *f = fopen(path, "r");
	BAIL_IF(f == NULL, "cannot open %s (set RINGLOG_FORMAT_MD): %s", path, strerror(errno));
	diag("checking %s against the C layouts", path);

	check_c_tables();
	int lines = check_document(f);
	fclose(f);
	ok(lines > 0, "FORMAT.md is not empty (%d lines)", lines);

	for (size_t i = 0; i < N_STRUCTS; i++)
		ok(c_structs[i].seen, "struct %s has a section in FORMAT.md", c_structs[i].strct);
	for (size_t i = 0; i < N_FIELDS; i++)
		ok(c_fields[i].seen == 1, "%s.%s is documented once in FORMAT.md (%d rows)",
		   c_fields[i].strct, c_fields[i].field, c_fields[i].seen);
	for (size_t i = 0; i < N_CONSTS; i++)
		ok(c_consts[i].seen == 1, "%s is documented once in FORMAT.md (%d rows)",
		   c_consts[i].name, c_consts[i].seen);

	/* Spot checks of numbers FORMAT.md states in prose. */
	ASSERT_EQ(rlog__record_size(1024, 4, false), 8);
	ASSERT_EQ(rlog__record_size(1024, 8, true), 16);
	ASSERT_EQ(rlog__record_size(RLOG_ID_FLAGGED, 4, true), 16);
	ASSERT_EQ(rlog__record_size(RLOG_ID_RAW_STRING, 5, true), 16);
	ASSERT_EQ(rlog__record_size(RLOG_ID_FLAGGED, RLOG_MAX_PAYLOAD, true), 65548);
	ASSERT_EQ(rlog__hdr_make(1024, 8, true), 0x84000008u);
	ASSERT_EQ(rlog__hdr_make(RLOG_ID_FLAGGED, 4, true), 0x80030004u);
	ASSERT_EQ(rlog__hdr_make(RLOG_ID_RAW_STRING, 5, true), 0x80190005u);
	ASSERT_EQ(rlog__hdr_make(RLOG_ID_TIME_SYNC, 8, true), 0x80040008u);
	ASSERT_EQ(memcmp(&(uint64_t){ RLOG_SHM_MAGIC }, "RLOGSHM1", 8), 0);
	ASSERT_EQ(memcmp(&(uint32_t){ RLOG_BLOCK_MAGIC }, "RLBK", 4), 0);
	ASSERT_EQ(memcmp(&(uint32_t){ RLOG_RING_MAGIC }, "RLRG", 4), 0);
	ASSERT_EQ(rlog_ring_record_size(16, 0), 24); /* the ring example: 16 + 8 bytes */
	return done_testing();
}
