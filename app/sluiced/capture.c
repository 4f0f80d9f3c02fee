/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * capture.c - see every frame a running sluiced sends and receives, in pcapng.
 *
 * Two ways, both off the fast path until asked for:
 *
 *  - DPDK's multi-process capture. sluiced calls rte_pdump_init(), so dpdk-dumpcap (or
 *    dpdk-pdump) attaches to a running daemon as a secondary process and captures any port:
 *        dpdk-dumpcap --file-prefix PREFIX -i PORT -w FILE.pcapng
 *    A secondary process maps the primary's memory, which EAL can share only when it is in
 *    hugepages: with --no-huge (this project's default on hugepage-less machines) dumpcap
 *    cannot attach, and --capture below is the way.
 *
 *  - --capture FILE. Each frame is written, as the pcapng block that holds it (an Enhanced
 *    Packet Block: the frame, its port, queue, direction and a timestamp), into one byte ring
 *    of CAPTURE_BUF_BYTES; a control thread (never a worker lcore) writes the ring's blocks to
 *    FILE as they are, many at a time. Received frames are taken by an RX callback on every
 *    queue of every port. Sent frames are taken around the driver: the capture wraps each
 *    port's transmit function in ethdev's fast-path table (rte_eth_fp_ops, which
 *    rte_eth_tx_burst() calls after its TX callbacks), copies the frames before the driver
 *    sees them (it may free them) and keeps the copies of those the driver took.
 *
 * The file holds each frame as many times as the port carried it, and no other. A TX callback
 * would not do: it runs before the driver and cannot know what the driver takes, so a frame
 * the driver refused (its queue full, or a memif peer not connected yet) would be in the file
 * once per offer; the lane offers such a frame again on every poll, thousands of times while
 * a peer is slow to connect on a busy machine.
 *
 * Nor may the file lose a frame, and the writer is an ordinary thread: on a busy machine it
 * shares a core with busy-polling lcores and may not run for tens of ms while the lanes move
 * thousands of frames (the first version of this file, with a ring of 8192 mbuf copies, lost a
 * fifth of a QP test's frames that way, counted but not looked at). So the ring is large (a
 * block takes the frame's size, not an mbuf's), and a full ring never loses a frame the port
 * sends: the driver gets only the frames copied, and the lane keeps the rest and offers them
 * again, as when a NIC's queue is full (the port's tx_backlog_waits counts those polls). The
 * capture then paces the port to the writer. A received frame cannot wait, so the last
 * CAPTURE_RX_RESERVE bytes of the ring are for RX alone: a received frame finds no room only
 * when the writer has been away long enough for RX alone to fill them, and is then passed up
 * uncaptured and counted in `dropped`.
 *
 * At stop the counters are logged (sluice.capture) and sluiced_capture_report() prints them in
 * the exit report: `captured` (frames in the ring for the file), `dropped` (received frames
 * not captured, and frames the file refused), `held` (frames to send kept back, the ring full:
 * the lane offers them again), `written` (frames in the file) and `bytes` (the file's size).
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_log.h>
#include <rte_mbuf.h>
#include <rte_pdump.h>
#include <rte_spinlock.h>

#include "capture.h"

RTE_LOG_REGISTER(capture_logtype, sluice.capture, INFO);

#define CAPTURE_BUF_BYTES (64u << 20) /* the ring, a power of two: about 150k frames of 400 B */
#define CAPTURE_RX_RESERVE (CAPTURE_BUF_BYTES / 4) /* the ring's last bytes, for RX only */
#define CAPTURE_SNAPLEN 9728         /* bytes of each frame kept: a 9000 B MTU frame and more */
#define CAPTURE_WRITE_MAX (1u << 20) /* bytes per write(): the ring frees as the file grows */
#define CAPTURE_IDLE_US 1000         /* the writer's sleep when the ring is empty */
#define CAPTURE_CHUNK 64             /* frames reserved under one lock */
#define DIR_IN 1u                    /* pcapng's epb_flags direction */
#define DIR_OUT 2u

/* pcapng (draft-ietf-opsawg-pcapng): block types, options, values. */
#define PCAPNG_SHB 0x0A0D0D0Au
#define PCAPNG_IDB 0x00000001u
#define PCAPNG_EPB 0x00000006u
#define PCAPNG_BYTE_ORDER 0x1A2B3C4Du
#define PCAPNG_LINKTYPE_ETHERNET 1
#define PCAPNG_OPT_END 0
#define PCAPNG_SHB_USERAPPL 4
#define PCAPNG_IF_NAME 2
#define PCAPNG_IF_TSRESOL 9 /* value 9: timestamps in ns */
#define PCAPNG_EPB_FLAGS 2  /* bits 0-1: direction, 1 inbound, 2 outbound */
#define PCAPNG_EPB_QUEUE 6

/*
 * A block's first word in the ring: the EPB type once its producer has written it whole and
 * wants it in the file. Three more values that never reach the file: a block being written; a
 * block to skip (a frame the driver refused; its second word is its length, as in an EPB); and
 * the end of a lap (the ring's remaining bytes are unused, the next block starts at offset 0),
 * so that no block wraps and the writer hands the file whole runs of blocks.
 */
#define RING_BUSY 0u
#define RING_SKIP 0xFFFFFFFEu
#define RING_PAD 0xFFFFFFFFu

/* An EPB with its two options (flags, queue), the end of options and the trailing length. */
#define EPB_HEAD 28u /* type, length, interface, timestamp (2), captured and original length */
#define EPB_TAIL (8u + 8u + 4u + 4u)

/* A port's transmit function, wrapped (capture_tx), and its queues as the driver knows them. */
struct tx_hook {
	eth_tx_burst_t burst; /* the driver's; NULL: not wrapped */
	uint16_t port_id;
	uint16_t nb_queues;
	void *txq[SL_DP_MAX_QUEUES];
};

static struct {
	bool pdump; /* rte_pdump_init() succeeded */
	bool on;    /* --capture FILE was given and FILE opened: the report has the counters */
	int fd;
	uint8_t *buf; /* the ring, CAPTURE_BUF_BYTES */
	/* Producers reserve under the lock; head and tail count bytes since the start. */
	rte_spinlock_t lock;
	uint64_t head; /* next byte to reserve; published with a release store */
	uint64_t tail; /* next byte the writer reads; written by it (release) once in the file */
	struct sl_tsc_clock clock;
	uint64_t epoch_ns; /* CLOCK_REALTIME minus the clock's time: pcapng's time is Unix time */
	pthread_t writer;
	bool writer_running;
	volatile bool writer_stop;
	int write_errno; /* the first error of write(), logged at stop */
	char path[256];
	const struct rte_eth_rxtx_callback *rx_cb[SL_DP_MAX_PORTS][SL_DP_MAX_QUEUES];
	struct tx_hook tx[SL_DP_MAX_PORTS];
	/* Counted by the callbacks (atomic): */
	uint64_t captured; /* frames written into the ring, frames */
	uint64_t dropped;  /* frames not in the file: received with the ring full (its RX
			    * reserve used up), or in a write() that failed (the writer), frames */
	uint64_t held;     /* TX frames not handed to the driver, ring full: the lane offers them
			    * again, frames */
	/* The writer's: */
	uint64_t written; /* frames written to the file, frames */
	uint64_t bytes;   /* bytes written to the file, headers included, bytes */
} cap = {.fd = -1};

static inline uint32_t
align4(uint32_t n)
{
	return (n + 3u) & ~3u;
}

static inline uint32_t
block_len(const struct rte_mbuf *m)
{
	return EPB_HEAD + align4(RTE_MIN(m->pkt_len, (uint32_t)CAPTURE_SNAPLEN)) + EPB_TAIL;
}

/* Write frame m as an EPB at blk (block_len(m) bytes), all but its first word (see RING_BUSY). */
static void
write_epb(uint8_t *blk, uint32_t len, const struct rte_mbuf *m, uint32_t iface, uint16_t queue,
	  uint32_t dir, uint64_t ts_ns)
{
	uint32_t caplen = RTE_MIN(m->pkt_len, (uint32_t)CAPTURE_SNAPLEN), *w = (uint32_t *)blk;
	uint8_t *p = blk + EPB_HEAD;
	uint32_t left = caplen;

	w[1] = len;
	w[2] = iface;
	w[3] = (uint32_t)(ts_ns >> 32);
	w[4] = (uint32_t)ts_ns;
	w[5] = caplen;
	w[6] = m->pkt_len;
	for (const struct rte_mbuf *s = m; s != NULL && left > 0; s = s->next) {
		uint32_t n = RTE_MIN((uint32_t)s->data_len, left);

		memcpy(p, rte_pktmbuf_mtod(s, const uint8_t *), n);
		p += n;
		left -= n;
	}
	memset(p, 0, align4(caplen) - caplen);
	w = (uint32_t *)(blk + EPB_HEAD + align4(caplen));
	w[0] = PCAPNG_EPB_FLAGS | 4u << 16;
	w[1] = dir;
	w[2] = PCAPNG_EPB_QUEUE | 4u << 16;
	w[3] = queue;
	w[4] = PCAPNG_OPT_END;
	w[5] = len;
}

/* Blocks of one burst, reserved in the ring, written, then each finished or skipped. */
struct burst {
	uint64_t at[CAPTURE_CHUNK]; /* the blocks' positions */
	uint32_t len[CAPTURE_CHUNK];
	uint16_t n; /* blocks reserved */
};

/*
 * Reserve blocks for pkts[0, n) (n <= CAPTURE_CHUNK) in order while the ring has room, keeping
 * `reserve` bytes free (TX leaves the RX reserve alone), and write the frames into them
 * outside the lock; b->n says how many: the first ones.
 */
static void
reserve_and_copy(struct burst *b, uint32_t iface, uint16_t queue, struct rte_mbuf **pkts,
		 uint16_t n, uint32_t dir, uint32_t reserve)
{
	uint64_t head, tail, ts_ns;
	uint16_t k;

	for (uint16_t i = 0; i < n; i++)
		b->len[i] = block_len(pkts[i]);
	rte_spinlock_lock(&cap.lock);
	head = cap.head;
	tail = __atomic_load_n(&cap.tail, __ATOMIC_ACQUIRE);
	for (k = 0; k < n; k++) {
		uint32_t off = (uint32_t)(head & (CAPTURE_BUF_BYTES - 1));
		uint32_t pad = off + b->len[k] > CAPTURE_BUF_BYTES ? CAPTURE_BUF_BYTES - off : 0;

		if (CAPTURE_BUF_BYTES - (head - tail) < (uint64_t)pad + b->len[k] + reserve)
			break;
		if (pad) {
			*(uint32_t *)(cap.buf + off) = RING_PAD;
			head += pad;
		}
		b->at[k] = head;
		*(uint32_t *)(cap.buf + (head & (CAPTURE_BUF_BYTES - 1))) = RING_BUSY;
		head += b->len[k];
	}
	/* The writer reads no further than head, and finds RING_BUSY or RING_PAD there. */
	__atomic_store_n(&cap.head, head, __ATOMIC_RELEASE);
	rte_spinlock_unlock(&cap.lock);
	b->n = k;
	ts_ns = cap.epoch_ns + sl_tsc_clock_now_ns(&cap.clock);
	for (uint16_t i = 0; i < k; i++)
		write_epb(cap.buf + (b->at[i] & (CAPTURE_BUF_BYTES - 1)), b->len[i], pkts[i], iface,
			  queue, dir, ts_ns);
}

/* Hand the writer the burst's first `keep` blocks for the file and the rest to skip. */
static void
finish(const struct burst *b, uint16_t keep)
{
	for (uint16_t i = 0; i < b->n; i++)
		__atomic_store_n((uint32_t *)(cap.buf + (b->at[i] & (CAPTURE_BUF_BYTES - 1))),
				 i < keep ? PCAPNG_EPB : RING_SKIP, __ATOMIC_RELEASE);
	__atomic_fetch_add(&cap.captured, keep, __ATOMIC_RELAXED);
}

static uint16_t
on_rx(uint16_t port, uint16_t queue, struct rte_mbuf **pkts, uint16_t n, uint16_t max, void *arg)
{
	struct burst b;
	uint16_t done = 0;

	(void)port;
	(void)max;
	while (done < n) {
		uint16_t chunk = RTE_MIN((uint16_t)(n - done), (uint16_t)CAPTURE_CHUNK);

		reserve_and_copy(&b, (uint32_t)(uintptr_t)arg, queue, pkts + done, chunk, DIR_IN,
				 0);
		finish(&b, b.n);
		done += b.n;
		if (b.n < chunk)
			break;
	}
	/* Every received frame goes up; those the ring had no room for are counted. */
	if (done < n)
		__atomic_fetch_add(&cap.dropped, n - done, __ATOMIC_RELAXED);
	return n;
}

/*
 * The port's transmit function while the capture is on (see the top): copy the frames, give
 * the driver those copied, keep the copies of those it took. Returns what the driver took.
 */
static inline uint16_t
capture_tx(unsigned int p, void *txq, struct rte_mbuf **pkts, uint16_t n)
{
	const struct tx_hook *h = &cap.tx[p];
	struct burst b;
	uint16_t q = 0, sent = 0;

	if (n == 0) /* an empty burst still reaches the driver (AF_XDP's kick) */
		return h->burst(txq, pkts, 0);
	while (q < h->nb_queues - 1 && h->txq[q] != txq)
		q++;
	while (sent < n) {
		uint16_t chunk = RTE_MIN((uint16_t)(n - sent), (uint16_t)CAPTURE_CHUNK), took;

		reserve_and_copy(&b, p, q, pkts + sent, chunk, DIR_OUT, CAPTURE_RX_RESERVE);
		took = b.n ? h->burst(txq, pkts + sent, b.n) : 0;
		finish(&b, took);
		if (b.n < chunk) /* the ring is full: the lane keeps the rest */
			__atomic_fetch_add(&cap.held, n - sent - b.n, __ATOMIC_RELAXED);
		sent += took;
		if (took < chunk)
			break;
	}
	return sent;
}

/* One transmit function per port index: the driver's gets only the queue. */
#define CAPTURE_TX(p)                                                                              \
	static uint16_t capture_tx##p(void *txq, struct rte_mbuf **pkts, uint16_t n)               \
	{                                                                                          \
		return capture_tx(p, txq, pkts, n);                                                \
	}
CAPTURE_TX(0)
CAPTURE_TX(1)
CAPTURE_TX(2)
CAPTURE_TX(3)
CAPTURE_TX(4)
CAPTURE_TX(5)
CAPTURE_TX(6)
CAPTURE_TX(7)
static const eth_tx_burst_t capture_tx_fn[] = {capture_tx0, capture_tx1, capture_tx2, capture_tx3,
					       capture_tx4, capture_tx5, capture_tx6, capture_tx7};
static_assert(RTE_DIM(capture_tx_fn) == SL_DP_MAX_PORTS, "one transmit function per port");

/* Write buf[0, len) to the file; false (errno kept) if it refused. */
static bool
write_all(const uint8_t *buf, size_t len)
{
	while (len > 0) {
		ssize_t w = write(cap.fd, buf, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			if (cap.write_errno == 0)
				cap.write_errno = w < 0 ? errno : EIO;
			return false;
		}
		buf += w;
		len -= (size_t)w;
	}
	return true;
}

/* Hand the file the run [from, to) of whole blocks (frames of them), then free the ring up to
 * `to` (past any blocks skipped before it). */
static void
flush_run(uint64_t from, uint64_t to, uint64_t frames)
{
	if (to != from) {
		if (write_all(cap.buf + (from & (CAPTURE_BUF_BYTES - 1)), to - from)) {
			cap.written += frames;
			cap.bytes += to - from;
		} else {
			__atomic_fetch_add(&cap.dropped, frames, __ATOMIC_RELAXED);
		}
	}
	if (to != cap.tail)
		__atomic_store_n(&cap.tail, to, __ATOMIC_RELEASE);
}

/* Write every finished block the ring holds, up to the first one still being written, and skip
 * the others; returns the bytes of the ring freed. */
static uint64_t
write_ring(void)
{
	uint64_t head = __atomic_load_n(&cap.head, __ATOMIC_ACQUIRE);
	uint64_t start = cap.tail, from = start, at = start, frames = 0;

	while (at < head) {
		uint32_t off = (uint32_t)(at & (CAPTURE_BUF_BYTES - 1));
		const uint32_t *blk = (const uint32_t *)(cap.buf + off);
		uint32_t type = __atomic_load_n(blk, __ATOMIC_ACQUIRE);

		if (type == RING_BUSY)
			break;
		if (type == RING_SKIP || type == RING_PAD) {
			flush_run(from, at, frames);
			at += type == RING_SKIP ? blk[1] : CAPTURE_BUF_BYTES - off;
			from = at;
			frames = 0;
			continue;
		}
		at += blk[1];
		frames++;
		/* A run ends at the ring's end (blocks never wrap) or at CAPTURE_WRITE_MAX. */
		if ((at & (CAPTURE_BUF_BYTES - 1)) == 0 || at - from >= CAPTURE_WRITE_MAX) {
			flush_run(from, at, frames);
			from = at;
			frames = 0;
		}
	}
	flush_run(from, at, frames);
	return at - start;
}

static void *
writer_main(void *arg)
{
	(void)arg;
	while (!cap.writer_stop)
		if (write_ring() == 0)
			usleep(CAPTURE_IDLE_US);
	/* The lcores stopped polling before writer_stop: every block is whole. */
	while (write_ring() > 0)
		;
	return NULL;
}

static uint8_t *
put16(uint8_t *p, uint16_t v)
{
	memcpy(p, &v, 2);
	return p + 2;
}

static uint8_t *
put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
	return p + 4;
}

/* Append an option (code, value of len bytes, zero-padded to 4 bytes) at p. */
static uint8_t *
put_opt(uint8_t *p, uint16_t code, const void *val, uint16_t len)
{
	p = put16(p, code);
	p = put16(p, len);
	memcpy(p, val, len);
	memset(p + len, 0, align4(len) - len);
	return p + align4(len);
}

/* Finish the block that starts at blk and whose options end at p, and write it. */
static int
write_block(uint8_t *blk, uint8_t *p)
{
	uint32_t len = (uint32_t)(p - blk) + 8;

	p = put32(p, PCAPNG_OPT_END);
	put32(p, len);
	put32(blk + 4, len);
	return write_all(blk, len) ? 0 : -cap.write_errno;
}

/* The section header, then one interface per port, in the order of d->port[] (an EPB's
 * interface is its port's index there). */
static int
write_header(const struct sluiced *d)
{
	const char *appl = "sluiced " SLUICE_VERSION;
	uint8_t blk[512], *p = blk, tsresol = 9;
	int rc;

	p = put32(p, PCAPNG_SHB);
	p = put32(p, 0); /* the length, by write_block() */
	p = put32(p, PCAPNG_BYTE_ORDER);
	p = put16(p, 1); /* version 1.0 */
	p = put16(p, 0);
	memset(p, 0xFF, 8); /* section length: not given */
	p = put_opt(p + 8, PCAPNG_SHB_USERAPPL, appl, (uint16_t)strlen(appl));
	rc = write_block(blk, p);
	for (unsigned int i = 0; i < d->nb_ports && rc == 0; i++) {
		const char *name = d->port[i].name;

		p = put32(blk, PCAPNG_IDB);
		p = put32(p, 0);
		p = put16(p, PCAPNG_LINKTYPE_ETHERNET);
		p = put16(p, 0);
		p = put32(p, CAPTURE_SNAPLEN);
		p = put_opt(p, PCAPNG_IF_NAME, name, (uint16_t)strnlen(name, 256));
		p = put_opt(p, PCAPNG_IF_TSRESOL, &tsresol, 1);
		rc = write_block(blk, p);
	}
	return rc;
}

int
sluiced_capture_start(struct sluiced *d, const char *path, char *err, size_t errlen)
{
	struct timespec now;
	int rc;

	cap.pdump = rte_pdump_init() == 0;
	if (path == NULL)
		return 0;
	snprintf(cap.path, sizeof(cap.path), "%s", path);
	/* Touched now, so that no worker takes a page fault on its first lap. */
	cap.buf = mmap(NULL, CAPTURE_BUF_BYTES, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (cap.buf == MAP_FAILED) {
		cap.buf = NULL;
		snprintf(err, errlen, "--capture: cannot allocate its %u MiB ring: %s",
			 CAPTURE_BUF_BYTES >> 20, strerror(errno));
		return -ENOMEM;
	}
	rte_spinlock_init(&cap.lock);
	cap.fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (cap.fd < 0) {
		rc = -errno;
		snprintf(err, errlen, "--capture %s: %s", path, strerror(errno));
		goto fail;
	}
	rc = write_header(d);
	if (rc != 0) {
		snprintf(err, errlen, "--capture %s: %s", path, strerror(-rc));
		goto fail;
	}
	cap.on = true;
	cap.clock = d->clock;
	clock_gettime(CLOCK_REALTIME, &now);
	cap.epoch_ns = (uint64_t)now.tv_sec * SL_NS_PER_S + (uint64_t)now.tv_nsec -
		       sl_tsc_clock_now_ns(&cap.clock);
	rc = rte_ctrl_thread_create(&cap.writer, "sl-capture", NULL, writer_main, NULL);
	if (rc != 0) {
		snprintf(err, errlen, "--capture: cannot start its writer thread: %s",
			 strerror(rc));
		rc = -rc;
		goto fail;
	}
	cap.writer_running = true;
	for (unsigned int p = 0; p < d->nb_ports; p++) {
		uint16_t id = d->port[p].port_id;
		struct rte_eth_fp_ops *ops = &rte_eth_fp_ops[id];
		struct tx_hook *h = &cap.tx[p];

		for (uint16_t q = 0; q < d->port[p].nb_queues; q++) {
			cap.rx_cb[p][q] =
				rte_eth_add_rx_callback(id, q, on_rx, (void *)(uintptr_t)p);
			if (cap.rx_cb[p][q] == NULL) {
				snprintf(err, errlen,
					 "--capture: port %s queue %u takes no callbacks: %s",
					 d->port[p].name, q, rte_strerror(rte_errno));
				rc = -ENOTSUP;
				goto fail;
			}
			h->txq[q] = ops->txq.data[q];
		}
		/* The ports are started (which sets this table) and no lcore polls yet. */
		h->port_id = id;
		h->nb_queues = d->port[p].nb_queues;
		h->burst = ops->tx_pkt_burst;
		ops->tx_pkt_burst = capture_tx_fn[p];
	}
	return 0;
fail:
	sluiced_capture_stop(d);
	return rc;
}

void
sluiced_capture_stop(struct sluiced *d)
{
	for (unsigned int p = 0; p < d->nb_ports; p++) {
		struct tx_hook *h = &cap.tx[p];

		for (uint16_t q = 0; q < d->port[p].nb_queues; q++) {
			/* Removal is safe while the workers run; the memory of a callback may be
			 * in use by a burst for a while after, so it is never freed here. */
			if (cap.rx_cb[p][q] != NULL)
				rte_eth_remove_rx_callback(d->port[p].port_id, q, cap.rx_cb[p][q]);
			cap.rx_cb[p][q] = NULL;
		}
		/* No lcore polls any more; a port stopped since has its driver's function back. */
		if (h->burst != NULL && rte_eth_fp_ops[h->port_id].tx_pkt_burst == capture_tx_fn[p])
			rte_eth_fp_ops[h->port_id].tx_pkt_burst = h->burst;
		h->burst = NULL;
	}
	if (cap.writer_running) {
		cap.writer_stop = true;
		pthread_join(cap.writer, NULL);
		cap.writer_running = false;
	}
	if (cap.fd >= 0) {
		if (close(cap.fd) != 0 && cap.write_errno == 0)
			cap.write_errno = errno;
		cap.fd = -1;
		if (cap.write_errno != 0)
			rte_log(RTE_LOG_ERR, capture_logtype, "sluiced: capture: %s: %s\n",
				cap.path, strerror(cap.write_errno));
		rte_log(RTE_LOG_INFO, capture_logtype,
			"sluiced: capture: %" PRIu64 " frames captured, %" PRIu64
			" dropped, %" PRIu64 " written to %s, %" PRIu64 " held back for TX\n",
			cap.captured, cap.dropped, cap.written, cap.path, cap.held);
	}
	if (cap.buf != NULL) {
		munmap(cap.buf, CAPTURE_BUF_BYTES);
		cap.buf = NULL;
	}
	if (cap.pdump) {
		rte_pdump_uninit();
		cap.pdump = false;
	}
}

void
sluiced_capture_report(FILE *f)
{
	if (!cap.on)
		return;
	fprintf(f,
		"{\"capture/captured\":%" PRIu64 ",\"capture/dropped\":%" PRIu64
		",\"capture/held\":%" PRIu64 ",\"capture/written\":%" PRIu64
		",\"capture/bytes\":%" PRIu64 "}\n",
		cap.captured, cap.dropped, cap.held, cap.written, cap.bytes);
}
