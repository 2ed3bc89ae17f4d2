// SPDX-License-Identifier: GPL-2.0
/*
 * dlmc_rx.c - receiving: the EtherType handler, the receive window,
 * reassembly, and recv() copying a message to user space.
 *
 * A frame is validated completely (length, version, type, flags, fragment
 * bounds, checksum) before any field is used; then it must name an endpoint
 * bound to the interface it came in on, and fall inside that connection's
 * window.  Anything else is counted and dropped.  Accepted frames stay in
 * their skbs until recv(), which copies the payload once, straight into the
 * user's buffer.
 */
#include <linux/etherdevice.h>
#include <linux/netdevice.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "dlmc.h"

/* What a buffered frame remembers, in skb->cb. */
struct dlmc_cb {
	u32 tag;
	u32 msg_len;
	u32 frag_off;
	unsigned int mem;
};

static struct dlmc_cb *dlmc_cb(struct sk_buff *skb)
{
	BUILD_BUG_ON(sizeof(struct dlmc_cb) > sizeof(skb->cb));
	return (struct dlmc_cb *)skb->cb;
}

static void dlmc_rx_drop(struct dlmc_ep *ep, struct sk_buff *skb)
{
	ep->rx_mem -= dlmc_cb(skb)->mem;
	kfree_skb(skb);
}

static void dlmc_msg_abort(struct dlmc_ep *ep, struct dlmc_peer *p)
{
	dlmc_msg_free(ep, p->rx_msg);
	p->rx_msg = NULL;
}

/*
 * Append an in-order payload to the message being reassembled on p.
 * Returns true when that completed a message.  ep->lock held.
 */
static bool dlmc_deliver(struct dlmc_ep *ep, struct dlmc_peer *p,
			 struct sk_buff *skb)
{
	struct dlmc_cb *cb = dlmc_cb(skb);
	struct dlmc_msg *m = p->rx_msg;

	if (!m) {
		if (cb->frag_off != 0 || cb->msg_len > dlmc_max_msg)
			goto bad;
		m = kzalloc(sizeof(*m), GFP_ATOMIC);
		if (!m) {
			dlmc_count(DLMC_C_RX_NOMEM);
			goto drop;
		}
		ether_addr_copy(m->src_mac, p->mac);
		m->src_ep = p->ep;
		m->tag = cb->tag;
		m->len = cb->msg_len;
		__skb_queue_head_init(&m->frags);
		p->rx_msg = m;
		atomic_inc(&dlmc_live);
	} else if (cb->frag_off != m->got || cb->msg_len != m->len ||
		   cb->tag != m->tag) {
		dlmc_msg_abort(ep, p);
		goto bad;
	}
	__skb_queue_tail(&m->frags, skb);
	m->mem += cb->mem;
	m->got += skb->len;
	if (m->got < m->len)
		return false;
	list_add_tail(&m->node, &ep->ready);
	p->rx_msg = NULL;
	dlmc_count(DLMC_C_MSGS_RECV);
	return true;
bad:
	dlmc_count(DLMC_C_RX_BAD_PROTO);
drop:
	dlmc_rx_drop(ep, skb);
	return false;
}

/*
 * The remote endpoint was closed and bound again under the same address:
 * what we hold of its old incarnation is dropped and its new frames start
 * at sequence 0.  ep->lock held.
 */
static void dlmc_rx_restart(struct dlmc_ep *ep, struct dlmc_peer *p, u16 epoch)
{
	int i;

	for (i = 0; i < DLMC_WINDOW; i++) {
		if (p->rxs[i])
			dlmc_rx_drop(ep, p->rxs[i]);
		p->rxs[i] = NULL;
	}
	if (p->rx_msg)
		dlmc_msg_abort(ep, p);
	p->rx.nxt = 0;
	p->rx.held = 0;
	p->rx_epoch = epoch;
}

/* A valid DATA frame for ep (ep->lock held); returns an ACK to send or NULL. */
static struct sk_buff *dlmc_rx_data(struct dlmc_ep *ep, struct sk_buff *skb,
				    const u8 *src, const struct dlmc_info *in,
				    bool *wake)
{
	struct dlmc_peer *p = dlmc_peer_get(ep, src, in->src_ep, GFP_ATOMIC);
	struct dlmc_cb *cb = dlmc_cb(skb);
	bool ack = in->flags & DLMC_F_ACKREQ;

	if (!p || ep->rx_mem + skb->truesize > dlmc_rx_mem_max) {
		/* Not acknowledged: the sender will try again later. */
		dlmc_count(DLMC_C_RX_NOMEM);
		kfree_skb(skb);
		return NULL;
	}
	if (p->rx_epoch != in->epoch) {
		if (p->rx.nxt || p->rx.held || p->rx_msg)
			dlmc_rx_restart(ep, p, in->epoch);
		p->rx_epoch = in->epoch;
	}
	switch (dlmc_rxwin_accept(&p->rx, in->seq)) {
	case DLMC_RX_NEW:
		dlmc_count(DLMC_C_RX_FRAMES);
		if (in->seq != p->rx.nxt)
			ack = true;	/* out of order: report the hole */
		cb->tag = in->tag;
		cb->msg_len = in->msg_len;
		cb->frag_off = in->frag_off;
		cb->mem = skb->truesize;
		ep->rx_mem += cb->mem;
		__skb_pull(skb, DLMC_HDR_LEN);
		p->rxs[in->seq % DLMC_WINDOW] = skb;
		while (dlmc_rxwin_pop(&p->rx)) {
			struct sk_buff **slot = &p->rxs[(p->rx.nxt - 1) % DLMC_WINDOW];

			*wake |= dlmc_deliver(ep, p, *slot);
			*slot = NULL;
		}
		break;
	case DLMC_RX_DUP:
		dlmc_count(DLMC_C_RX_DUP);
		kfree_skb(skb);
		ack = true;	/* our ACK may have been lost */
		break;
	case DLMC_RX_OUTSIDE:
		dlmc_count(DLMC_C_RX_OUTSIDE);
		kfree_skb(skb);
		ack = true;
		break;
	}
	return ack ? dlmc_build_ack(ep, p) : NULL;
}

static int dlmc_rcv_ep(struct dlmc_ep *ep, struct sk_buff *skb,
		       const u8 *src, const struct dlmc_info *in)
{
	struct sk_buff_head out;
	struct sk_buff *ack = NULL;
	struct dlmc_peer *p;
	bool wake = false;

	__skb_queue_head_init(&out);
	spin_lock(&ep->lock);
	if (ep->dead) {
		spin_unlock(&ep->lock);
		kfree_skb(skb);
		return NET_RX_DROP;
	}
	if (in->type == DLMC_T_ACK) {
		p = dlmc_peer_find(ep, src, in->src_ep);
		if (p)
			dlmc_tx_ack(ep, p, in, &out);
		else
			dlmc_count(DLMC_C_RX_BAD_PROTO);
		consume_skb(skb);
	} else {
		ack = dlmc_rx_data(ep, skb, src, in, &wake);
	}
	spin_unlock(&ep->lock);
	if (ack)
		__skb_queue_tail(&out, ack);
	dlmc_xmit_list(ep, &out);
	if (wake)
		wake_up(&ep->wq);
	return NET_RX_SUCCESS;
}

static enum dlmc_counter dlmc_err_counter(enum dlmc_frame_err e)
{
	return e == DLMC_E_CSUM ? DLMC_C_RX_BAD_CSUM : DLMC_C_RX_BAD_HDR;
}

/* The packet_type handler; runs in softirq under rcu_read_lock. */
int dlmc_rcv(struct sk_buff *skb, struct net_device *dev,
	     struct packet_type *pt, struct net_device *orig_dev)
{
	u8 src[ETH_ALEN];
	struct dlmc_info in;
	enum dlmc_frame_err e;
	struct dlmc_ep *ep;

	skb = skb_share_check(skb, GFP_ATOMIC);
	if (!skb)
		return NET_RX_DROP;
	if (skb->pkt_type != PACKET_HOST || skb_linearize(skb))
		goto drop;
	e = dlmc_hdr_decode(skb->data, skb->len, &in);
	if (e != DLMC_OK) {
		dlmc_count(dlmc_err_counter(e));
		goto drop;
	}
	/* Ethernet may have padded a short frame. */
	if (pskb_trim(skb, DLMC_HDR_LEN + in.frag_len))
		goto drop;
	ether_addr_copy(src, eth_hdr(skb)->h_source);
	if (!is_valid_ether_addr(src)) {
		dlmc_count(DLMC_C_RX_BAD_HDR);
		goto drop;
	}
	ep = dlmc_ep_lookup_rcu(dev_net(dev), dev->ifindex, in.dst_ep);
	if (!ep) {
		dlmc_count(DLMC_C_RX_NO_EP);
		goto drop;
	}
	return dlmc_rcv_ep(ep, skb, src, &in);
drop:
	kfree_skb(skb);
	return NET_RX_DROP;
}

static bool dlmc_match(const struct dlmc_msg *m, const struct dlmc_recv *r)
{
	if (!(r->flags & DLMC_ANY_TAG) && m->tag != r->tag)
		return false;
	if (!(r->flags & DLMC_ANY_SRC) &&
	    (m->src_ep != r->src_ep || !ether_addr_equal(m->src_mac, r->src_mac)))
		return false;
	return true;
}

/*
 * Take the oldest matching message off ep->ready (ep->lock held).  A match
 * too large for the buffer stays queued: -EMSGSIZE with r->len set.
 */
static struct dlmc_msg *dlmc_take(struct dlmc_ep *ep, struct dlmc_recv *r,
				  int *err)
{
	struct dlmc_msg *m;

	list_for_each_entry(m, &ep->ready, node) {
		if (!dlmc_match(m, r))
			continue;
		if (m->len > r->cap) {
			r->len = m->len;
			*err = -EMSGSIZE;
			return NULL;
		}
		list_del(&m->node);
		*err = 0;
		return m;
	}
	*err = -EAGAIN;
	return NULL;
}

static bool dlmc_has_match(struct dlmc_ep *ep, const struct dlmc_recv *r)
{
	struct dlmc_msg *m;
	bool found = false;

	spin_lock_bh(&ep->lock);
	list_for_each_entry(m, &ep->ready, node) {
		if (dlmc_match(m, r)) {
			found = true;
			break;
		}
	}
	spin_unlock_bh(&ep->lock);
	return found;
}

/* The one copy of the receive path: skb payloads to the user buffer. */
static int dlmc_copy_msg(const struct dlmc_msg *m, void __user *buf)
{
	struct sk_buff *skb;
	size_t off = 0;

	skb_queue_walk(&m->frags, skb) {
		if (copy_to_user(buf + off, skb->data, skb->len))
			return -EFAULT;
		off += skb->len;
		cond_resched();
	}
	return 0;
}

int dlmc_recv(struct dlmc_ep *ep, struct dlmc_recv *r)
{
	void __user *buf = u64_to_user_ptr(r->buf);
	struct dlmc_msg *m;
	int err;

	if (r->flags & ~(DLMC_NONBLOCK | DLMC_ANY_SRC | DLMC_ANY_TAG))
		return -EINVAL;
	if (r->cap > (1U << 30) || !access_ok(buf, r->cap))
		return -EFAULT;
	for (;;) {
		spin_lock_bh(&ep->lock);
		m = dlmc_take(ep, r, &err);
		spin_unlock_bh(&ep->lock);
		if (err != -EAGAIN || (r->flags & DLMC_NONBLOCK))
			break;
		err = wait_event_interruptible(ep->wq, dlmc_has_match(ep, r));
		if (err)
			return err;
	}
	if (!m)
		return err;
	err = dlmc_copy_msg(m, buf);
	spin_lock_bh(&ep->lock);
	if (err) {
		list_add(&m->node, &ep->ready);	/* keep it for a retry */
		m = NULL;
	} else {
		ep->rx_mem -= m->mem;
	}
	spin_unlock_bh(&ep->lock);
	if (!m)
		return err;
	r->len = m->len;
	r->tag = m->tag;
	r->src_ep = m->src_ep;
	memcpy(r->src_mac, m->src_mac, ETH_ALEN);
	dlmc_msg_free(NULL, m);
	return 0;
}
