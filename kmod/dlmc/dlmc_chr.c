// SPDX-License-Identifier: GPL-2.0
/*
 * dlmc_chr.c - the /dev/dlmc character device: one endpoint per open file.
 *
 * Permissions: the node is created mode 0600 (root only), because an
 * endpoint can put arbitrary payloads on the wire under the DLMC EtherType.
 * A site that trusts a group of MPI users gives the node to that group
 * (a udev rule: KERNEL=="dlmc", GROUP="mpi", MODE="0660").
 *
 * Every argument is copied in whole with copy_from_user and checked here or
 * in the function it is passed to; user buffers are checked with access_ok
 * and then only touched through fault-safe accessors.
 */
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/netdevice.h>
#include <linux/nsproxy.h>
#include <linux/poll.h>
#include <linux/uaccess.h>

#include "dlmc.h"

struct dlmc_file {
	struct mutex lock;		/* bind vs. everything else */
	struct dlmc_ep *ep;
};

static int dlmc_open(struct inode *inode, struct file *f)
{
	struct dlmc_file *df = kzalloc(sizeof(*df), GFP_KERNEL);

	if (!df)
		return -ENOMEM;
	mutex_init(&df->lock);
	f->private_data = df;
	return 0;
}

static int dlmc_release(struct inode *inode, struct file *f)
{
	struct dlmc_file *df = f->private_data;

	if (df->ep)
		dlmc_ep_destroy(df->ep);
	kfree(df);
	return 0;
}

static long dlmc_ioc_bind(struct dlmc_file *df, void __user *arg)
{
	struct dlmc_bind b;
	struct dlmc_ep *ep;
	int err = 0;

	if (copy_from_user(&b, arg, sizeof(b)))
		return -EFAULT;
	if (b.pad || !memchr(b.ifname, 0, sizeof(b.ifname)))
		return -EINVAL;
	mutex_lock(&df->lock);
	if (df->ep) {
		err = -EBUSY;
		goto out;
	}
	ep = dlmc_ep_create(current->nsproxy->net_ns, &b, &err);
	if (!ep)
		goto out;
	if (copy_to_user(arg, &b, sizeof(b))) {
		dlmc_ep_destroy(ep);
		err = -EFAULT;
		goto out;
	}
	/* Readers test df->ep without the mutex. */
	smp_store_release(&df->ep, ep);
out:
	mutex_unlock(&df->lock);
	return err;
}

static long dlmc_ioc_recv(struct dlmc_ep *ep, void __user *arg)
{
	struct dlmc_recv r;
	long err;

	if (copy_from_user(&r, arg, sizeof(r)))
		return -EFAULT;
	err = dlmc_recv(ep, &r);
	if (err && err != -EMSGSIZE)
		return err;
	if (copy_to_user(arg, &r, sizeof(r)))
		return -EFAULT;
	return err;
}

static long dlmc_ioc_stats(void __user *arg)
{
	u64 v[DLMC_C_NR];
	int i;

	BUILD_BUG_ON(sizeof(struct dlmc_stats) != sizeof(v));
	for (i = 0; i < DLMC_C_NR; i++)
		v[i] = atomic64_read(&dlmc_counters[i]);
	return copy_to_user(arg, v, sizeof(v)) ? -EFAULT : 0;
}

static long dlmc_ioctl(struct file *f, unsigned int cmd, unsigned long uarg)
{
	struct dlmc_file *df = f->private_data;
	void __user *arg = (void __user *)uarg;
	struct dlmc_ep *ep;
	struct dlmc_send s;
	struct dlmc_flush fl;

	if (cmd == DLMC_IOC_BIND)
		return dlmc_ioc_bind(df, arg);
	if (cmd == DLMC_IOC_STATS)
		return dlmc_ioc_stats(arg);
	/* Pairs with the release in dlmc_ioc_bind: a bound ep is complete. */
	ep = smp_load_acquire(&df->ep);
	switch (cmd) {
	case DLMC_IOC_SEND:
		if (!ep)
			return -ENOTCONN;
		if (copy_from_user(&s, arg, sizeof(s)))
			return -EFAULT;
		return dlmc_send(ep, &s);
	case DLMC_IOC_RECV:
		if (!ep)
			return -ENOTCONN;
		return dlmc_ioc_recv(ep, arg);
	case DLMC_IOC_FLUSH:
		if (!ep)
			return -ENOTCONN;
		if (copy_from_user(&fl, arg, sizeof(fl)))
			return -EFAULT;
		if (fl.pad)
			return -EINVAL;
		return dlmc_flush(ep, fl.timeout_ms);
	}
	return -ENOTTY;
}

static __poll_t dlmc_poll(struct file *f, poll_table *wait)
{
	struct dlmc_file *df = f->private_data;
	/* Pairs with the release in dlmc_ioc_bind. */
	struct dlmc_ep *ep = smp_load_acquire(&df->ep);
	__poll_t mask = EPOLLOUT | EPOLLWRNORM;

	if (!ep)
		return EPOLLERR;
	poll_wait(f, &ep->wq, wait);
	spin_lock_bh(&ep->lock);
	if (!list_empty(&ep->ready))
		mask |= EPOLLIN | EPOLLRDNORM;
	spin_unlock_bh(&ep->lock);
	return mask;
}

static const struct file_operations dlmc_fops = {
	.owner = THIS_MODULE,
	.open = dlmc_open,
	.release = dlmc_release,
	.unlocked_ioctl = dlmc_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.poll = dlmc_poll,
	.llseek = noop_llseek,
};

static struct miscdevice dlmc_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = DLMC_DEV_NAME,
	.fops = &dlmc_fops,
	.mode = 0600,
};

int dlmc_chr_init(void)
{
	return misc_register(&dlmc_misc);
}

void dlmc_chr_exit(void)
{
	misc_deregister(&dlmc_misc);
}
