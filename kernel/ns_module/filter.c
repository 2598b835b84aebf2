// SPDX-License-Identifier: GPL-2.0
/*
 * The reader's filter: a classic BPF program (libpcap's pcap_compile() for
 * DLT_RAW) run on each block's flow before the block enters a ring, so a
 * capture of one flow on a busy host costs the other flows no ring space,
 * no copy and no wake-up.
 *
 * The program is checked and converted by the kernel (bpf_prog_create(),
 * as for a socket filter) and run by its interpreter or JIT.  A converted
 * classic program reads its packet through an sk_buff, so each block's
 * flow is written out as the packet include/netslice.h describes, in a
 * buffer that a zeroed sk_buff on the stack points at; the sk_buff goes no
 * further than the program.  Programs that read ancillary data (which
 * would look at fields of a real sk_buff or its device) are refused.
 */

#include <linux/bpf.h>
#include <linux/filter.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/rcupdate.h>
#include <linux/skbuff.h>
#include <linux/slab.h>
#include <linux/socket.h>
#include <linux/uaccess.h>

#include "filter.h"

static DEFINE_MUTEX(filter_mutex);	/* serialises nslm_filter_set() */
static struct bpf_prog __rcu *filter_prog;	/* filter_mutex; RCU readers */
static bool filter_at_init;	/* filter_mutex: the core runs it at NSI */
static DEFINE_PER_CPU(u64, filter_rejected);	/* by the CPU that refused */

/*
 * The packet of include/netslice.h for @f: its header bytes written to
 * @pkt, their count returned; *@wire gets the packet length BPF_LEN reads.
 */
static unsigned int flow_packet(const struct nsl_filter_flow *f,
				u8 pkt[NSL_FILTER_PKT_MAX], unsigned int *wire)
{
	unsigned int n = nsl_filter_packet(f, pkt);

	*wire = max(f->len, n);
	return n;
}

/*
 * The sk_buff a converted classic program reads: data, len and data_len
 * (its headlen is len - data_len), head/tail for negative offsets.  Bytes
 * past the headers up to the packet length are "in a fragment"; there is
 * none, so skb_copy_bits() fails for them and the program rejects, as
 * libpcap's bpf_filter() does past its caplen.  Hence a zeroed
 * skb_shared_info after the bytes.
 */
struct flow_skb {
	struct sk_buff skb;
	u8 pkt[NSL_FILTER_PKT_MAX] __aligned(8);
	struct skb_shared_info shinfo;
};

static bool run(const struct bpf_prog *prog, const struct nsl_filter_flow *flow)
{
	struct flow_skb f;
	struct sk_buff *skb = &f.skb;
	unsigned int n, wire;

	memset(skb, 0, sizeof(*skb));
	memset(&f.shinfo, 0, sizeof(f.shinfo));
	n = flow_packet(flow, f.pkt, &wire);
	skb->head = f.pkt;
	skb->data = f.pkt;
	skb->len = wire;
	skb->data_len = wire - n;
	skb_set_tail_pointer(skb, n);
	skb_set_end_offset(skb, (u8 *)&f.shinfo - f.pkt);
	skb_reset_network_header(skb);
	skb_reset_mac_header(skb);
	return bpf_prog_run_pin_on_cpu(prog, skb) != 0;
}

bool nslm_filter_admit(const struct nsl_filter_flow *flow, void *priv)
{
	const struct bpf_prog *prog;
	bool pass;

	/* Called under the core's rcu_read_lock(). */
	prog = rcu_dereference(filter_prog);
	if (!prog)
		return true;
	/* No IP header seen: no packet to run the program over. */
	pass = (flow->family == AF_INET || flow->family == AF_INET6) &&
	       run(prog, flow);
	if (!pass)
		this_cpu_inc(filter_rejected);
	return pass;
}

/* Ancillary loads would read a real sk_buff's fields: not ours to have. */
static bool insns_ok(const struct sock_filter *insns, u32 len)
{
	u32 i;

	for (i = 0; i < len; i++) {
		u16 code = insns[i].code;

		if ((BPF_CLASS(code) == BPF_LD || BPF_CLASS(code) == BPF_LDX) &&
		    (BPF_MODE(code) == BPF_ABS || BPF_MODE(code) == BPF_MSH) &&
		    (s32)insns[i].k < 0)
			return false;
	}
	return true;
}

/*
 * The core runs a program at NSI only while it is one that reads just the
 * flow (@at_init): off before the program changes -- and every NSI that
 * saw it on, under RCU, done -- on after.
 */
static void replace(struct bpf_prog *prog, bool at_init)
{
	struct bpf_prog *old;

	mutex_lock(&filter_mutex);
	if (filter_at_init) {
		nsl_pick_filter_at_init(false);
		synchronize_rcu();
	}
	filter_at_init = prog && at_init;
	/* Asked at emit from before a program can refuse until after. */
	if (prog)
		nsl_pick_filter_set(true);
	old = rcu_replace_pointer(filter_prog, prog,
				  lockdep_is_held(&filter_mutex));
	if (!prog)
		nsl_pick_filter_set(false);
	if (filter_at_init)
		nsl_pick_filter_at_init(true);
	mutex_unlock(&filter_mutex);
	if (old) {
		/* Every admit() that may hold it is over. */
		synchronize_rcu();
		bpf_prog_destroy(old);
	}
}

int nslm_filter_set(const struct nsl_filter *f)
{
	struct sock_fprog_kern fprog;
	struct sock_filter *insns;
	struct bpf_prog *prog;
	int ret;

	if (f->flags & ~NSL_FILTER_FLOW || f->len > NSL_FILTER_MAX_INSNS)
		return -EINVAL;
	if (!f->len) {
		replace(NULL, false);
		return 0;
	}
	insns = memdup_array_user(u64_to_user_ptr(f->insns), f->len,
				  sizeof(*insns));
	if (IS_ERR(insns))
		return PTR_ERR(insns);
	if (!insns_ok(insns, f->len)) {
		ret = -EINVAL;
		goto out;
	}
	fprog.len = f->len;
	fprog.filter = insns;
	/* Checks it (bpf_check_classic()) and converts it; a copy is kept. */
	ret = bpf_prog_create(&prog, &fprog);
	if (ret)
		goto out;
	replace(prog, f->flags & NSL_FILTER_FLOW);
out:
	kfree(insns);
	return ret;
}

void nslm_filter_reset(void)
{
	int cpu;

	replace(NULL, false);
	for_each_possible_cpu(cpu)
		per_cpu(filter_rejected, cpu) = 0;
}

u64 nslm_filter_rejected(void)
{
	u64 sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += READ_ONCE(per_cpu(filter_rejected, cpu));
	return sum;
}
