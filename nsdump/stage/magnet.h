/* SPDX-License-Identifier: GPL-2.0 */
/*
 * MAGNeT event records (nsdump -M): wall-clock time of a TSC reading,
 * what each connection is (ports and addresses, when the records carry
 * them), and the application-versus-wire view of MAGNeT's Table III:
 * per connection and per layer, how many events, of what size, how far
 * apart.
 *
 * Connection identity follows the kernel's socket view: nsl_tcp_state
 * sport/dport are the socket's local and remote ports whatever the
 * direction.  nsl_ip_fields saddr/daddr are the packet's where the event
 * has one (on a receive saddr is the remote end); the socket events
 * (SOCK_SEND, SOCK_RECV) have no packet and carry the socket's own
 * addresses, saddr the local one.
 *
 * A connection's blocks tell its flow too (ABI 2: family, protocol,
 * ports, addresses): the filter expression matches its event records
 * by it (ns_magnet_learn_block).
 */
#ifndef _NS_MAGNET_H
#define _NS_MAGNET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "lib/clock.h"
#include "netslice.h"
#include "stage/stats.h"
#include "stage/tuple.h"

/* One connection, one event type. */
struct ns_layer_acc {
	uint64_t n;
	uint64_t bytes_sum;
	uint32_t bytes_min, bytes_max;
	uint64_t tso;		/* events flagged NSL_EVF_TSO */
	uint64_t *tsc;		/* every event's tsc, sorted at the end */
	size_t ntsc, cap;
	bool oom;		/* tsc missing: spacing over the rest */
};

/* An address of one end of a connection: family 0 while not known. */
struct ns_conn_addr {
	uint16_t family;	/* AF_INET, AF_INET6 or 0 */
	uint8_t a[16];		/* network order, IPv4 in the first 4 bytes */
};

struct ns_conn {
	uint64_t conn;
	bool have_ports;
	uint16_t lport, rport;	/* host order */
	struct ns_conn_addr laddr, raddr;
	bool accounted;		/* some event of it passed the filter */
	bool have_flow;		/* a block of it had a flow: */
	struct ns_tuple flow;	/* that flow seen from the socket, local first */
	struct ns_layer_acc layer[NSL_EV_MAX];
};

struct ns_magnet {
	struct ns_conn *conn;	/* in order of first appearance */
	size_t n, cap;
	uint32_t *slot;		/* open addressing: conn index + 1, 0 free */
	size_t nslots;
	uint64_t events;	/* accounted */
	uint64_t with_addr;	/* event records seen with NSL_EVF_ADDR */
	bool oom;
};

/* Spacing of one layer: consecutive events by tsc. */
struct ns_layer_summary {
	uint64_t n, tso;
	double bytes_mean;
	uint32_t bytes_min, bytes_max;
	uint64_t gaps;		/* n - 1, or fewer if memory ran out */
	double gap_mean_us, gap_cv;
};

void ns_magnet_init(struct ns_magnet *m);
void ns_magnet_free(struct ns_magnet *m);
/*
 * Learn a connection's ports and addresses from any event record that
 * carries them.  True when this record made its ports known.
 */
bool ns_magnet_learn(struct ns_magnet *m, const struct nsl_event_rec *ev);
/*
 * Learn a connection's flow from one of its blocks.  True when this
 * block made it known, or gave it the addresses it lacked.
 */
bool ns_magnet_learn_block(struct ns_magnet *m, const struct nsl_block *b);
/* The connection, or NULL if no record of it has been seen. */
const struct ns_conn *ns_magnet_find(const struct ns_magnet *m,
				     uint64_t conn);
/* Count one (filtered-in) event record into Table III. */
void ns_magnet_account(struct ns_magnet *m, const struct nsl_event_rec *ev);
/* Sorts the layer's tsc; false if it has no events. */
bool ns_magnet_layer(struct ns_layer_acc *acc, uint32_t tsc_khz,
		     struct ns_layer_summary *s);

/* Table III's order: the application's writes first, down and back up. */
extern const uint8_t ns_magnet_order[NSL_EV_MAX - 1];

/* Text helpers shared by the printers. */
void ns_ipv4(uint32_t addr_be, char *buf, size_t len);
/* "ESTABLISHED", ..., or the number. */
const char *ns_tcp_state_name(unsigned int state, char *buf, size_t len);
/* tcpdump's letters: "S.", "P.", "F."; "" for none. */
void ns_tcp_flag_letters(unsigned int flags, char *buf, size_t len);
/* "TCP,IP,ADDR,TSO"; unknown bits in hex; "" for none. */
void ns_event_flags(uint32_t flags, char *buf, size_t len);
/*
 * The data's way as "src:port > dst:port": a send goes local > remote, a
 * receive remote > local; an address the record lacks is taken from
 * what the connection's other records said, else "*".  "" without
 * NSL_EVF_ADDR.
 */
void ns_event_endpoints(const struct ns_magnet *m,
			const struct nsl_event_rec *ev, char *buf, size_t len);
/* "192.0.2.1:43210" for the connection's local or remote end. */
void ns_conn_endpoint(const struct ns_conn *c, bool local, char *buf,
		      size_t len);

static inline bool ns_event_is_send(uint32_t type)
{
	return (type >= NSL_EV_SOCK_SEND && type <= NSL_EV_DEV_SEND) ||
	       type == NSL_EV_UDP_SEND;
}

#endif /* _NS_MAGNET_H */
