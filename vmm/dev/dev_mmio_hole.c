// SPDX-License-Identifier: BSD-2-Clause
/*
 * Unassigned guest-physical memory (DESIGN.md, "Guest environment"). On a
 * PC a cycle nobody claims ends in a master abort: a read returns all
 * ones, a write is dropped, and the CPU goes on. tickvisor gives a guest
 * the same: the instruction is decoded (vmm/emul/mmio.c), a load gets all ones
 * of its width, a store is skipped, string instructions run to the end of
 * the page at once. Every access is counted per vCPU (printed with the
 * guest's exit summary) and the first few are logged with address and
 * RIP. `mmio=strict` ends the guest instead; an instruction fetch always
 * does, since there is no instruction to run. RAM hidden from the shared
 * EPT by another vCPU's APIC page is emulated as RAM.
 */
#include "drivers/io.h"
#include "drivers/string.h"
#include "vmm/exit/exit.h"
#include "vmm/host/log.h"
#include "vmm/emul/mmio.h"
#include "vmm/dev/dev_mmio_hole.h"
#include "vmm/vcpu/vcpu_run.h"
#include "vmx/vmx.h"
#include "vmm/guest.h"
#include "vmm/vcpu/vcpu_dump.h"

#define HOLE_LOG_LIMIT  4u
#define ALL_ONES        (~0ull)

static void hole_count(struct vcpu *v, uint64_t gpa, bool write, uint64_t n)
{
	struct guest *g = v->guest;
	uint32_t k = __atomic_fetch_add(&g->unassigned_logged, 1, __ATOMIC_RELAXED);

	if (write)
		v->stats.unassigned_writes += n;
	else
		v->stats.unassigned_reads += n;
	if (k < HOLE_LOG_LIMIT)
		pr_info("guest %s: vcpu%u: %s unassigned guest-physical %#lx at rip %#lx: %s%s",
			g->spec->name, v->id, write ? "write to" : "read of", (unsigned long)gpa,
			(unsigned long)v->exit.rip, write ? "dropped" : "reads all ones",
			k + 1 == HOLE_LOG_LIMIT ? " (further ones only counted)" : "");
}

/* rCX, rSI, rDI are used at the address size: 32-bit results zero-extend
 * like any 32-bit register write (the decoder refuses 16-bit addressing). */
static uint64_t addr_reg(struct vcpu *v, int reg, unsigned addr_size)
{
	uint64_t val = mmio_get_gpr(v, reg);

	return addr_size == 8 ? val : (uint32_t)val;
}

static void addr_reg_set(struct vcpu *v, int reg, unsigned addr_size, uint64_t val)
{
	mmio_set_gpr(v, reg, addr_size == 8 ? val : (uint32_t)val);
}

/* Elements of `size` bytes from the one at linear/physical address a to
 * the edge of its page in the direction of travel; at least that one. */
static uint64_t elems_in_page(uint64_t a, unsigned size, bool down)
{
	uint64_t off = a & (PAGE_SIZE - 1);
	uint64_t room = down ? off + size : PAGE_SIZE - off;

	return MAX(room / size, 1ull);
}

/*
 * MOVS whose source is the hole: its destination gets all ones. Found
 * through the guest's page tables (ES:rDI; ES cannot be overridden);
 * when it is RAM the bytes are filled, anywhere else they are dropped.
 */
static int movs_fill_dest(struct vcpu *v, const struct mmio_insn *in, bool down, uint64_t *n)
{
	uint64_t pdpte[4], gpa, dst, first;
	struct gwalk_env env;
	const char *why;
	void *p;

	dst = vmread(VMCS_GUEST_ES_BASE) + addr_reg(v, GPR_RDI, in->addr_size);
	*n = MIN(*n, elems_in_page(dst, in->size, down));
	mmio_gwalk_env(v, &env, pdpte);
	if (gwalk_translate(&env, dst, &gpa, &why))
		return vcpu_kill(v, GUEST_STATUS_KILLED, "MOVS from unassigned memory to %#lx: %s",
				 (unsigned long)dst, why);
	first = down ? gpa - (*n - 1) * in->size : gpa;
	p = guest_ram_ptr(v->guest, first, *n * in->size);
	if (p)
		memset(p, 0xff, *n * in->size);
	else
		hole_count(v, gpa, true, *n);
	return 0;
}

/*
 * MOVS, STOS, LODS with their REP: as many elements as stay in the page
 * that exited, then rSI/rDI/rCX move on as the CPU would have moved them
 * (SDM Vol. 2, "MOVS", "STOS", "LODS": by the element size, down when
 * RFLAGS.DF is set). With elements left the instruction is not skipped:
 * the CPU resumes it, and the next page may be RAM.
 */
static int hole_string(struct vcpu *v, uint64_t gpa, bool write, const struct mmio_insn *in)
{
	bool down = vmread(VMCS_GUEST_RFLAGS) & RFLAGS_DF;
	uint64_t count = in->rep ? addr_reg(v, GPR_RCX, in->addr_size) : 1, n, step;

	n = MIN(count, elems_in_page(gpa, in->size, down));
	if (in->str == INSN_STR_MOVS && !write) {
		if (movs_fill_dest(v, in, down, &n))
			return -1;
	} else if (in->str == INSN_STR_LODS) {
		mmio_put_load(v, in, ALL_ONES);
	}
	hole_count(v, gpa, write, n);
	step = down ? -(n * in->size) : n * in->size;
	if (in->str != INSN_STR_STOS)
		addr_reg_set(v, GPR_RSI, in->addr_size, addr_reg(v, GPR_RSI, in->addr_size) + step);
	if (in->str != INSN_STR_LODS)
		addr_reg_set(v, GPR_RDI, in->addr_size, addr_reg(v, GPR_RDI, in->addr_size) + step);
	if (in->rep)
		addr_reg_set(v, GPR_RCX, in->addr_size, count - n);
	v->exit.insn_len = in->len;
	if (count == n)
		vcpu_skip_insn(v);
	return 0;
}

static int hole_strict(struct vcpu *v, uint64_t gpa, uint64_t qual)
{
	return vcpu_kill(v, GUEST_STATUS_BAD_ACCESS,
			 "%s of guest-physical address %#lx outside RAM (%lu MiB) and devices",
			 qual & EPT_QUAL_FETCH ? "instruction fetch" : qual & EPT_QUAL_WRITE ? "write"
											    : "read",
			 (unsigned long)gpa, (unsigned long)(v->guest->ram_size >> 20));
}

/*
 * RAM the EPT does not map because another vCPU's APIC base is there
 * (vmm/apic/vapic.c): for this vCPU it is plain RAM, so the load or store is
 * done on it. Only MOV and MOVZX: a string instruction here ends the
 * guest rather than being half done.
 */
static int hidden_ram_access(struct vcpu *v, uint64_t gpa, uint64_t qual)
{
	struct mmio_insn in;
	uint64_t val = 0;
	uint8_t *p;

	if (qual & EPT_QUAL_FETCH)
		return vcpu_kill(v, GUEST_STATUS_BAD_ACCESS, "instruction fetch from guest-physical "
				 "%#lx, another vCPU's APIC page", (unsigned long)gpa);
	if (mmio_decode(v, &in, "RAM under another vCPU's APIC page"))
		return -1;
	p = guest_ram_ptr(v->guest, gpa, in.size);
	if (in.str || !p)
		return vcpu_kill(v, GUEST_STATUS_KILLED, "%s at guest-physical %#lx, RAM under "
				 "another vCPU's APIC page: not emulated",
				 in.str ? "string instruction" : "access crossing the end of RAM",
				 (unsigned long)gpa);
	if (in.write) {
		val = mmio_store_value(v, &in);
		memcpy(p, &val, in.size);
	} else {
		memcpy(&val, p, in.size);
		mmio_put_load(v, &in, val);
	}
	v->exit.insn_len = in.len;
	vcpu_skip_insn(v);
	return 0;
}

int mmio_hole_access(struct vcpu *v, uint64_t gpa, uint64_t qual)
{
	bool write = qual & EPT_QUAL_WRITE;
	struct mmio_insn in;

	if (guest_ram_ptr(v->guest, gpa, 1))
		return hidden_ram_access(v, gpa, qual);
	if ((qual & EPT_QUAL_FETCH) || v->guest->spec->opts.mmio_strict)
		return hole_strict(v, gpa, qual);
	if (mmio_decode(v, &in, "unassigned memory"))
		return -1;
	if (in.str)
		return hole_string(v, gpa, write, &in);
	if (!in.write)
		mmio_put_load(v, &in, ALL_ONES);
	hole_count(v, gpa, in.write, 1);
	v->exit.insn_len = in.len;
	vcpu_skip_insn(v);
	return 0;
}
