// SPDX-License-Identifier: BSD-2-Clause
/*
 * xAPIC MMIO emulation. Without APIC virtualization every access to the
 * APIC page is an EPT violation; with it, the accesses the CPU does not
 * virtualize (TMCCT and PPR reads, writes to read-only or undefined
 * offsets) are APIC-access exits. Neither tells the data register or the
 * instruction length: the instruction at RIP is decoded (vmm/emul/mmio.c).
 */
#include "drivers/io.h"
#include "drivers/string.h"
#include "vmm/apic/housekeeper.h"
#include "vmm/host/log.h"
#include "vmm/apic/vapic.h"
#include "vmm/emul/mmio.h"
#include "vmm/trace.h"
#include "vmm/vcpu/vcpu_run.h"
#include "vmx/vmx.h"
#include "vmm/vcpu/vcpu_dump.h"

/*
 * Widths other than aligned 32 bits are undefined by the SDM; tickvisor
 * gives them the meaning APIC-register virtualization gives them, so the
 * guest sees the same with APICv on and off: each register is a 16-byte
 * slot holding its 32 bits then zeros. A load returns the bytes it covers;
 * a store merges its bytes into the register (bytes past the register are
 * dropped) and is then an ordinary write. An access spanning two slots
 * ends the guest.
 */
static int do_access(struct vcpu *v, uint32_t off, const struct mmio_insn *in)
{
	uint32_t slot = off & ~0xfu, byte = off & 0xf, reg, mask;
	uint64_t val;

	if (byte + in->size > 16)
		return vcpu_kill(v, GUEST_STATUS_KILLED, "%u-byte APIC access at offset %#x spans "
				 "two registers", in->size, off);
	if (in->write) {
		if (byte >= 4)
			return 0;
		/* AH..BH store bits 15:8 of their register (issue 15.3). */
		val = mmio_store_value(v, in);
		mask = (uint32_t)(in->size >= 4 ? ~0ull : (1ull << (8 * in->size)) - 1) << (8 * byte);
		reg = vlapic_get(v->lapic, slot);
		vlapic_mmio_write(v->lapic, slot, (reg & ~mask) | ((uint32_t)(val << (8 * byte)) & mask));
		if (log_trace_on(TRACE_TIMER) && vapic_timer_reg(slot))
			trace_timer_arm(v);
		return 0;
	}
	vlapic_mmio_read(v->lapic, slot, &reg);
	val = byte < 8 ? (uint64_t)reg >> (8 * byte) : 0;
	mmio_put_load(v, in, val);
	return 0;
}

static int emulate(struct vcpu *v, uint32_t off)
{
	struct mmio_insn in;
	int r;

	v->intr_dirty = true;
	if (mmio_decode(v, &in, "the APIC page"))
		return -1;
	if (in.str)
		return vcpu_kill(v, GUEST_STATUS_KILLED, "string instruction on APIC offset %#x", off);
	housekeeper_timer_lock(v);
	r = do_access(v, off, &in);
	housekeeper_timer_unlock(v);
	if (r)
		return -1;
	v->exit.insn_len = in.len;
	vcpu_skip_insn(v);
	return 0;
}

bool vapic_mmio_claims(struct vcpu *v, uint64_t gpa)
{
	return vlapic_mode(v->lapic) == VLAPIC_XAPIC &&
	       (gpa & ~(uint64_t)(PAGE_SIZE - 1)) == vlapic_base_addr(v->lapic);
}

int vapic_mmio(struct vcpu *v, uint64_t gpa, uint64_t qual)
{
	if (qual & EPT_QUAL_FETCH)
		return vcpu_kill(v, GUEST_STATUS_BAD_ACCESS, "APIC page used for an instruction fetch");
	return emulate(v, (uint32_t)(gpa & (PAGE_SIZE - 1)));
}

int exit_apic_access(struct vcpu *v)
{
	uint64_t q = v->exit.qual;
	unsigned type = (unsigned)FIELD_GET(APIC_ACCESS_TYPE, q);

	if (type != APIC_ACCESS_READ && type != APIC_ACCESS_WRITE)
		return vcpu_kill(v, GUEST_STATUS_BAD_ACCESS, "APIC page used for an instruction "
				 "fetch or event delivery (access type %u)", type);
	return emulate(v, (uint32_t)FIELD_GET(APIC_ACCESS_OFFSET, q));
}

/*
 * Trap-like: the CPU stored the value and RIP is already past it. An
 * ICR_LO write is the exit of every IPI a guest sends in xAPIC mode (the
 * CPU takes only self-IPIs itself): when vlapic_xapic_icr_fast() takes
 * it, the exit is resumable (vmm/exit/exit_fast.c), as the x2APIC ICR's WRMSR
 * is (exit_wrmsr()), and intr_dirty is left alone for the same reason:
 * this vCPU's IRR moved only if it was its own target, and then
 * vlapic_accept() notified it. No timer lock: an IPI touches no timer.
 * A write to a timer register (LVTT, TMICT, TDCR) is resumable where
 * the timer backend allows (vapic_timer_reg_written()).
 * No APIC write reads a guest register or ends the guest: the entry stub
 * saves no GPR the C ABI keeps before the hook (vmx/regs.h).
 */
int exit_apic_write(struct vcpu *v)
{
	uint32_t off = (uint32_t)FIELD_GET(APIC_ACCESS_OFFSET, v->exit.qual);

	if (off == LAPIC_ICR_LO && vlapic_xapic_icr_fast(v->lapic))
		return EXIT_RESUMABLE;
	return exit_apic_write_reg(v, off);
}

int exit_apic_write_reg(struct vcpu *v, uint32_t off)
{
	housekeeper_timer_lock(v);
	vlapic_apicv_write(v->lapic, off);
	housekeeper_timer_unlock(v);
	if (!vapic_timer_reg(off)) {
		v->intr_dirty = true;   /* a mode change is synced before the next entry */
		return 0;
	}
	return vapic_timer_reg_written(v);
}

int exit_eoi_induced(struct vcpu *v)
{
	/* The CPU has done the EOI; only level-triggered vectors ask for the
	 * exit, and guests have no I/O APIC to notify. */
	return 0;
}

int exit_tpr_below(struct vcpu *v)
{
	/* Pending interrupts are re-evaluated before the next entry. */
	return 0;
}
