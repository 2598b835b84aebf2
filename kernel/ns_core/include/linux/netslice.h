/* SPDX-License-Identifier: GPL-2.0 */
/*
 * NetSlice core: per-skb, per-layer measurement blocks.
 *
 * NET_SLICE_INIT gives an skb a block (an skb extension), NET_SLICE_START /
 * NET_SLICE_STOP bracket a region, NET_SLICE_EXIT hands the block to the
 * registered receiver when the skb that reached the driver is freed.
 * Without CONFIG_NETSLICE every macro is empty; with it but no receiver
 * registered each site costs one static-key branch.
 */
#ifndef _LINUX_NETSLICE_H
#define _LINUX_NETSLICE_H

#include <uapi/linux/netslice.h>

struct sk_buff;
struct skb_ext;
struct net_device;

/* A receiver gets every finished block, in softirq or process context. */
struct nsl_receiver {
	void (*deliver)(const struct nsl_block *blk, void *priv);
	void *priv;
};

#ifdef CONFIG_NETSLICE

#include <linux/jump_label.h>

DECLARE_STATIC_KEY_FALSE(nsl_active);

int nsl_register(const struct nsl_receiver *rcv);
void nsl_unregister(const struct nsl_receiver *rcv);
void nsl_set_active(bool on);
u64 nsl_emitted(void);
u32 nsl_tsc_khz(void);

void __nsl_init(struct sk_buff *skb, int dir);
void __nsl_start(int region, struct sk_buff *skb);
void __nsl_stop(int region, struct sk_buff *skb);
void __nsl_exit(struct sk_buff *skb);
void __nsl_tx_fork(struct sk_buff *skb, bool retrans);
void __nsl_xmit(struct sk_buff *skb, struct net_device *dev);
void __nsl_gso_segmented(struct sk_buff *orig, struct sk_buff *segs);
void nsl_ext_release(struct skb_ext *ext, void *blk);

#define NSL_HOOK(call)						\
	do {							\
		if (static_branch_unlikely(&nsl_active))	\
			call;					\
	} while (0)

#define NET_SLICE_INIT(skb, dir)	NSL_HOOK(__nsl_init(skb, dir))
#define NET_SLICE_START(id, skb)	NSL_HOOK(__nsl_start(id, skb))
#define NET_SLICE_STOP(id, skb)		NSL_HOOK(__nsl_stop(id, skb))
#define NET_SLICE_EXIT(skb)		NSL_HOOK(__nsl_exit(skb))
/* The clone TCP hands to IP becomes the block that is emitted. */
#define NET_SLICE_TX_FORK(skb, re)	NSL_HOOK(__nsl_tx_fork(skb, re))
/* The skb that enters the driver: stops link, starts nic. */
#define NET_SLICE_XMIT(skb, dev)	NSL_HOOK(__nsl_xmit(skb, dev))
#define NET_SLICE_GSO(orig, segs)	NSL_HOOK(__nsl_gso_segmented(orig, segs))

#else /* !CONFIG_NETSLICE */

#define NET_SLICE_INIT(skb, dir)	do { } while (0)
#define NET_SLICE_START(id, skb)	do { } while (0)
#define NET_SLICE_STOP(id, skb)		do { } while (0)
#define NET_SLICE_EXIT(skb)		do { } while (0)
#define NET_SLICE_TX_FORK(skb, re)	do { } while (0)
#define NET_SLICE_XMIT(skb, dev)	do { } while (0)
#define NET_SLICE_GSO(orig, segs)	do { } while (0)

#endif /* CONFIG_NETSLICE */

/* Block size is fixed at build time; NET_SLICE_CONF names it. */
#define NET_SLICE_CONF			NSL_MAX_RECORDS

#define NSC	NET_SLICE_CONF
#define NSI	NET_SLICE_INIT
#define NSS	NET_SLICE_START
#define NST	NET_SLICE_STOP
#define NSE	NET_SLICE_EXIT

#endif /* _LINUX_NETSLICE_H */
