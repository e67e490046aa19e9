// SPDX-License-Identifier: BSD-2-Clause
/*
 * Port I/O exits and the few devices a guest sees on ports: COM1 (output
 * forwarded to the host serial port, transmitter always ready), the
 * debug-exit port 0xf4 (ends the guest with the written status), QEMU's
 * fw_cfg (signature, CPU count, RAM size), a masked PIC, and PCI
 * configuration space with no devices. Other ports read all-ones and
 * ignore writes, and are counted.
 */
#include "drivers/string.h"
#include "drivers/fwcfg.h"
#include "vmm/exit.h"
#include "vmm/io.h"
#include "vmm/host/log.h"
#include "vmm/vcpu_run.h"
#include "vmx/vmx.h"

#define IO_QUAL_SIZE   BITS(2, 0)       /* 0: 1 byte, 1: 2 bytes, 3: 4 bytes */
#define IO_QUAL_IN     BIT(3)
#define IO_QUAL_STRING BIT(4)
#define IO_QUAL_PORT   BITS(31, 16)

#define DEBUG_EXIT_PORT 0xf4u
#define COM1_BASE       0x3f8u
#define UART_LSR_IDLE   0x60u   /* THR empty, transmitter empty */
#define UART_IIR_NONE   0x01u
#define UART_MSR_READY  0xb0u   /* DCD, DSR, CTS */


static int io_serial(struct vcpu *v, struct io_req *r)
{
	unsigned reg = r->port - COM1_BASE;
	char c;

	if (!r->in) {
		if (reg == 0 && !(v->guest->dev.uart_lcr & 0x80)) {  /* THR, DLAB clear */
			c = (char)r->val;
			log_raw(&c, 1);
		} else if (reg == 3) {
			v->guest->dev.uart_lcr = (uint8_t)r->val;
		} else if (reg == 7) {
			v->guest->dev.uart_scr = (uint8_t)r->val;
		}
		return 0;
	}
	switch (reg) {
	case 2: r->val = UART_IIR_NONE; break;
	case 3: r->val = v->guest->dev.uart_lcr; break;
	case 5: r->val = UART_LSR_IDLE; break;
	case 6: r->val = UART_MSR_READY; break;
	case 7: r->val = v->guest->dev.uart_scr; break;
	default: r->val = 0; break;
	}
	return 0;
}

static int io_debug_exit(struct vcpu *v, struct io_req *r)
{
	if (r->in) {
		r->val = ~0u;
		return 0;
	}
	return guest_end(v->guest, (int)r->val, "wrote %u to the debug-exit port", r->val);
}

static int io_pic(struct vcpu *v, struct io_req *r)
{
	/* Both 8259s stay masked: reads of the mask registers say so. */
	if (r->in)
		r->val = (r->port == 0x21 || r->port == 0xa1) ? 0xff : 0;
	return 0;
}

static int io_pci_addr(struct vcpu *v, struct io_req *r)
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

static int io_ones(struct vcpu *v, struct io_req *r)
{
	/* Known-harmless ports (POST codes, PCI data with no device): no count. */
	if (r->in)
		r->val = ~0u;
	return 0;
}

static io_fn io_lookup(uint16_t port)
{
	if (port >= COM1_BASE && port < COM1_BASE + 8)
		return io_serial;
	switch (port) {
	case DEBUG_EXIT_PORT: return io_debug_exit;
	case 0x20: case 0x21: case 0xa0: case 0xa1: case 0x4d0: case 0x4d1: return io_pic;
	case 0xcf8: return io_pci_addr;
	case 0xcfc: case 0xcfd: case 0xcfe: case 0xcff: case 0x80: return io_ones;
	case FWCFG_PORT_SEL: case FWCFG_PORT_DATA: return io_fwcfg;
	default: return NULL;
	}
}

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
	fn = io_lookup(r.port);
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
