/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * QEMU's firmware configuration device, which tickvisor also provides:
 * write a key to the 16-bit selector port, then read the item's bytes,
 * little endian, one at a time from the data port (QEMU docs/specs/
 * fw_cfg.rst, "Legacy Port I/O"). Without the device both ports read 0xff
 * and the helpers fall back to safe values.
 */
#ifndef GUEST_FWCFG_H
#define GUEST_FWCFG_H

#include "lib/bits.h"

#define FWCFG_PORT_SEL          0x510
#define FWCFG_PORT_DATA         0x511

enum fwcfg_key {
	FWCFG_SIGNATURE = 0x00,         /* "QEMU" */
	FWCFG_ID = 0x01,
	FWCFG_RAM_SIZE = 0x03,          /* 64-bit, bytes */
	FWCFG_NB_CPUS = 0x05,           /* 16-bit */
	FWCFG_MAX_CPUS = 0x0f,          /* 16-bit */
};

bool fwcfg_present(void);
/* Reads the first len bytes of item key. */
void fwcfg_read(enum fwcfg_key key, void *buf, size_t len);
/* CPUs the guest has; 1 without fw_cfg. */
unsigned fwcfg_cpu_count(void);
/* RAM size in bytes; without fw_cfg, the Multiboot estimate
 * (boot_ram_size()). */
uint64_t fwcfg_ram_size(void);

#endif
