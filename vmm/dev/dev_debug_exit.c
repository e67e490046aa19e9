// SPDX-License-Identifier: BSD-2-Clause
/* The debug-exit port 0xf4 (QEMU's isa-debug-exit, as test images use
 * it): a write ends the guest with the written value as its status. */
#include "vmm/dev/dev_ports.h"
#include "vmm/guest.h"

int io_debug_exit(struct vcpu *v, struct io_req *r)
{
	if (r->in) {
		r->val = ~0u;
		return 0;
	}
	return guest_end(v->guest, (int)r->val, "wrote %u to the debug-exit port", r->val);
}
