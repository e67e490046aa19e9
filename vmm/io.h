/* SPDX-License-Identifier: BSD-2-Clause */
/* A decoded port access, as the device models see it. */
#ifndef VMM_IO_H
#define VMM_IO_H

#include "vmm/vcpu.h"

struct io_req {
	uint16_t port;
	unsigned size;          /* bytes: 1, 2 or 4 */
	bool in;
	uint32_t val;           /* value written, or the value to return */
};

/* Returns 0, or -1 when the access ended the guest. */
typedef int (*io_fn)(struct vcpu *v, struct io_req *r);

int io_fwcfg(struct vcpu *v, struct io_req *r);

#endif
