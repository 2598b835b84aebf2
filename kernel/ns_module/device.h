/* SPDX-License-Identifier: GPL-2.0 */
/* /dev/ns: read(), poll() and the ioctls. */
#ifndef _NSLM_DEVICE_H
#define _NSLM_DEVICE_H

int nslm_device_init(void);
void nslm_device_uninit(void);
bool nslm_device_is_open(void);

#endif /* _NSLM_DEVICE_H */
