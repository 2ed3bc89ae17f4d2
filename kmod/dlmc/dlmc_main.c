// SPDX-License-Identifier: GPL-2.0
/*
 * dlmc_main.c - module parameters, counters, load and unload.
 *
 * Unload safety: every open endpoint holds a reference on the module through
 * the character device's owner field, so rmmod fails with EBUSY until the
 * last endpoint is closed; closing an endpoint stops its timer and waits for
 * receive handlers (RCU) before freeing.  At exit, dev_remove_pack() waits
 * for handlers still running on other CPUs.
 */
#include <linux/module.h>
#include <linux/netdevice.h>

#include "dlmc.h"

unsigned short dlmc_ethertype = DLMC_ETHERTYPE;
module_param_named(ethertype, dlmc_ethertype, ushort, 0444);
MODULE_PARM_DESC(ethertype, "EtherType of DLMC frames (default 0x080A)");

unsigned int dlmc_loss_ppm;
module_param_named(loss_ppm, dlmc_loss_ppm, uint, 0644);
MODULE_PARM_DESC(loss_ppm, "Test only: drop this many transmitted frames per million");

unsigned int dlmc_corrupt_ppm;
module_param_named(corrupt_ppm, dlmc_corrupt_ppm, uint, 0644);
MODULE_PARM_DESC(corrupt_ppm, "Test only: damage one byte of this many frames per million");

unsigned int dlmc_rto_ms = 50;
module_param_named(rto_ms, dlmc_rto_ms, uint, 0644);
MODULE_PARM_DESC(rto_ms, "Retransmission timeout in ms (default 50)");

unsigned int dlmc_max_retries = 100;
module_param_named(max_retries, dlmc_max_retries, uint, 0644);
MODULE_PARM_DESC(max_retries, "Transmissions of one frame before the connection fails");

unsigned int dlmc_max_msg = 64 << 20;
module_param_named(max_msg, dlmc_max_msg, uint, 0644);
MODULE_PARM_DESC(max_msg, "Largest message in bytes (default 64 MiB, at most 1 GiB)");

unsigned int dlmc_rx_mem_max = 128 << 20;
module_param_named(rx_mem_max, dlmc_rx_mem_max, uint, 0644);
MODULE_PARM_DESC(rx_mem_max, "Bytes of received frames one endpoint may hold");

unsigned int dlmc_max_peers = 1024;
module_param_named(max_peers, dlmc_max_peers, uint, 0644);
MODULE_PARM_DESC(max_peers, "Connections per endpoint");

atomic64_t dlmc_counters[DLMC_C_NR];
atomic_t dlmc_live = ATOMIC_INIT(0);

static struct packet_type dlmc_pt = {
	.func = dlmc_rcv,
};

static int __init dlmc_init(void)
{
	int err;

	if (dlmc_ethertype < ETH_P_802_3_MIN) {
		pr_err("dlmc: ethertype 0x%04x is a length, not a type\n",
		       dlmc_ethertype);
		return -EINVAL;
	}
	err = dlmc_chr_init();
	if (err)
		return err;
	dlmc_pt.type = htons(dlmc_ethertype);
	dev_add_pack(&dlmc_pt);
	pr_info("dlmc: loaded, ethertype 0x%04x\n", dlmc_ethertype);
	return 0;
}

static void __exit dlmc_exit(void)
{
	dev_remove_pack(&dlmc_pt);
	dlmc_chr_exit();
	/* Every endpoint is closed (module refcount), so nothing may be left. */
	pr_info("dlmc: unloaded, %d objects leaked\n", atomic_read(&dlmc_live));
}

module_init(dlmc_init);
module_exit(dlmc_exit);
MODULE_LICENSE("GPL v2");
MODULE_DESCRIPTION("DLMC: MPI messages on raw Ethernet frames");
