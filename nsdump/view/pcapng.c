// SPDX-License-Identifier: GPL-2.0
/*
 * The pcapng file is written here, not through libpcap: libpcap's
 * writers (pcap_dump_open() and friends) write pcap, or on newer
 * versions a minimal pcapng, with no way to add a packet's options, so
 * neither its comments nor a custom option could be written.  The
 * format is simple (draft-ietf-opsawg-pcapng): blocks of a type, a
 * length, a body and the length again, each option a code, a length and
 * its bytes padded to 4, all in the writer's byte order, which the
 * section header's magic tells the reader.
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include "lib/devname.h"
#include "source/version.h"
#include "stage/expr.h"
#include "view/markup.h"
#include "view/pcapng.h"
#include "view/pcapopt.h"
#include "view/utf8.h"

#define BT_SHB		0x0A0D0D0A
#define BT_IDB		0x00000001
#define BT_EPB		0x00000006
#define BYTE_ORDER_MAGIC 0x1A2B3C4D
#define OPT_END		0
#define OPT_COMMENT	1
#define SHB_USERAPPL	4
#define IF_NAME		2
#define IF_DESCRIPTION	3
#define IF_TSRESOL	9
#define EPB_FLAGS	2
#define EPB_INBOUND	1	/* epb_flags bits 0-1: the direction */
#define EPB_OUTBOUND	2
#define LINKTYPE_RAW	101	/* the packet starts with its IP header */
#define PROTO_EXPERIMENT 253	/* RFC 3692: a stub for what has no flow */

/* One block as it is assembled, written whole. */
#define BLOCK_MAX	16384
#define TEXT_MAX	2048

struct iface {
	uint32_t ifindex, netns;
};

struct pcapng {
	struct ns_sink sink;
	FILE *out;
	char *path;
	const struct ns_acc *acc;	/* clock, rate, calibration, names */
	const struct ns_magnet *conns;	/* event records' flows */
	bool live;		/* from /dev/ns: devices by name */
	struct iface *ifs;	/* IDBs written, in order: interface ids */
	unsigned int nifs;
	uint64_t packets;	/* EPBs handed to the file */
	int err;		/* the first write error; 0: none */
	size_t n;		/* bytes of blk in use */
	uint8_t blk[BLOCK_MAX];
};

/* ---- a block's bytes ---- */

static void raw(struct pcapng *c, const void *data, size_t n)
{
	if (c->n + n > BLOCK_MAX) {
		c->n = BLOCK_MAX + 1;	/* too long: refused at end_block() */
		return;
	}
	memcpy(c->blk + c->n, data, n);
	c->n += n;
}

static void u16(struct pcapng *c, uint16_t v)
{
	raw(c, &v, sizeof(v));
}

static void u32(struct pcapng *c, uint32_t v)
{
	raw(c, &v, sizeof(v));
}

static void opt(struct pcapng *c, uint16_t code, const void *data, size_t n)
{
	static const uint8_t zero[4];

	u16(c, code);
	u16(c, (uint16_t)n);
	raw(c, data, n);
	raw(c, zero, -n & 3);
}

static void opt_text(struct pcapng *c, uint16_t code, const char *s)
{
	char in[TEXT_MAX], fixed[NS_UTF8_REPAIRED(TEXT_MAX)];

	/* opt_comment, if_name and the like are UTF-8 */
	snprintf(in, sizeof(in), "%s", s);
	opt(c, code, fixed, ns_utf8_repair(in, fixed));
}

static void begin_block(struct pcapng *c, uint32_t type)
{
	c->n = 0;
	u32(c, type);
	u32(c, 0);	/* the total length, once known */
}

/* The block closed and written; false once writing failed. */
static bool end_block(struct pcapng *c)
{
	uint32_t total;

	u16(c, OPT_END);
	u16(c, 0);
	total = (uint32_t)c->n + 4;
	u32(c, total);
	if (c->n > BLOCK_MAX) {
		c->err = c->err ? c->err : EOVERFLOW;
		return false;
	}
	memcpy(c->blk + 4, &total, 4);
	if (!c->err && fwrite(c->blk, 1, c->n, c->out) != c->n)
		c->err = errno ? errno : EIO;
	return !c->err;
}

/* ---- section and interfaces ---- */

static void section(struct pcapng *c, const char *source,
		    const struct nsl_info *info)
{
	char text[512], corr[192];

	begin_block(c, BT_SHB);
	u32(c, BYTE_ORDER_MAGIC);
	u16(c, 1);		/* version 1.0 */
	u16(c, 0);
	u32(c, UINT32_MAX);	/* section length unknown (-1) */
	u32(c, UINT32_MAX);
	ns_acc_correction(c->acc, corr, sizeof(corr));
	snprintf(text, sizeof(text),
		 "NetSlice capture from %s, tsc_khz %u; %s. Per-layer latencies in each packet's comments and in custom option %u, PEN %u (nsdump(8))",
		 source, info->tsc_khz, corr, NS_PCAPNG_OPT_CUSTOM,
		 NS_PCAPNG_PEN);
	opt_text(c, OPT_COMMENT, text);
	opt_text(c, SHB_USERAPPL, "nsdump " NSDUMP_VERSION);
	end_block(c);
}

static void describe_iface(struct pcapng *c, const char *name,
			   const char *desc)
{
	static const uint8_t nanoseconds = 9;

	begin_block(c, BT_IDB);
	u16(c, LINKTYPE_RAW);
	u16(c, 0);
	u32(c, 0);		/* no snapshot length */
	opt_text(c, IF_NAME, name);
	opt_text(c, IF_DESCRIPTION, desc);
	opt(c, IF_TSRESOL, &nanoseconds, 1);
	end_block(c);
}

/* The interface id of a device, its IDB written the first time; -1: no memory. */
static int iface_of(struct pcapng *c, uint32_t ifindex, uint32_t netns)
{
	char name[NS_DEV_TEXT], desc[96];
	struct iface *more;

	for (unsigned int i = 0; i < c->nifs; i++)
		if (c->ifs[i].ifindex == ifindex && c->ifs[i].netns == netns)
			return (int)i;
	more = realloc(c->ifs, (c->nifs + 1) * sizeof(*more));
	if (!more)
		return -1;
	c->ifs = more;
	c->ifs[c->nifs] = (struct iface){ ifindex, netns };
	ns_dev_text(ifindex, netns, c->live, name, sizeof(name));
	snprintf(desc, sizeof(desc), "NetSlice: ifindex %u, network namespace %u%s",
		 ifindex, netns, netns ? "" : " (not known)");
	describe_iface(c, name, desc);
	return (int)c->nifs++;
}

/* The interface a block goes on: its first device; every device's IDB written. */
static int block_iface(struct pcapng *c, const struct nsl_block *b)
{
	int id = 0;

	for (unsigned int i = 0; i < b->ndev; i++) {
		int dev = iface_of(c, b->dev[i].ifindex, b->dev[i].netns);

		if (!i || dev < 0)	/* the first device's, or no memory */
			id = dev;
	}
	if (!b->ndev && b->ifindex)
		id = iface_of(c, b->ifindex, 0);
	return id;
}

/* ---- packets ---- */

/* What one EPB carries besides its place and time. */
struct packet {
	struct ns_tuple t;	/* family 0: the stub */
	uint32_t flags;		/* epb_flags; 0: none */
	char text[TEXT_MAX];	/* the comment a person reads */
	uint8_t payload[NS_PCAPOPT_MAX];	/* NetSlice's (pcapopt.h) */
	size_t plen;
};

/* The made-up headers: expr.h's, or a bare IPv4 header of protocol 253. */
static size_t made_up(struct ns_tuple *t, uint8_t pkt[NS_EXPR_PACKET_MAX])
{
	size_t n;

	if (t->family != AF_INET && t->family != AF_INET6) {
		uint32_t len = t->len;

		*t = (struct ns_tuple){ .family = AF_INET,
					.proto = PROTO_EXPERIMENT, .len = len };
	}
	n = ns_expr_packet(t, pkt);
	/* a window of 0 would have Wireshark flag every segment */
	if (t->proto == IPPROTO_TCP)
		pkt[n - 6] = pkt[n - 5] = 0xff;
	return n;
}

static void packet_options(struct pcapng *c, const struct packet *pk)
{
	char b64[sizeof(NS_PCAPOPT_PREFIX) + 4 * NS_PCAPOPT_MAX / 3 + 4];
	uint8_t custom[4 + NS_PCAPOPT_MAX];
	uint32_t pen = NS_PCAPNG_PEN;

	opt_text(c, OPT_COMMENT, pk->text);
	ns_pcapopt_base64(pk->payload, pk->plen, b64, sizeof(b64));
	opt(c, OPT_COMMENT, b64, strlen(b64));
	memcpy(custom, &pen, 4);	/* the PEN in the section's order */
	memcpy(custom + 4, pk->payload, pk->plen);
	opt(c, NS_PCAPNG_OPT_CUSTOM, custom, 4 + pk->plen);
	if (pk->flags)
		opt(c, EPB_FLAGS, &pk->flags, 4);
}

static enum ns_flow packet(struct pcapng *c, int iface, uint64_t tsc,
			   struct packet *pk)
{
	uint8_t pkt[NS_EXPR_PACKET_MAX + 4] = { 0 };
	int64_t ns = ns_clock_ns(&c->acc->clock, tsc);
	uint64_t ts = ns > 0 ? (uint64_t)ns : 0;
	size_t n;

	if (iface < 0) {
		c->err = ENOMEM;
		return NS_FLOW_DONE;
	}
	n = made_up(&pk->t, pkt);
	begin_block(c, BT_EPB);
	u32(c, (uint32_t)iface);
	u32(c, (uint32_t)(ts >> 32));
	u32(c, (uint32_t)ts);
	u32(c, (uint32_t)n);
	u32(c, pk->t.len > n ? pk->t.len : (uint32_t)n);
	raw(c, pkt, (n + 3) & ~(size_t)3);
	packet_options(c, pk);
	if (!end_block(c))
		return NS_FLOW_DONE;	/* told at the finish */
	c->packets++;
	return NS_FLOW_MORE;
}

static enum ns_flow block(struct pcapng *c, const struct ns_citem *ci)
{
	const struct nsl_block *b = &ci->it->block;
	int iface = block_iface(c, b);
	struct packet pk = { 0 };
	char path[NS_DEV_PATH];

	ns_dev_path(b, c->live, path, sizeof(path));
	pk.plen = ns_pcapopt_block(c->acc, ci, path, pk.payload);
	ns_pcapopt_block_text(c->acc, ci, path, pk.text, sizeof(pk.text));
	if (!ns_tuple_from_block(b, &pk.t))
		pk.t = (struct ns_tuple){ .len = b->len };
	pk.flags = b->dir == NSL_DIR_RX ? EPB_INBOUND : EPB_OUTBOUND;
	return packet(c, iface, b->tsc0, &pk);
}

static enum ns_flow event(struct pcapng *c, const struct nsl_event_rec *ev)
{
	const struct ns_conn *conn = ns_magnet_find(c->conns, ev->conn);
	struct packet pk = { 0 };

	pk.plen = ns_pcapopt_event(ev, pk.payload);
	ns_pcapopt_event_text(ev, pk.text, sizeof(pk.text));
	if (!ns_tuple_from_event(ev, conn, &pk.t))
		pk.t = (struct ns_tuple){ .len = ev->bytes };
	pk.flags = ns_event_is_send(ev->type) ? EPB_OUTBOUND : EPB_INBOUND;
	return packet(c, 0, ev->tsc, &pk);
}

static enum ns_flow loss(struct pcapng *c, const struct nsl_loss *l)
{
	struct packet pk = { 0 };

	pk.plen = ns_pcapopt_loss(l, pk.payload);
	ns_pcapopt_loss_text(l, pk.text, sizeof(pk.text));
	return packet(c, 0, l->tsc, &pk);
}

static enum ns_flow pcapng_item(struct ns_sink *s, const struct ns_citem *ci)
{
	struct pcapng *c = (struct pcapng *)s;

	if (c->err)
		return NS_FLOW_DONE;
	switch (ci->it->type) {
	case NS_ITEM_BLOCK:
		return block(c, ci);
	case NS_ITEM_EVENT:
		return event(c, &ci->it->event);
	case NS_ITEM_LOSS:
		return loss(c, &ci->it->loss);
	default:
		return NS_FLOW_MORE;
	}
}

static int pcapng_finish(struct ns_sink *s, char *why, size_t len)
{
	struct pcapng *c = (struct pcapng *)s;
	char closing[256];
	int ret;

	if (!c->out)
		return 0;
	ret = ns_view_close(c->out, c->path, closing, sizeof(closing));
	c->out = NULL;
	if (c->err == EPIPE)
		return 0;	/* the reader went away: no error, as for the text */
	if (c->err) {
		snprintf(why, len, "%s: %s; the file is cut short (the error came after %llu packets)",
			 c->path, strerror(c->err), (unsigned long long)c->packets);
		return -1;
	}
	if (ret)
		snprintf(why, len, "%s; the file is cut short (%llu packets were written to it)",
			 closing, (unsigned long long)c->packets);
	return ret;
}

static void pcapng_free(struct ns_sink *s)
{
	struct pcapng *c = (struct pcapng *)s;

	if (c->out && c->out != stdout)
		fclose(c->out);
	free(c->ifs);
	free(c->path);
	free(c);
}

static const struct ns_sink_ops pcapng_ops = {
	.item	= pcapng_item,
	.finish	= pcapng_finish,
	.free	= pcapng_free,
};

struct ns_sink *ns_pcapng_open(const char *path, struct ns_pipeline *p,
			       const char *source, const struct nsl_info *info,
			       bool live, char *why, size_t len)
{
	struct pcapng *c = calloc(1, sizeof(*c));

	if (!c || !(c->path = strdup(path))) {
		snprintf(why, len, "--export: out of memory");
		free(c);
		return NULL;
	}
	c->sink.ops = &pcapng_ops;
	c->acc = &p->acc;
	c->conns = &p->conns;
	c->live = live;
	c->out = ns_view_open(path, why, len);
	if (!c->out) {
		pcapng_free(&c->sink);
		return NULL;
	}
	section(c, source, info);
	describe_iface(c, "netslice",
		       "NetSlice: MAGNeT event records, losses, blocks that name no device");
	c->ifs = calloc(1, sizeof(*c->ifs));	/* interface 0: no device */
	c->nifs = 1;
	if (!c->ifs) {
		snprintf(why, len, "--export: out of memory");
		pcapng_free(&c->sink);
		return NULL;
	}
	return &c->sink;
}
