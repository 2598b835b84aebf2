// SPDX-License-Identifier: GPL-2.0
/*
 * NetSlice NS module: collects the core's per-packet blocks into per-CPU
 * rings and hands them to user space through /dev/ns.
 */

#include <linux/init.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/netslice.h>
#include <linux/string.h>

#include "agg.h"
#include "device.h"
#include "filter.h"
#include "receiver.h"
#include "ring.h"

static bool enable = true;
module_param(enable, bool, 0444);
MODULE_PARM_DESC(enable, "Collect from load on (default 1); NSIOCSSTATE switches");

/* enum nsl_stage by name, for bench/sameboot.sh -L. */
static const char *const stage_names[] = {
	[NSL_STAGE_NONE] = "none",
	[NSL_STAGE_CARRY] = "carry",
	[NSL_STAGE_CLOCK] = "clock",
	[NSL_STAGE_RECORDS] = "records",
	[NSL_STAGE_FULL] = "full",
};

static int cost_stage_set(const char *val, const struct kernel_param *kp)
{
	int i = sysfs_match_string(stage_names, val);

	return i < 0 ? i : nsl_stage_set(i);
}

static int cost_stage_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%s\n", stage_names[nsl_stage_get()]);
}

static const struct kernel_param_ops cost_stage_ops = {
	.set = cost_stage_set,
	.get = cost_stage_get,
};
module_param_cb(cost_stage, &cost_stage_ops, NULL, 0644);
MODULE_PARM_DESC(cost_stage,
		 "Bench only: how far a block's life goes: none, carry, clock, records or full (default)");

static int __init nslm_mod_init(void)
{
	int ret;

#ifdef DEBUG
	if (!nslm_ring_selftest())
		return -ENOTRECOVERABLE;
#endif

	ret = nslm_rings_init(NSLM_RING_DEFAULT_BYTES);
	if (ret)
		goto err_rings;
	ret = nslm_receiver_init(enable);
	if (ret)
		goto err_receiver;
	ret = nslm_agg_init();
	if (ret)
		goto err_agg;
	ret = nslm_device_init();
	if (ret)
		goto err_device;

	pr_info("/dev/ns ready, %llu bytes per CPU ring, collection %s\n",
		nslm_rings_bytes(), enable ? "on" : "off");
	return 0;

err_device:
	nslm_agg_uninit();
err_agg:
	nslm_receiver_uninit();
err_receiver:
	nslm_rings_uninit();
err_rings:
	nsl_stage_set(NSL_STAGE_FULL);
	return ret;
}

static void __exit nslm_mod_exit(void)
{
	nsl_stage_set(NSL_STAGE_FULL);
	nslm_device_uninit();
	nslm_receiver_uninit();
	nslm_agg_uninit();
	nslm_filter_reset();
	nslm_rings_uninit();
}

module_init(nslm_mod_init);
module_exit(nslm_mod_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("NetSlice per-packet per-layer latency collector");
MODULE_AUTHOR("NetSlice developers");
