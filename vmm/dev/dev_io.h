/* SPDX-License-Identifier: BSD-2-Clause */
/* A decoded port access, as the device models see it, and the table that
 * routes a port to its model (vmm/dev/dev_ports.c). */
#ifndef VMM_DEV_IO_H
#define VMM_DEV_IO_H

#include "vmm/vcpu.h"

struct io_req {
	uint16_t port;
	unsigned size;          /* bytes: 1, 2 or 4 */
	bool in;
	uint32_t val;           /* value written, or the value to return */
};

/* Returns 0, or -1 when the access ended the guest. */
typedef int (*io_fn)(struct vcpu *v, struct io_req *r);

/* The model behind a port, or NULL: the caller then reads all ones,
 * drops the write and counts it. */
io_fn dev_io_lookup(uint16_t port);

/* A 2- or 4-byte access to a device with byte registers, done as the
 * ISA bus does it: one byte access per port, port, port + 1, ..., each
 * routed through the port table (unclaimed bytes read 0xff). */
int dev_io_bytewise(struct vcpu *v, struct io_req *r);

/* The port models, one file each under vmm/dev/. */
int io_serial(struct vcpu *v, struct io_req *r);       /* dev_uart.c */
int io_debug_exit(struct vcpu *v, struct io_req *r);   /* dev_debug_exit.c */
int io_pic(struct vcpu *v, struct io_req *r);          /* dev_pic.c */
int io_pci_addr(struct vcpu *v, struct io_req *r);     /* dev_pci.c */
int io_fwcfg(struct vcpu *v, struct io_req *r);        /* dev_fwcfg.c */
int io_ones(struct vcpu *v, struct io_req *r);         /* dev_ports.c */
int io_kbc(struct vcpu *v, struct io_req *r);          /* dev_kbc.c */
int io_reset_control(struct vcpu *v, struct io_req *r); /* dev_power.c */
int io_acpi_sleep(struct vcpu *v, struct io_req *r);   /* dev_power.c */
int io_cmos(struct vcpu *v, struct io_req *r);         /* dev_cmos.c */

/* A new guest's CMOS clock and RAM at power-on, its time from the host's
 * clock (read once, when the first guest starts). */
void dev_cmos_guest_init(struct dev_rtc *r);

#endif
