// SPDX-License-Identifier: GPL-2.0
#include <ctype.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include "stage/expr.h"

void ns_expr_init(struct ns_expr *e)
{
	memset(e, 0, sizeof(*e));
}

void ns_expr_free(struct ns_expr *e)
{
	if (e->text)
		pcap_freecode(&e->prog);
	free(e->text);
	ns_expr_init(e);
}

bool ns_expr_active(const struct ns_expr *e)
{
	return e->text != NULL;
}

static bool blank(const char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	return !*s;
}

int ns_expr_compile(struct ns_expr *e, const char *text, char *err,
		    size_t len)
{
	pcap_t *p;
	int ret = 0;

	ns_expr_free(e);
	if (blank(text))
		return 0;
	/* No device: libpcap compiles for a link type it is told, raw IP. */
	p = pcap_open_dead(DLT_RAW, NS_EXPR_SNAPLEN);
	if (!p) {
		snprintf(err, len, "libpcap: cannot make a handle to compile with");
		return -1;
	}
	if (pcap_compile(p, &e->prog, text, 1, PCAP_NETMASK_UNKNOWN)) {
		snprintf(err, len, "%s", pcap_geterr(p));
		ret = -1;
	} else {
		e->text = strdup(text);
		if (!e->text) {
			pcap_freecode(&e->prog);
			snprintf(err, len, "out of memory");
			ret = -1;
		}
	}
	pcap_close(p);
	return ret;
}

/*
 * The packet of NSIOCSFILTER (include/netslice.h), which the kernel makes
 * for the same program: DLT_RAW, starting with the IP header.
 */
size_t ns_expr_packet(const struct ns_tuple *t,
		      uint8_t pkt[NS_EXPR_PACKET_MAX])
{
	struct nsl_filter_flow f = {
		.family = t->family == AF_INET6 ? 10 : 2,
		.proto = t->proto,
		.sport = t->sport,
		.dport = t->dport,
		.len = t->len,
		.tcp_seq = t->tcp_seq,
	};

	memcpy(f.saddr, t->saddr, sizeof(f.saddr));
	memcpy(f.daddr, t->daddr, sizeof(f.daddr));
	return nsl_filter_packet(&f, pkt);
}

bool ns_expr_match(const struct ns_expr *e, const struct ns_tuple *t)
{
	uint8_t pkt[NS_EXPR_PACKET_MAX];
	size_t n;

	if (!e->text)
		return true;
	if (t->family != AF_INET && t->family != AF_INET6)
		return false;
	n = ns_expr_packet(t, pkt);
	return bpf_filter(e->prog.bf_insns, pkt,
			  t->len > n ? t->len : (uint32_t)n, n) != 0;
}

char *ns_expr_join(int argc, char **argv, int first)
{
	size_t len = 1;
	char *text;

	for (int i = first; i < argc; i++)
		len += strlen(argv[i]) + 1;
	text = malloc(len);
	if (!text)
		return NULL;
	text[0] = 0;
	for (int i = first; i < argc; i++) {
		if (i > first)
			strcat(text, " ");
		strcat(text, argv[i]);
	}
	return text;
}

/*
 * ---- Does the verdict depend on the flow alone? ----
 *
 * The kernel runs a program at NSI, before a packet has a block, only if
 * the reader promises NSL_FILTER_FLOW: that the verdict cannot change
 * with the packet's lengths, its TCP sequence number or BPF_LEN, which
 * NSI does not know yet (they read as 0 there).  The promise is proved
 * here by walking every path of the program over each layout
 * nsl_filter_packet() makes (IPv4 or IPv6, then TCP, UDP or no transport
 * header), tracking for each byte, register and scratch word what it
 * may depend on.
 */

/* What a value may depend on, from the least to the most. */
enum ns_dep {
	NS_DEP_KNOWN,	/* one value, the same for every packet of the layout */
	NS_DEP_FLOW,	/* unknown, but the same for all packets of one flow */
	NS_DEP_LENGTH,	/* may differ between packets of one flow */
};

struct dep_val {
	enum ns_dep dep;
	uint32_t v;		/* the value, where NS_DEP_KNOWN */
};

/* One layout: its bytes, each with what it depends on. */
struct dep_layout {
	uint8_t byte[NS_EXPR_PACKET_MAX];
	enum ns_dep dep[NS_EXPR_PACKET_MAX];
	uint32_t len;		/* the header bytes: loads past them fail */
};

/* The registers and scratch words along one path. */
struct dep_machine {
	struct dep_val a, x, mem[BPF_MEMWORDS];
};

/* Where a path walk stands. */
enum dep_walk {
	DEP_WALK_ON,		/* the next instruction */
	DEP_WALK_END,		/* the path ends in a verdict the flow decides */
	DEP_WALK_UNPROVEN,	/* the verdict may depend on a length */
};

/* Instructions walked over all paths and layouts before giving up. */
#define DEP_BUDGET	100000

struct dep_walker {
	const struct bpf_insn *insns;
	uint32_t n;
	const struct dep_layout *lay;
	unsigned long steps;	/* left of DEP_BUDGET */
};

static void flow_bytes(struct nsl_filter_flow *f, uint8_t fill)
{
	memset(f->saddr, fill, sizeof(f->saddr));
	memset(f->daddr, fill, sizeof(f->daddr));
	f->sport = f->dport = (uint16_t)(fill * 0x101);
}

/*
 * Marks with @dep the bytes of @lay that differ in @f's packet.  Each
 * varying field is set to values that change every one of its bytes.
 */
static void mark_differing(struct dep_layout *lay,
			   const struct nsl_filter_flow *f, enum ns_dep dep)
{
	uint8_t pkt[NS_EXPR_PACKET_MAX];

	nsl_filter_packet(f, pkt);
	for (uint32_t i = 0; i < lay->len; i++)
		if (pkt[i] != lay->byte[i] && lay->dep[i] < dep)
			lay->dep[i] = dep;
}

/*
 * The layout of @family and @proto (0: a protocol with no transport
 * header), derived from nsl_filter_packet() itself by varying the flow's
 * fields and then the lengths and sequence number: whatever byte moves
 * with them depends on them, so the analysis follows the ABI's packet.
 */
static void dep_layout_make(struct dep_layout *lay, uint16_t family,
			    uint16_t proto)
{
	static const uint16_t others[] = { 1, 0, 58, 132, 255 };
	static const uint32_t lens[] = { 1, 255, 256, 1500, 65535, 70000 };
	static const uint8_t fills[] = { 0xff, 0x5a, 0xa5 };
	struct nsl_filter_flow f = { .family = family, .proto = proto };

	if (!proto)
		f.proto = others[0];
	memset(lay, 0, sizeof(*lay));
	lay->len = nsl_filter_packet(&f, lay->byte);
	for (size_t i = 0; i < sizeof(fills); i++) {
		struct nsl_filter_flow g = f;

		flow_bytes(&g, fills[i]);
		mark_differing(lay, &g, NS_DEP_FLOW);
	}
	for (size_t i = 1; !proto && i < sizeof(others) / sizeof(others[0]); i++) {
		struct nsl_filter_flow g = f;

		g.proto = others[i];
		mark_differing(lay, &g, NS_DEP_FLOW);
	}
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		struct nsl_filter_flow g = f;

		g.len = lens[i];
		g.tcp_seq = i & 1 ? 0xffffffffu : 0x01020304u;
		mark_differing(lay, &g, NS_DEP_LENGTH);
	}
}

static struct dep_val known(uint32_t v)
{
	return (struct dep_val){ .dep = NS_DEP_KNOWN, .v = v };
}

static struct dep_val depends(enum ns_dep dep)
{
	return (struct dep_val){ .dep = dep };
}

/*
 * A load of @size bytes at @off: the bytes' value, or the most any of
 * them depends on.  False if it fails (past the headers): the program
 * then rejects, whatever the lengths.
 */
static bool dep_load(const struct dep_layout *lay, uint64_t off,
		     unsigned int size, struct dep_val *out)
{
	enum ns_dep dep = NS_DEP_KNOWN;
	uint32_t v = 0;

	if (off + size > lay->len)
		return false;
	for (unsigned int i = 0; i < size; i++) {
		if (lay->dep[off + i] > dep)
			dep = lay->dep[off + i];
		v = v << 8 | lay->byte[off + i];
	}
	*out = dep == NS_DEP_KNOWN ? known(v) : depends(dep);
	return true;
}

static unsigned int load_size(uint16_t code)
{
	switch (BPF_SIZE(code)) {
	case BPF_W: return 4;
	case BPF_H: return 2;
	case BPF_B: return 1;
	}
	return 0;
}

/*
 * A load into A (BPF_LD) or X (BPF_LDX).  An offset that depends on
 * anything but the layout is not followed: which bytes it reads could
 * change with the flow into a length.
 */
static enum dep_walk dep_ld(const struct dep_walker *w, struct dep_machine *m,
			    const struct bpf_insn *in, struct dep_val *dst)
{
	unsigned int size = load_size(in->code);
	uint64_t off = in->k;

	bool to_x = BPF_CLASS(in->code) == BPF_LDX;

	switch (BPF_MODE(in->code)) {
	case BPF_IMM:
		*dst = known(in->k);
		return DEP_WALK_ON;
	case BPF_LEN:
		*dst = depends(NS_DEP_LENGTH);
		return DEP_WALK_ON;
	case BPF_MEM:
		if (in->k >= BPF_MEMWORDS)
			return DEP_WALK_UNPROVEN;
		*dst = m->mem[in->k];
		return DEP_WALK_ON;
	case BPF_IND:
		if (to_x || m->x.dep != NS_DEP_KNOWN)
			return DEP_WALK_UNPROVEN;
		off += m->x.v;
		/* fall through */
	case BPF_ABS:
		if (to_x || !size)
			return DEP_WALK_UNPROVEN;
		return dep_load(w->lay, off, size, dst) ? DEP_WALK_ON : DEP_WALK_END;
	case BPF_MSH:	/* X = 4 * (P[k] & 0xf), an IPv4 header's length */
		if (!to_x)
			return DEP_WALK_UNPROVEN;
		if (!dep_load(w->lay, off, 1, dst))
			return DEP_WALK_END;
		if (dst->dep == NS_DEP_KNOWN)
			dst->v = 4 * (dst->v & 0xf);
		return DEP_WALK_ON;
	}
	return DEP_WALK_UNPROVEN;
}

/*
 * A op B for known values, as libpcap's bpf_filter() computes it; false
 * where the value is not pinned down here (a shift past 31), which is
 * then taken as unknown but still the same for every packet.
 */
static bool alu_known(uint16_t op, uint32_t a, uint32_t b, uint32_t *out)
{
	switch (op) {
	case BPF_ADD: *out = a + b; return true;
	case BPF_SUB: *out = a - b; return true;
	case BPF_MUL: *out = a * b; return true;
	case BPF_DIV: *out = a / b; return true;
	case BPF_MOD: *out = a % b; return true;
	case BPF_AND: *out = a & b; return true;
	case BPF_OR:  *out = a | b; return true;
	case BPF_XOR: *out = a ^ b; return true;
	case BPF_NEG: *out = -a; return true;
	case BPF_LSH: *out = a << b; return b < 32;
	case BPF_RSH: *out = a >> b; return b < 32;
	}
	return false;
}

static bool alu_op_known(uint16_t op)
{
	uint32_t ignored;

	return alu_known(op, 0, 1, &ignored);
}

/*
 * A = A op (K or X).  A division by zero ends the program with a reject:
 * by a known zero that is this path's verdict; by a value that depends
 * on a length, a verdict that does.
 */
static enum dep_walk dep_alu(struct dep_machine *m, const struct bpf_insn *in)
{
	struct dep_val b = BPF_SRC(in->code) == BPF_X ? m->x : known(in->k);
	uint16_t op = BPF_OP(in->code);
	bool divides = op == BPF_DIV || op == BPF_MOD;
	uint32_t v;

	if (!alu_op_known(op))
		return DEP_WALK_UNPROVEN;
	if (op == BPF_NEG)
		b = known(0);
	if (divides && b.dep == NS_DEP_LENGTH)
		return DEP_WALK_UNPROVEN;
	if (divides && b.dep == NS_DEP_KNOWN && !b.v)
		return DEP_WALK_END;
	if (m->a.dep == NS_DEP_KNOWN && b.dep == NS_DEP_KNOWN)
		m->a = alu_known(op, m->a.v, b.v, &v) ? known(v) :
		       depends(NS_DEP_FLOW);
	else
		m->a = depends(m->a.dep > b.dep ? m->a.dep : b.dep);
	return DEP_WALK_ON;
}

static bool jump_known(uint16_t op, uint32_t a, uint32_t b)
{
	switch (op) {
	case BPF_JEQ: return a == b;
	case BPF_JGT: return a > b;
	case BPF_JGE: return a >= b;
	}
	return a & b;	/* BPF_JSET */
}

static enum dep_walk dep_walk_from(struct dep_walker *w, uint32_t pc,
				   struct dep_machine m);

/*
 * A conditional jump: on known values one way, on flow values both (the
 * flows decide), on a length never proven.  *@pc is where this path goes.
 */
static enum dep_walk dep_jump(struct dep_walker *w, const struct dep_machine *m,
			      const struct bpf_insn *in, uint32_t *pc)
{
	struct dep_val b = BPF_SRC(in->code) == BPF_X ? m->x : known(in->k);
	uint16_t op = BPF_OP(in->code);
	uint32_t next = *pc + 1, taken, not_taken;

	if (op == BPF_JA) {
		*pc = next + in->k;
		return in->k < w->n - next ? DEP_WALK_ON : DEP_WALK_UNPROVEN;
	}
	if (op != BPF_JEQ && op != BPF_JGT && op != BPF_JGE && op != BPF_JSET)
		return DEP_WALK_UNPROVEN;
	taken = next + in->jt;
	not_taken = next + in->jf;
	if (taken >= w->n || not_taken >= w->n)
		return DEP_WALK_UNPROVEN;
	if (m->a.dep == NS_DEP_LENGTH || b.dep == NS_DEP_LENGTH)
		return DEP_WALK_UNPROVEN;
	if (m->a.dep == NS_DEP_KNOWN && b.dep == NS_DEP_KNOWN) {
		*pc = jump_known(op, m->a.v, b.v) ? taken : not_taken;
		return DEP_WALK_ON;
	}
	if (dep_walk_from(w, taken, *m) == DEP_WALK_UNPROVEN)
		return DEP_WALK_UNPROVEN;
	*pc = not_taken;
	return DEP_WALK_ON;
}

/* One instruction of the path; *@pc moves to the next one. */
static enum dep_walk dep_step(struct dep_walker *w, struct dep_machine *m,
			      uint32_t *pc)
{
	const struct bpf_insn *in = &w->insns[*pc];

	switch (BPF_CLASS(in->code)) {
	case BPF_RET:
		if (BPF_RVAL(in->code) == BPF_K)
			return DEP_WALK_END;
		if (BPF_RVAL(in->code) == BPF_A && m->a.dep != NS_DEP_LENGTH)
			return DEP_WALK_END;
		return DEP_WALK_UNPROVEN;
	case BPF_JMP:
		return dep_jump(w, m, in, pc);
	}
	++*pc;
	switch (BPF_CLASS(in->code)) {
	case BPF_LD:
		return dep_ld(w, m, in, &m->a);
	case BPF_LDX:
		return dep_ld(w, m, in, &m->x);
	case BPF_ST:
	case BPF_STX:
		if (in->k >= BPF_MEMWORDS)
			return DEP_WALK_UNPROVEN;
		m->mem[in->k] = BPF_CLASS(in->code) == BPF_ST ? m->a : m->x;
		return DEP_WALK_ON;
	case BPF_ALU:
		return dep_alu(m, in);
	case BPF_MISC:
		if (BPF_MISCOP(in->code) == BPF_TAX)
			m->x = m->a;
		else if (BPF_MISCOP(in->code) == BPF_TXA)
			m->a = m->x;
		else
			return DEP_WALK_UNPROVEN;	/* an extension */
		return DEP_WALK_ON;
	}
	return DEP_WALK_UNPROVEN;
}

/* Every path from @pc: does each end in a verdict the flow decides? */
static enum dep_walk dep_walk_from(struct dep_walker *w, uint32_t pc,
				   struct dep_machine m)
{
	enum dep_walk st = DEP_WALK_ON;

	while (st == DEP_WALK_ON) {
		if (pc >= w->n || !w->steps)
			return DEP_WALK_UNPROVEN;
		w->steps--;
		st = dep_step(w, &m, &pc);
	}
	return st;
}

bool ns_expr_flow_only(const struct bpf_program *p)
{
	static const uint16_t families[] = { 2, 10 };
	static const uint16_t protos[] = { IPPROTO_TCP, IPPROTO_UDP, 0 };
	struct dep_walker w = {
		.insns = p->bf_insns, .n = p->bf_len, .steps = DEP_BUDGET,
	};
	struct dep_machine m;
	struct dep_layout lay;

	if (!p->bf_insns || !p->bf_len || p->bf_len > NSL_FILTER_MAX_INSNS)
		return false;
	/* A and X start at 0; scratch words start as anything. */
	m.a = m.x = known(0);
	for (int i = 0; i < BPF_MEMWORDS; i++)
		m.mem[i] = depends(NS_DEP_LENGTH);
	w.lay = &lay;
	for (size_t f = 0; f < sizeof(families) / sizeof(families[0]); f++) {
		for (size_t t = 0; t < sizeof(protos) / sizeof(protos[0]); t++) {
			dep_layout_make(&lay, families[f], protos[t]);
			if (dep_walk_from(&w, 0, m) != DEP_WALK_END)
				return false;
		}
	}
	return true;
}
