// SPDX-License-Identifier: GPL-2.0
/*
 * dlmc_ep.c - endpoints and their connections: creation, lookup, teardown.
 *
 * Endpoints live in a global hash keyed by (namespace, ifindex, number).
 * Frames are delivered only to the endpoint bound to the interface they
 * arrived on, in that interface's namespace: a process cannot receive what
 * was addressed to another endpoint.
 */
#include <linux/etherdevice.h>
#include <linux/if_arp.h>
#include <linux/jhash.h>
#include <linux/netdevice.h>
#include <linux/random.h>
#include <linux/slab.h>

#include "dlmc.h"

static DEFINE_HASHTABLE(dlmc_eps, 8);
static DEFINE_SPINLOCK(dlmc_eps_lock);	/* writers of dlmc_eps */

static u32 dlmc_ep_hash(struct net *net, int ifindex, u16 id)
{
	return jhash_3words((u32)(unsigned long)net, ifindex, id, 0);
}

struct dlmc_ep *dlmc_ep_lookup_rcu(struct net *net, int ifindex, u16 id)
{
	struct dlmc_ep *ep;

	hash_for_each_possible_rcu(dlmc_eps, ep, hnode,
				   dlmc_ep_hash(net, ifindex, id)) {
		if (ep->net == net && ep->ifindex == ifindex && ep->id == id)
			return ep;
	}
	return NULL;
}

/* Insert ep unless its address is taken. */
static int dlmc_ep_insert(struct dlmc_ep *ep)
{
	int err = 0;

	spin_lock_bh(&dlmc_eps_lock);
	rcu_read_lock();
	if (dlmc_ep_lookup_rcu(ep->net, ep->ifindex, ep->id))
		err = -EADDRINUSE;
	else
		hash_add_rcu(dlmc_eps, &ep->hnode,
			     dlmc_ep_hash(ep->net, ep->ifindex, ep->id));
	rcu_read_unlock();
	spin_unlock_bh(&dlmc_eps_lock);
	return err;
}

/* Fill in what bind returns from the interface; checks it can carry DLMC. */
static int dlmc_ep_attach(struct dlmc_ep *ep, struct net *net,
			  struct dlmc_bind *b)
{
	struct net_device *dev = dev_get_by_name(net, b->ifname);
	int err = 0;

	if (!dev)
		return -ENODEV;
	if (dev->type != ARPHRD_ETHER || dev->addr_len != ETH_ALEN)
		err = -EPROTONOSUPPORT;
	else if (!dlmc_frag_max(dev->mtu))
		err = -EMSGSIZE;
	if (!err) {
		ep->ifindex = dev->ifindex;
		ether_addr_copy(ep->mac, dev->dev_addr);
		b->mtu = dev->mtu;
		b->frag_max = dlmc_frag_max(dev->mtu);
		memcpy(b->mac, dev->dev_addr, ETH_ALEN);
	}
	dev_put(dev);
	return err;
}

struct dlmc_ep *dlmc_ep_create(struct net *net, const struct dlmc_bind *cb,
			       int *err)
{
	struct dlmc_bind *b = (struct dlmc_bind *)cb;
	struct dlmc_ep *ep = kzalloc(sizeof(*ep), GFP_KERNEL);

	if (!ep) {
		*err = -ENOMEM;
		return NULL;
	}
	ep->id = b->ep;
	ep->epoch = get_random_u16();
	spin_lock_init(&ep->lock);
	INIT_LIST_HEAD(&ep->peers);
	INIT_LIST_HEAD(&ep->ready);
	init_waitqueue_head(&ep->wq);
	mutex_init(&ep->send_mutex);
	timer_setup(&ep->timer, dlmc_timer_fn, 0);
	*err = dlmc_ep_attach(ep, net, b);
	if (*err)
		goto fail;
	ep->net = get_net(net);
	*err = dlmc_ep_insert(ep);
	if (*err) {
		put_net(ep->net);
		goto fail;
	}
	atomic_inc(&dlmc_live);
	return ep;
fail:
	kfree(ep);
	return NULL;
}

void dlmc_msg_free(struct dlmc_ep *ep, struct dlmc_msg *m)
{
	if (ep)
		ep->rx_mem -= m->mem;
	__skb_queue_purge(&m->frags);
	kfree(m);
	atomic_dec(&dlmc_live);
}

static void dlmc_peer_free(struct dlmc_peer *p)
{
	int i;

	for (i = 0; i < DLMC_WINDOW; i++) {
		kfree_skb(p->txs[i].skb);
		kfree_skb(p->rxs[i]);
	}
	if (p->rx_msg)
		dlmc_msg_free(NULL, p->rx_msg);
	kfree(p);
	atomic_dec(&dlmc_live);
}

/*
 * Close: mark dead so handlers that already found ep drop their frame, take
 * it out of the table, wait for those handlers (RCU) and the timer, then
 * free.  Unacknowledged frames are dropped; DLMC_IOC_FLUSH before close
 * is how a sender makes sure they arrived.
 */
void dlmc_ep_destroy(struct dlmc_ep *ep)
{
	struct dlmc_peer *p, *pn;
	struct dlmc_msg *m, *mn;

	spin_lock_bh(&ep->lock);
	ep->dead = true;
	spin_unlock_bh(&ep->lock);
	spin_lock_bh(&dlmc_eps_lock);
	hash_del_rcu(&ep->hnode);
	spin_unlock_bh(&dlmc_eps_lock);
	synchronize_net();
	del_timer_sync(&ep->timer);

	list_for_each_entry_safe(p, pn, &ep->peers, node)
		dlmc_peer_free(p);
	list_for_each_entry_safe(m, mn, &ep->ready, node)
		dlmc_msg_free(NULL, m);
	put_net(ep->net);
	kfree(ep);
	atomic_dec(&dlmc_live);
}

struct dlmc_peer *dlmc_peer_find(struct dlmc_ep *ep, const u8 *mac, u16 id)
{
	struct dlmc_peer *p;

	list_for_each_entry(p, &ep->peers, node) {
		if (p->ep == id && ether_addr_equal(p->mac, mac))
			return p;
	}
	return NULL;
}

/* Find or create a connection; called with ep->lock held. */
struct dlmc_peer *dlmc_peer_get(struct dlmc_ep *ep, const u8 *mac, u16 id,
				gfp_t gfp)
{
	struct dlmc_peer *p = dlmc_peer_find(ep, mac, id);

	if (p || ep->npeers >= dlmc_max_peers)
		return p;
	p = kzalloc(sizeof(*p), gfp);
	if (!p)
		return NULL;
	ether_addr_copy(p->mac, mac);
	p->ep = id;
	list_add(&p->node, &ep->peers);
	ep->npeers++;
	atomic_inc(&dlmc_live);
	return p;
}
