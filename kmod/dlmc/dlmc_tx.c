// SPDX-License-Identifier: GPL-2.0
/*
 * dlmc_tx.c - sending: frames built from pinned user pages, the send
 * window, acknowledgements and timer-driven selective retransmission.
 *
 * A frame is built once: the payload is copied straight from the pinned
 * user pages into the skb that goes on the wire, and that skb stays in the
 * connection's window until it is acknowledged, so a retransmission is a
 * clone of it rather than a second trip to user memory.  Only frames not
 * yet acknowledged (cumulatively or selectively) are ever sent again.
 */
#include <linux/etherdevice.h>
#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/netdevice.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "dlmc.h"

/* Frames built per pass; bounds pinned pages and stack use. */
#define DLMC_BATCH	16
/* Ask for an ACK at least this often so the window keeps sliding. */
#define DLMC_ACK_EVERY	16

static unsigned long dlmc_rto(void)
{
	unsigned long j = msecs_to_jiffies(dlmc_rto_ms);

	return j ? j : 1;
}

/*
 * Retransmission timeout of a connection: the rto_ms floor, or twice the
 * smoothed round trip when the path (or an emulated CPU) is slower, so
 * frames still on their way are not sent again.
 */
static unsigned long dlmc_peer_rto(const struct dlmc_peer *p)
{
	return max(dlmc_rto(), p->srtt8 / 4 + 1);
}

/* Round-trip sample from a frame acknowledged after one transmission. */
static void dlmc_rtt_sample(struct dlmc_peer *p, const struct dlmc_txslot *s)
{
	unsigned long rtt = jiffies - s->sent;

	if (s->tries != 1)
		return;		/* Karn: ambiguous after a retransmission */
	if (!p->srtt8)
		p->srtt8 = rtt << 3;
	else
		p->srtt8 = p->srtt8 - (p->srtt8 >> 3) + rtt;
}

static bool dlmc_chance(unsigned int ppm)
{
	return ppm && get_random_u32() % 1000000 < ppm;
}

/* Test hook: flip bits in one byte after the Ethernet header of a copy. */
static struct sk_buff *dlmc_corrupt(struct sk_buff *skb)
{
	struct sk_buff *c = skb_copy(skb, GFP_ATOMIC);
	unsigned int pos;

	kfree_skb(skb);
	if (!c || c->len <= ETH_HLEN) {
		kfree_skb(c);
		return NULL;
	}
	pos = ETH_HLEN + get_random_u32() % (c->len - ETH_HLEN);
	c->data[pos] ^= 1 + get_random_u32() % 255;
	return c;
}

/* Put one frame (skb->data at its Ethernet header) on the wire; consumes skb. */
void dlmc_xmit(struct dlmc_ep *ep, struct sk_buff *skb)
{
	struct net_device *dev;

	rcu_read_lock();
	dev = dev_get_by_index_rcu(ep->net, ep->ifindex);
	if (!dev || !netif_running(dev)) {
		kfree_skb(skb);
		goto out;
	}
	if (dlmc_chance(dlmc_loss_ppm)) {
		dlmc_count(DLMC_C_INJ_LOST);
		kfree_skb(skb);
		goto out;
	}
	if (dlmc_chance(dlmc_corrupt_ppm)) {
		dlmc_count(DLMC_C_INJ_CORRUPT);
		skb = dlmc_corrupt(skb);
		if (!skb)
			goto out;
	}
	skb->dev = dev;
	if (ether_addr_equal(((struct ethhdr *)skb->data)->h_dest,
			     dev->dev_addr)) {
		/* Ranks on the same interface: hand the frame to ourselves. */
		skb->protocol = eth_type_trans(skb, dev);
		netif_rx(skb);
	} else {
		dev_queue_xmit(skb);
	}
out:
	rcu_read_unlock();
}

void dlmc_xmit_list(struct dlmc_ep *ep, struct sk_buff_head *list)
{
	struct sk_buff *skb;

	while ((skb = __skb_dequeue(list)))
		dlmc_xmit(ep, skb);
}

/* Empty frame with headroom for the Ethernet header and room for len bytes. */
static struct sk_buff *dlmc_alloc_frame(struct net_device *dev,
					unsigned int len, gfp_t gfp)
{
	unsigned int head = LL_RESERVED_SPACE(dev) + DLMC_HDR_LEN;
	struct sk_buff *skb;

	skb = alloc_skb(head + len + dev->needed_tailroom, gfp);
	if (skb)
		skb_reserve(skb, head);
	return skb;
}

/* Push the (still blank) DLMC header and the Ethernet header. */
static int dlmc_frame_headers(struct sk_buff *skb, struct net_device *dev,
			      const u8 *dst)
{
	skb_push(skb, DLMC_HDR_LEN);
	skb_reset_network_header(skb);
	skb->protocol = htons(dlmc_ethertype);
	if (dev_hard_header(skb, dev, dlmc_ethertype, dst, NULL, skb->len) < 0)
		return -EINVAL;
	skb_reset_mac_header(skb);
	return 0;
}

static void dlmc_frame_seal(struct sk_buff *skb, const struct dlmc_info *in,
			    u64 payload_sum)
{
	dlmc_hdr_encode((struct dlmc_hdr *)skb_network_header(skb), in,
			payload_sum);
}

/* Called under ep->lock from the receive path. */
struct sk_buff *dlmc_build_ack(struct dlmc_ep *ep, struct dlmc_peer *p)
{
	struct dlmc_info in = {
		.type = DLMC_T_ACK,
		.dst_ep = p->ep,
		.src_ep = ep->id,
		.seq = p->rx.nxt,
		.sack = p->rx.held,
		.epoch = p->rx_epoch,
	};
	struct net_device *dev;
	struct sk_buff *skb;

	dev = dev_get_by_index_rcu(ep->net, ep->ifindex);
	if (!dev)
		return NULL;
	skb = dlmc_alloc_frame(dev, 0, GFP_ATOMIC);
	if (!skb)
		return NULL;
	if (dlmc_frame_headers(skb, dev, p->mac)) {
		kfree_skb(skb);
		return NULL;
	}
	dlmc_frame_seal(skb, &in, 0);
	dlmc_count(DLMC_C_TX_ACKS);
	return skb;
}

/* Queue a clone of slot s for (re)transmission; ep->lock held. */
static void dlmc_slot_send(struct dlmc_txslot *s, struct sk_buff_head *out)
{
	struct sk_buff *c = skb_clone(s->skb, GFP_ATOMIC);

	s->sent = jiffies;
	s->tries++;
	if (c)
		__skb_queue_tail(out, c);
}

/* Give up on a connection: drop its unacknowledged frames. */
static void dlmc_peer_fail(struct dlmc_peer *p, int err)
{
	int i;

	p->err = err;
	for (i = 0; i < DLMC_WINDOW; i++) {
		kfree_skb(p->txs[i].skb);
		p->txs[i].skb = NULL;
	}
	p->tx.una = p->tx.nxt;
	p->tx.acked = 0;
	p->tx_busy = false;
}

/*
 * A frame sent n times waits rto << (n - 1), at most DLMC_BACKOFF_MAX
 * doublings, before the timer sends it again: when the link (or an emulated
 * CPU) is slower than rto, retransmissions back off instead of flooding.
 */
#define DLMC_BACKOFF_MAX	3

static unsigned long dlmc_backoff(unsigned long rto, unsigned int tries)
{
	return rto << min(tries ? tries - 1 : 0, (unsigned int)DLMC_BACKOFF_MAX);
}

/*
 * Resend frames of p that are unacknowledged and were last sent long enough
 * ago (timer: the backed-off rto; fast: age, and only frames sent once);
 * stop at limit (exclusive).  Returns false if the connection failed.
 */
static bool dlmc_resend_old(struct dlmc_peer *p, u32 limit, unsigned long age,
			    bool fast, struct sk_buff_head *out)
{
	unsigned int i, n = min(limit - p->tx.una, dlmc_txwin_inflight(&p->tx));
	struct dlmc_txslot *s;
	u32 seq;

	for (i = 0; i < n; i++) {
		seq = p->tx.una + i;
		s = &p->txs[seq % DLMC_WINDOW];
		if (dlmc_txwin_is_acked(&p->tx, seq) || !s->skb ||
		    (fast && s->tries > 1))
			continue;
		if (time_before(jiffies, s->sent +
				(fast ? age : dlmc_backoff(age, s->tries))))
			continue;
		if (s->tries >= dlmc_max_retries) {
			dlmc_peer_fail(p, -ETIMEDOUT);
			return false;
		}
		dlmc_slot_send(s, out);
		dlmc_count(DLMC_C_TX_RETRANS);
	}
	return true;
}

/*
 * An ACK from p arrived (ep->lock held).  Free what it acknowledges; frames
 * below the highest selectively acknowledged one are holes (the link does
 * not reorder), so resend those at once rather than waiting for the timer.
 */
void dlmc_tx_ack(struct dlmc_ep *ep, struct dlmc_peer *p,
		 const struct dlmc_info *in, struct sk_buff_head *out)
{
	u32 base = p->tx.una;
	u64 newly;
	int i;

	if (in->epoch != ep->epoch ||
	    dlmc_txwin_ack(&p->tx, in->seq, in->sack, &newly) < 0) {
		dlmc_count(DLMC_C_RX_OUTSIDE);
		return;
	}
	dlmc_count(DLMC_C_RX_ACKS);
	for (i = 0; newly; i++, newly >>= 1) {
		struct dlmc_txslot *s = &p->txs[(base + i) % DLMC_WINDOW];

		if (newly & 1) {
			dlmc_rtt_sample(p, s);
			kfree_skb(s->skb);
			s->skb = NULL;
		}
	}
	if (in->sack)
		dlmc_resend_old(p, in->seq + fls64(in->sack) - 1,
				max(dlmc_peer_rto(p) / 4, 1UL), true, out);
	wake_up(&ep->wq);
}

void dlmc_timer_fn(struct timer_list *t)
{
	struct dlmc_ep *ep = from_timer(ep, t, timer);
	unsigned long rto = dlmc_rto();
	struct sk_buff_head out;
	struct dlmc_peer *p;
	bool pending = false, failed = false;

	__skb_queue_head_init(&out);
	spin_lock(&ep->lock);
	if (ep->dead) {
		spin_unlock(&ep->lock);
		return;
	}
	list_for_each_entry(p, &ep->peers, node) {
		if (!dlmc_resend_old(p, p->tx.nxt, dlmc_peer_rto(p), false,
				     &out))
			failed = true;
		else if (dlmc_txwin_inflight(&p->tx))
			pending = true;
	}
	if (pending)
		mod_timer(&ep->timer, jiffies + max(rto / 2, 1UL));
	spin_unlock(&ep->lock);
	dlmc_xmit_list(ep, &out);
	if (failed)
		wake_up(&ep->wq);
}

/* Copy len bytes at byte offset off of the pinned pages to dst. */
static void dlmc_copy_pages(void *dst, struct page **pages, size_t off,
			    size_t len)
{
	while (len) {
		size_t in_page = min_t(size_t, len, PAGE_SIZE - offset_in_page(off));
		void *src = kmap_local_page(pages[off >> PAGE_SHIFT]);

		memcpy(dst, src + offset_in_page(off), in_page);
		kunmap_local(src);
		dst += in_page;
		off += in_page;
		len -= in_page;
	}
}

struct dlmc_batch {
	struct sk_buff *skb[DLMC_BATCH];
	u64 sum[DLMC_BATCH];
	u32 off[DLMC_BATCH];
	u16 len[DLMC_BATCH];
	unsigned int n;
};

static void dlmc_batch_free(struct dlmc_batch *b)
{
	while (b->n)
		kfree_skb(b->skb[--b->n]);
}

/*
 * Build up to want frames of message a starting at byte done, outside any
 * spinlock: pin the user pages they cover, copy into fresh skbs, checksum
 * the payload.
 */
static int dlmc_batch_build(struct dlmc_batch *b, struct net_device *dev,
			    const struct dlmc_send *a, u32 done,
			    unsigned int want, unsigned int frag)
{
	unsigned long start = a->buf + done;
	size_t span = min_t(size_t, a->len - done, (size_t)want * frag);
	size_t first = start & PAGE_MASK, poff = offset_in_page(start);
	int npages = span ? DIV_ROUND_UP(poff + span, PAGE_SIZE) : 0;
	struct page **pages = NULL;
	int pinned = 0, err = 0;
	size_t pos = 0;

	b->n = 0;
	if (npages) {
		pages = kvmalloc_array(npages, sizeof(*pages), GFP_KERNEL);
		if (!pages)
			return -ENOMEM;
		pinned = pin_user_pages_fast(first, npages, 0, pages);
		if (pinned != npages) {
			err = pinned < 0 ? pinned : -EFAULT;
			goto out;
		}
	}
	do {
		u16 len = min_t(size_t, span - pos, frag);
		struct sk_buff *skb = dlmc_alloc_frame(dev, len, GFP_KERNEL);

		if (!skb) {
			err = -ENOMEM;
			break;
		}
		dlmc_copy_pages(skb_put(skb, len), pages, poff + pos, len);
		b->sum[b->n] = dlmc_csum_add(0, skb->data, len);
		b->off[b->n] = done + pos;
		b->len[b->n] = len;
		b->skb[b->n++] = skb;
		err = dlmc_frame_headers(skb, dev, a->dst_mac);
		if (err)
			break;
		pos += len;
	} while (pos < span && b->n < want);
out:
	if (pinned > 0)
		unpin_user_pages(pages, pinned);
	kvfree(pages);
	if (err)
		dlmc_batch_free(b);
	return err;
}

/* Number the built frames, put them in the window, queue them to send. */
static void dlmc_batch_commit(struct dlmc_ep *ep, struct dlmc_peer *p,
			      struct dlmc_batch *b, const struct dlmc_send *a,
			      struct sk_buff_head *out)
{
	struct dlmc_info in = {
		.type = DLMC_T_DATA,
		.dst_ep = a->dst_ep,
		.src_ep = ep->id,
		.tag = a->tag,
		.msg_len = a->len,
		.epoch = ep->epoch,
	};
	struct dlmc_txslot *s;
	unsigned int i;

	for (i = 0; i < b->n; i++) {
		in.seq = p->tx.nxt++;
		in.frag_off = b->off[i];
		in.frag_len = b->len[i];
		in.flags = 0;
		if (in.frag_off + in.frag_len == a->len ||
		    in.seq % DLMC_ACK_EVERY == DLMC_ACK_EVERY - 1 ||
		    !dlmc_txwin_space(&p->tx))
			in.flags = DLMC_F_ACKREQ;
		dlmc_frame_seal(b->skb[i], &in, b->sum[i]);
		s = &p->txs[in.seq % DLMC_WINDOW];
		s->skb = b->skb[i];
		s->tries = 0;
		dlmc_slot_send(s, out);
		dlmc_count(DLMC_C_TX_FRAMES);
	}
	b->n = 0;
	if (!timer_pending(&ep->timer))
		mod_timer(&ep->timer, jiffies + dlmc_rto());
}

/* Window space toward p, or 0; *err gets the connection's error. */
static unsigned int dlmc_tx_room(struct dlmc_ep *ep, struct dlmc_peer *p,
				 int *err)
{
	unsigned int room;

	spin_lock_bh(&ep->lock);
	*err = p->err;
	room = dlmc_txwin_space(&p->tx);
	spin_unlock_bh(&ep->lock);
	return room;
}

static bool dlmc_tx_can_go(struct dlmc_ep *ep, struct dlmc_peer *p)
{
	int err;

	return dlmc_tx_room(ep, p, &err) || err;
}

/*
 * Claim the connection for message a: a new message (done == 0) needs an
 * idle connection; a continuation must match the message in progress.
 */
static struct dlmc_peer *dlmc_tx_claim(struct dlmc_ep *ep,
				       const struct dlmc_send *a, int *err)
{
	struct dlmc_peer *p;

	spin_lock_bh(&ep->lock);
	p = dlmc_peer_get(ep, a->dst_mac, a->dst_ep, GFP_ATOMIC);
	if (!p) {
		*err = ep->npeers >= dlmc_max_peers ? -ENOSPC : -ENOMEM;
	} else if (p->err) {
		*err = p->err;
	} else if (p->tx_busy && (p->tx_len != a->len || p->tx_tag != a->tag ||
				  p->tx_done != a->done)) {
		*err = a->done ? -EINVAL : -EBUSY;
	} else if (!p->tx_busy && a->done) {
		*err = -EINVAL;
	} else {
		p->tx_busy = true;
		p->tx_len = a->len;
		p->tx_tag = a->tag;
		p->tx_done = a->done;
		*err = 0;
	}
	spin_unlock_bh(&ep->lock);
	return *err ? NULL : p;
}

static int dlmc_send_check(const struct dlmc_send *a)
{
	if (a->flags & ~DLMC_NONBLOCK)
		return -EINVAL;
	if (a->len > dlmc_max_msg || a->len > (1U << 30))
		return -EMSGSIZE;
	if (a->done > a->len)
		return -EINVAL;
	if (!is_valid_ether_addr(a->dst_mac))
		return -EINVAL;
	if (!access_ok(u64_to_user_ptr(a->buf), a->len))
		return -EFAULT;
	return 0;
}

/* Move message a forward from a->done; returns bytes accepted in total. */
static int dlmc_send_frames(struct dlmc_ep *ep, struct dlmc_peer *p,
			    struct net_device *dev, const struct dlmc_send *a)
{
	unsigned int frag = dlmc_frag_max(dev->mtu);
	struct sk_buff_head out;
	struct dlmc_batch b;
	u32 done = a->done;
	unsigned int room, left;
	int err = 0;
	bool first = true;

	if (!frag)
		return -EMSGSIZE;
	__skb_queue_head_init(&out);
	while (done < a->len || (first && a->len == 0)) {
		room = dlmc_tx_room(ep, p, &err);
		if (err)
			break;
		if (!room && (a->flags & DLMC_NONBLOCK)) {
			err = -EAGAIN;
			break;
		}
		if (!room) {
			err = wait_event_interruptible(ep->wq,
						       dlmc_tx_can_go(ep, p));
			if (err)
				break;
			continue;
		}
		left = a->len ? DIV_ROUND_UP(a->len - done, frag) : 1;
		err = dlmc_batch_build(&b, dev, a, done,
				       min3(room, left, (unsigned int)DLMC_BATCH),
				       frag);
		if (err)
			break;
		spin_lock_bh(&ep->lock);
		err = p->err;
		if (!err) {
			/* Only this thread adds frames (send_mutex). */
			done = b.off[b.n - 1] + b.len[b.n - 1];
			p->tx_done = done;
			if (done == a->len)
				p->tx_busy = false;
			dlmc_batch_commit(ep, p, &b, a, &out);
		}
		spin_unlock_bh(&ep->lock);
		dlmc_batch_free(&b);
		dlmc_xmit_list(ep, &out);
		first = false;
		/* ACKs may keep the window open: never hog the CPU. */
		cond_resched();
		if (err)
			break;
	}
	if (done == a->len && !first)
		dlmc_count(DLMC_C_MSGS_SENT);
	/* Progress counts even if a wait was interrupted. */
	return done > a->done || (a->len == 0 && !first) ? done : err;
}

int dlmc_send(struct dlmc_ep *ep, const struct dlmc_send *a)
{
	struct net_device *dev;
	struct dlmc_peer *p;
	int err = dlmc_send_check(a);

	if (err)
		return err;
	if (mutex_lock_interruptible(&ep->send_mutex))
		return -ERESTARTSYS;
	dev = dev_get_by_index(ep->net, ep->ifindex);
	if (!dev) {
		err = -ENODEV;
		goto out;
	}
	p = dlmc_tx_claim(ep, a, &err);
	if (p)
		err = dlmc_send_frames(ep, p, dev, a);
	if (p && err < 0) {
		/* Nothing of a new message went out: free the connection. */
		spin_lock_bh(&ep->lock);
		if (p->tx_busy && p->tx_done == 0)
			p->tx_busy = false;
		spin_unlock_bh(&ep->lock);
	}
	dev_put(dev);
out:
	mutex_unlock(&ep->send_mutex);
	return err;
}

static bool dlmc_all_acked(struct dlmc_ep *ep, int *err)
{
	struct dlmc_peer *p;
	bool done = true;

	spin_lock_bh(&ep->lock);
	*err = 0;
	list_for_each_entry(p, &ep->peers, node) {
		if (p->err)
			*err = p->err;
		else if (dlmc_txwin_inflight(&p->tx))
			done = false;
	}
	spin_unlock_bh(&ep->lock);
	return done;
}

int dlmc_flush(struct dlmc_ep *ep, unsigned int timeout_ms)
{
	long t = timeout_ms ? msecs_to_jiffies(timeout_ms) : MAX_SCHEDULE_TIMEOUT;
	int err = 0;
	long rc;

	rc = wait_event_interruptible_timeout(ep->wq, dlmc_all_acked(ep, &err),
					      t);
	if (rc < 0)
		return rc;
	if (rc == 0)
		return -ETIMEDOUT;
	return err;
}
