// SPDX-License-Identifier: BSD-2-Clause
/*
 * The two fixed costs around the guest, on this CPU, measured rather than
 * guessed. The vCPU runs "RDTSC; VMCALL" a few times, with the entry stub
 * told to wait until a known TSC:
 * - entry_tsc: end of that wait -> the guest's RDTSC. An advanced timer's
 *   wait ends that much before its target.
 * - exit_tsc: the guest's RDTSC -> the stub's TSC at the exit. A register
 *   access happened that long before the stub saw its exit: TMICT starts
 *   counting, and TMCCT is read, at the access.
 * The smallest of the runs counts.
 *
 * The code runs from a page of tickvisor's own, seen through a private
 * EPT that maps nothing else, with the vCPU's VMCS pointed at that EPT
 * for the runs: the vCPUs of a guest calibrate when their CPUs start,
 * while vCPU 0 may already run the guest, so no guest byte may be
 * borrowed for it (issue 10.8). The private tables never change after
 * boot, so every CPU can use them at once and no INVEPT is needed:
 * cached EPT translations are tagged by the EPTP they came from (SDM
 * Vol. 3C, "Information That May Be Cached"), so switching back to the
 * guest's EPTP finds none of them.
 */
#include "drivers/io.h"
#include "drivers/string.h"
#include "vmm/host/log.h"
#include "vmm/host/mem.h"
#include "vmm/vcpu_calib.h"
#include "vmm/vcpu_setup.h"
#include "vmx/vmx.h"

#define CALIB_GPA   0x1000u     /* where the private EPT shows the code */
#define CALIB_RUNS  8u

static struct {
	struct ept ept;
	uint64_t eptp;          /* 0: no private EPT, no calibration */
} calib;

static void *calib_alloc_page(void *ctx)
{
	(void)ctx;
	return mem_try_alloc(PAGE_SIZE, PAGE_SIZE);
}

static void calib_free_page(void *ctx, void *page)
{
	(void)ctx;
	mem_free(page, PAGE_SIZE);
}

void vcpu_calib_init(void)
{
	static const uint8_t code[] = { 0x0f, 0x31, 0x0f, 0x01, 0xc1 };  /* rdtsc; vmcall */
	uint8_t *page = mem_try_alloc(PAGE_SIZE, PAGE_SIZE);

	calib.ept = (struct ept){ .alloc_page = calib_alloc_page, .free_page = calib_free_page };
	if (!page || !ept_init(&calib.ept) ||
	    !ept_map(&calib.ept, CALIB_GPA, (uint64_t)page, PAGE_SIZE, EPT_R | EPT_X | EPT_MT_WB)) {
		pr_warn("no memory for the entry/exit calibration: timers without entry/exit "
			"compensation");
		return;
	}
	memcpy(page, code, sizeof(code));
	calib.eptp = ept_pointer(&calib.ept);
}

/* One run: the guest's RDTSC minus the wait's end, the exit's TSC minus
 * the guest's RDTSC; false if the vCPU did not come back by its VMCALL. */
static bool calib_run(struct vcpu *v, uint64_t *entry, uint64_t *exit)
{
	uint64_t start, guest;
	long reason;

	vmwrite(VMCS_GUEST_RIP, CALIB_GPA);
	start = rdtsc() + 2000;
	v->regs.spin_until = start;
	reason = vmx_run(&v->regs);
	if (reason < 0)
		return false;
	v->regs.launched = 1;
	if (reason != VMX_EXIT_VMCALL)
		return false;
	guest = (v->regs.gpr[GPR_RDX] << 32) | (uint32_t)v->regs.gpr[GPR_RAX];
	*entry = guest - start;
	*exit = v->regs.exit_tsc - guest;
	return true;
}

void vcpu_calib_measure(struct vcpu *v)
{
	uint64_t best_entry = ~0ull, best_exit = ~0ull, entry, exit;

	v->entry_tsc = v->exit_tsc = 0;
	if (!calib.eptp)
		return;
	vmwrite(VMCS_EPT_POINTER, calib.eptp);
	vcpu_reset_multiboot(v, CALIB_GPA, 0);  /* flat 32-bit, paging off */
	for (unsigned i = 0; i < CALIB_RUNS; i++) {
		if (!calib_run(v, &entry, &exit)) {
			pr_warn("guest %s: vcpu%u: entry calibration failed (exit %lu): timers "
				"without entry/exit compensation", v->guest->spec->name, v->id,
				(unsigned long)vmread(VMCS_EXIT_REASON));
			best_entry = best_exit = 0;
			break;
		}
		best_entry = MIN(best_entry, entry);
		best_exit = MIN(best_exit, exit);
	}
	vmwrite(VMCS_EPT_POINTER, v->guest->eptp);
	v->entry_tsc = best_entry;
	v->exit_tsc = best_exit;
	pr_debug("guest %s: vcpu%u: %lu TSC cycles from the entry wait to the guest, %lu from the "
		 "guest to the exit", v->guest->spec->name, v->id, (unsigned long)best_entry,
		 (unsigned long)best_exit);
}
