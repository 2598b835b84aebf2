/* SPDX-License-Identifier: GPL-2.0 */
/* The module's link to the NetSlice core: registration and on/off. */
#ifndef _NSLM_RECEIVER_H
#define _NSLM_RECEIVER_H

#include <linux/types.h>

int nslm_receiver_init(bool collect);
void nslm_receiver_uninit(void);
void nslm_receiver_collect(bool on);
void nslm_receiver_idle(void);

#endif /* _NSLM_RECEIVER_H */
