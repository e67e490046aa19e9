// SPDX-License-Identifier: BSD-2-Clause
/*
 * Port I/O exits: decode the exit qualification, hand the access to the
 * device model the port table names (vmm/dev/dev_ports.c: COM1,
 * debug-exit, fw_cfg, PIC, PCI), write back what an IN returns. Ports no
 * model claims read all-ones and ignore writes, and are counted.
 */
#include "vmm/exit/exit.h"
#include "vmm/dev/dev_ports.h"
#include "vmm/host/log.h"
#include "vmm/vcpu/vcpu_run.h"
#include "vmx/vmx.h"
#include "vmm/vcpu/vcpu_dump.h"

#define IO_QUAL_SIZE   BITS(2, 0)       /* 0: 1 byte, 1: 2 bytes, 3: 4 bytes */
#define IO_QUAL_IN     BIT(3)
#define IO_QUAL_STRING BIT(4)
#define IO_QUAL_PORT   BITS(31, 16)

static void io_unhandled(struct vcpu *v, struct io_req *r)
{
	if (v->stats.io_unhandled++ < 8)
		pr_debug("guest %s: vcpu%u: %s port %#x (%u bytes): no device", v->guest->spec->name,
			 v->id, r->in ? "read from" : "write to", r->port, r->size);
	if (r->in)
		r->val = ~0u;
}

int exit_io(struct vcpu *v)
{
	uint64_t q = v->exit.qual;
	struct io_req r = {
		.port = (uint16_t)FIELD_GET(IO_QUAL_PORT, q),
		.size = (unsigned)FIELD_GET(IO_QUAL_SIZE, q) + 1,
		.in = q & IO_QUAL_IN,
	};
	uint64_t *rax = &v->regs.gpr[GPR_RAX];
	uint32_t mask = r.size == 4 ? ~0u : (1u << (8 * r.size)) - 1;
	io_fn fn;

	if (q & IO_QUAL_STRING)
		return vcpu_kill(v, GUEST_STATUS_KILLED, "string I/O (INS/OUTS) on port %#x is "
				 "not supported", r.port);
	r.val = (uint32_t)*rax & mask;
	fn = dev_ports_lookup(r.port);
	if (fn) {
		if (fn(v, &r))
			return -1;
	} else {
		io_unhandled(v, &r);
	}
	if (r.in)       /* IN EAX zero-extends into RAX; AL/AX keep the rest */
		*rax = r.size == 4 ? (r.val & mask) : ((*rax & ~(uint64_t)mask) | (r.val & mask));
	vcpu_skip_insn(v);
	return 0;
}
