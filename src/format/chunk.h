/*
 * chunk.h - the chunk: the unit a multi-host sink publishes (Kafka, NATS
 * JetStream) and a collector reads back, encoded and decoded in one place
 * (docs/FORMAT.md, "Chunks").  A header naming the host (a 128-bit id and
 * its name), the session, the chunk's place in the session's sequence
 * (0, 1, 2, ... without gaps), the time range and the counts it carries,
 * then whole blocks exactly as a log file holds them:
 *
 *   +0   magic "RLOGCHNK"     +48  event_bytes    +96  host_name_len  u8
 *   +8   version 2.0          +56  lost_events    +97  session_name_len u8
 *   +12  header_size          +64  data_size      +98  reserved       u16
 *   +16  seq                  +72  block_count    +100 crc32 (CRC-32C of the
 *   +24  first_time           +76  flags               header, this field 0)
 *   +32  last_time            +80  host_id[16]    +104 run_id
 *   +40  events               +112 events_before  +120 event_bytes_before
 *   +128 blocks_before        +136 host name, session name, zeros to header_size
 *   header_size: the blocks (block header, data), data_size bytes
 *
 * A chunk with RLOG_CHUNK_FLAG_METADATA starts with block 0 (the
 * LOG_MARKER) and the metadata copies, so that a consumer that starts
 * there decodes it alone (FORMAT.md says when a sink sets it).  The
 * decoder takes untrusted bytes: it reads nothing out of bounds and says
 * in words what is wrong.
 */
#ifndef RLOG_FORMAT_CHUNK_H
#define RLOG_FORMAT_CHUNK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RLOG_CHUNK_MAGIC "RLOGCHNK"   /* 8 bytes, no NUL */
#define RLOG_CHUNK_VERSION_MAJOR 2
#define RLOG_CHUNK_VERSION_MINOR 0
#define RLOG_CHUNK_HEADER_MIN 136     /* the fixed part: struct rlog_chunk_header */
#define RLOG_CHUNK_FLAG_METADATA 0x1u /* starts with block 0 and the metadata copies */
#define RLOG_CHUNK_FLAG_FINAL 0x2u    /* the session's last: block 0 only, its LOG_MARKER refined */
#define RLOG_CHUNK_META_EVERY 64      /* a METADATA chunk at least once in this many */

/* The fixed part of a chunk's header, little-endian (docs/FORMAT.md,
 * "struct rlog_chunk_header"); the names follow it. */
struct rlog_chunk_header {
	char magic[8];             /* RLOG_CHUNK_MAGIC */
	uint16_t version_major;    /* RLOG_CHUNK_VERSION_MAJOR: a reader refuses another */
	uint16_t version_minor;    /* RLOG_CHUNK_VERSION_MINOR: fields a reader may ignore */
	uint32_t header_size;      /* bytes before the first block: 136 + the names, to 8 */
	uint64_t seq;              /* the chunk's number in its session: 0, 1, 2, ... */
	uint64_t first_time;       /* ticks of its earliest thread record (0: none) */
	uint64_t last_time;        /* ticks of its latest thread record (0: none) */
	uint64_t events;           /* application events in its thread blocks */
	uint64_t event_bytes;      /* their record bytes */
	uint64_t lost_events;      /* the events of its DATA_LOSS records */
	uint64_t data_size;        /* bytes of blocks after the header */
	uint32_t block_count;      /* blocks after the header */
	uint32_t flags;            /* RLOG_CHUNK_FLAG_* */
	uint8_t host_id[16];       /* the host's id (its machine id, or --host-id) */
	uint8_t host_name_len;     /* bytes of host name at +136 */
	uint8_t session_name_len;  /* bytes of session name after it (1 to RLOG_NAME_MAX) */
	uint16_t reserved;         /* 0 */
	uint32_t crc32;            /* CRC-32C of header_size bytes, this field as 0 */
	/* 2.0: which run of the session, and what the chunks before this one
	 * (seq 0 to seq - 1, those published) carried, so that a collector
	 * tells a restarted session from a duplicate and counts a gap exactly. */
	uint64_t run_id;           /* drawn at random when the session starts; never 0 */
	uint64_t events_before;    /* application events in the run's chunks before this one */
	uint64_t event_bytes_before; /* their record bytes */
	uint64_t blocks_before;    /* thread blocks in them */
};
_Static_assert(sizeof(struct rlog_chunk_header) == RLOG_CHUNK_HEADER_MIN,
	       "the fixed chunk header is 136 bytes");

/* A chunk decoded: its header, its names (NUL-terminated here), and where
 * its blocks are in the bytes decoded. */
struct rlog__chunk {
	struct rlog_chunk_header h;
	char host_name[256];
	char session_name[256];
	const uint8_t *blocks;     /* data_size bytes of whole blocks */
};

/* A chunk being built: its bytes, the header first (written by
 * rlog__chunk_finish). */
struct rlog__chunk_writer {
	uint8_t *buf;
	size_t len, cap;
	size_t header_size;
	struct rlog_chunk_header h;
	bool timed;                /* first_time and last_time hold */
};

/*
 * Starts a chunk of session session_name on host host_name (host_id, 16
 * bytes), number seq, with flags (RLOG_CHUNK_FLAG_*).  Returns 0, -EINVAL
 * (a name empty or longer than 255 bytes) or -ENOMEM.
 */
int rlog__chunk_begin(struct rlog__chunk_writer *w, const uint8_t host_id[16],
		      const char *host_name, const char *session_name, uint64_t seq,
		      uint32_t flags);

/*
 * Appends a whole block (its 48-byte header and the data it says) at p,
 * size bytes, and adds its records to the counts and the time range (the
 * application events and times of a thread block, the DATA_LOSS events
 * of any block).  Returns 0, -EBADMSG (not one whole, sane block) or
 * -ENOMEM.
 */
int rlog__chunk_add_block(struct rlog__chunk_writer *w, const uint8_t *p, size_t size);

/* Writes the header (counts, data_size, block_count, crc32).  Returns the
 * chunk's bytes (valid until the writer is freed or begun again) and their
 * number in *len. */
const uint8_t *rlog__chunk_finish(struct rlog__chunk_writer *w, size_t *len);

void rlog__chunk_writer_free(struct rlog__chunk_writer *w);

/*
 * Decodes the n bytes at p as one chunk: the header (magic, version,
 * sizes, names, checksum) and every block's header (magic, sanity, that
 * it fits; block_count and data_size must match what is there).  Its
 * blocks' checksums are the reader's to check, as in a file.  Returns 0,
 * -EPROTO (another major version) or -EBADMSG; on failure err (errlen
 * bytes) says what is wrong and where.
 */
int rlog__chunk_decode(const uint8_t *p, size_t n, struct rlog__chunk *out, char *err,
		       size_t errlen);

/*
 * The next block of a decoded chunk: *off is the cursor (0 to start).
 * Returns 1 with *blk and *size set, or 0 after the last one.
 */
int rlog__chunk_next_block(const struct rlog__chunk *c, size_t *off, const uint8_t **blk,
			   size_t *size);

#endif
