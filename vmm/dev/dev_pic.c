// SPDX-License-Identifier: BSD-2-Clause
/* The two 8259 PICs (0x20-0x21, 0xa0-0xa1) and their edge/level control
 * (0x4d0-0x4d1): present, so probing guests find them, but masked and
 * never raising an interrupt; writes are ignored. */
#include "drivers/pic.h"
#include "vmm/dev/dev_ports.h"

int io_pic(struct vcpu *v, struct io_req *r)
{
	/* Both 8259s stay masked: reads of the mask registers say so. */
	if (r->in)
		r->val = (r->port == PIC1_DATA || r->port == PIC2_DATA) ? PIC_MASK_ALL : 0;
	return 0;
}
