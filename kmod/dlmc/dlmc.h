/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dlmc.h - internal structures of the DLMC module.
 *
 * Object model: an open file of /dev/dlmc owns one endpoint (struct
 * dlmc_ep), bound to (network namespace, interface, endpoint number).  An
 * endpoint talks to remote endpoints through connections (struct dlmc_peer),
 * each with its own sequence space, send window and receive window, so that
 * message order between two endpoints is preserved and no state is shared
 * between endpoints of different processes.
 *
 * Locking: ep->lock (a BH-safe spinlock) protects everything inside an
 * endpoint, including its connections.  The receive handler finds endpoints
 * through an RCU hash table and then takes ep->lock; ep->dead, set under
 * the lock before the endpoint leaves the table, tells late arrivals to go
 * away.  ep->send_mutex serialises senders so one message's frames are
 * numbered consecutively.
 */
#ifndef DLMC_H
#define DLMC_H

#include <linux/atomic.h>
#include <linux/hashtable.h>
#include <linux/if_ether.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/skbuff.h>
#include <linux/spinlock.h>
#include <linux/timer.h>
#include <linux/wait.h>
#include <net/net_namespace.h>

#include "dlmc_proto.h"
#include "dlmc_uapi.h"

/* Module parameters (dlmc_main.c). */
extern unsigned short dlmc_ethertype;
extern unsigned int dlmc_loss_ppm;
extern unsigned int dlmc_corrupt_ppm;
extern unsigned int dlmc_rto_ms;
extern unsigned int dlmc_max_retries;
extern unsigned int dlmc_max_msg;
extern unsigned int dlmc_rx_mem_max;
extern unsigned int dlmc_max_peers;

/* Global counters, one per field of struct dlmc_stats. */
enum dlmc_counter {
	DLMC_C_TX_FRAMES, DLMC_C_TX_RETRANS, DLMC_C_TX_ACKS, DLMC_C_RX_FRAMES,
	DLMC_C_RX_ACKS, DLMC_C_RX_DUP, DLMC_C_RX_OUTSIDE, DLMC_C_RX_BAD_CSUM,
	DLMC_C_RX_BAD_HDR, DLMC_C_RX_BAD_PROTO, DLMC_C_RX_NO_EP,
	DLMC_C_RX_NOMEM, DLMC_C_INJ_LOST, DLMC_C_INJ_CORRUPT,
	DLMC_C_MSGS_SENT, DLMC_C_MSGS_RECV, DLMC_C_NR
};

extern atomic64_t dlmc_counters[DLMC_C_NR];
/* Endpoints, connections and messages alive; must be 0 at unload. */
extern atomic_t dlmc_live;

static inline void dlmc_count(enum dlmc_counter c)
{
	atomic64_inc(&dlmc_counters[c]);
}

/* A message completely received, waiting for recv(). */
struct dlmc_msg {
	struct list_head node;
	u8 src_mac[ETH_ALEN];
	u16 src_ep;
	u32 tag;
	u32 len;
	u32 got;
	unsigned int mem;		/* truesize of frags, for rx_mem */
	struct sk_buff_head frags;	/* payload only, in offset order */
};

struct dlmc_txslot {
	struct sk_buff *skb;		/* ready to send, Ethernet header on */
	unsigned long sent;		/* jiffies of the last transmission */
	unsigned int tries;
};

/* One connection: this endpoint <-> (remote MAC, remote endpoint). */
struct dlmc_peer {
	struct list_head node;
	u8 mac[ETH_ALEN];
	u16 ep;
	int err;			/* sticky, e.g. -ETIMEDOUT */

	struct dlmc_txwin tx;
	struct dlmc_txslot txs[DLMC_WINDOW];
	unsigned long srtt8;		/* smoothed round trip, jiffies * 8 */
	bool tx_busy;			/* a message is partly accepted */
	u32 tx_len, tx_done, tx_tag;

	struct dlmc_rxwin rx;
	u16 rx_epoch;			/* the remote endpoint's incarnation */
	struct sk_buff *rxs[DLMC_WINDOW];
	struct dlmc_msg *rx_msg;	/* message being reassembled */
};

struct dlmc_ep {
	struct hlist_node hnode;
	struct rcu_head rcu;
	struct net *net;
	int ifindex;
	u16 id;
	u16 epoch;			/* random, drawn at bind */
	u8 mac[ETH_ALEN];

	spinlock_t lock;		/* dead, peers, ready, rx_mem, windows */
	bool dead;
	struct list_head peers;
	unsigned int npeers;
	struct list_head ready;		/* struct dlmc_msg, arrival order */
	unsigned int rx_mem;
	wait_queue_head_t wq;
	struct timer_list timer;
	struct mutex send_mutex;	/* one sender at a time: message order */
};

/* dlmc_ep.c: endpoint table and lifetime. */
struct dlmc_ep *dlmc_ep_create(struct net *net, const struct dlmc_bind *b,
			       int *err);
void dlmc_ep_destroy(struct dlmc_ep *ep);
struct dlmc_ep *dlmc_ep_lookup_rcu(struct net *net, int ifindex, u16 id);
struct dlmc_peer *dlmc_peer_find(struct dlmc_ep *ep, const u8 *mac, u16 id);
struct dlmc_peer *dlmc_peer_get(struct dlmc_ep *ep, const u8 *mac, u16 id,
				gfp_t gfp);
void dlmc_msg_free(struct dlmc_ep *ep, struct dlmc_msg *m);

/* dlmc_tx.c: building and sending frames, retransmission. */
int dlmc_send(struct dlmc_ep *ep, const struct dlmc_send *a);
int dlmc_flush(struct dlmc_ep *ep, unsigned int timeout_ms);
void dlmc_xmit(struct dlmc_ep *ep, struct sk_buff *skb);
void dlmc_xmit_list(struct dlmc_ep *ep, struct sk_buff_head *list);
struct sk_buff *dlmc_build_ack(struct dlmc_ep *ep, struct dlmc_peer *p);
void dlmc_tx_ack(struct dlmc_ep *ep, struct dlmc_peer *p,
		 const struct dlmc_info *in, struct sk_buff_head *out);
void dlmc_timer_fn(struct timer_list *t);

/* dlmc_chr.c: the /dev/dlmc misc device. */
int dlmc_chr_init(void);
void dlmc_chr_exit(void);

/* dlmc_rx.c: the packet handler. */
int dlmc_rcv(struct sk_buff *skb, struct net_device *dev,
	     struct packet_type *pt, struct net_device *orig_dev);
int dlmc_recv(struct dlmc_ep *ep, struct dlmc_recv *a);

#endif /* DLMC_H */
