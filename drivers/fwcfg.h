/* SPDX-License-Identifier: BSD-2-Clause */
/* QEMU's fw_cfg (I/O ports 0x510/0x511): used to recognise QEMU. */
#ifndef DRIVERS_FWCFG_H
#define DRIVERS_FWCFG_H

#include "drivers/base.h"

#define FWCFG_PORT_SEL   0x510u
#define FWCFG_PORT_DATA  0x511u
#define FWCFG_SIGNATURE  0x0000u
#define FWCFG_ID         0x0001u
#define FWCFG_RAM_SIZE   0x0003u
#define FWCFG_NB_CPUS    0x0005u

/* True when the fw_cfg signature reads "QEMU". */
bool fwcfg_present(void);

#endif
