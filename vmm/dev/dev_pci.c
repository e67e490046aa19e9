// SPDX-License-Identifier: BSD-2-Clause
/* PCI configuration mechanism #1 with no devices: the address register
 * 0xcf8 keeps what a 32-bit write puts there, the data window 0xcfc-0xcff
 * reads all ones (no device answers) and drops writes. */
#include "vmm/dev/dev_ports.h"

int io_pci_addr(struct vcpu *v, struct io_req *r)
{
	if (r->size != 4) {             /* byte accesses to 0xcf8-0xcfb are not PCI */
		if (r->in)
			r->val = ~0u;
		return 0;
	}
	if (r->in)
		r->val = v->guest->dev.pci_addr;
	else
		v->guest->dev.pci_addr = r->val;
	return 0;
}
