// SPDX-License-Identifier: BSD-2-Clause
/* The hypervisor proper, from the hand-off by boot/ to power-off. */
#include "drivers/io.h"
#include "drivers/ioapic.h"
#include "drivers/serial.h"
#include "vmm/host/mce.h"
#include "vmm/host/boot_info.h"
#include "vmm/host/console.h"
#include "vmm/exit/exit.h"
#include "vmm/guest.h"
#include "vmm/host/irq.h"
#include "vmm/host/log.h"
#include "vmm/host/mem.h"
#include "vmm/host/paging.h"
#include "vmm/host/panic.h"
#include "vmm/host/percpu.h"
#include "vmm/host/platform.h"
#include "vmm/host/power.h"
#include "vmm/host/smp.h"
#include "vmm/host/topology.h"
#include "vmm/apic/vapic.h"
#include "vmm/vcpu/vcpu_calib.h"
#include "vmm/apic/vcpu_timer.h"
#include "vmm/host/vmx_cpu.h"

#define LOG_RING_SIZE (256 * KiB)

/* Our own descriptor tables and page tables first: after this nothing of
 * the firmware's boot-services state is in use by the BSP. */
static void host_init(struct boot_info *bi)
{
	struct pcpu *bsp;

	irq_disable();
	mem_init(bi);
	idt_init();
	bsp = cpu_alloc(0, 0);
	cpu_init(bsp);
	paging_init(bi);
	console_init(bi);
	serial_set_buffer(mem_alloc(LOG_RING_SIZE), LOG_RING_SIZE);
}

/* The APs still run the firmware's AP loop: they are parked in INIT
 * first (smp.c). Parking waits with the TSC, so this comes after
 * platform_init(). UEFI boot-services RAM is not taken into the pool
 * (issue 22.7): a firmware whose runtime services (ResetSystem above all,
 * the last resort of end=reset) or AP loop still touch that memory after
 * ExitBootServices keeps it intact. It costs tens of MiB (37-39 MiB under
 * OVMF), a price a hypervisor of small guests can pay. */
static void host_memory(struct boot_info *bi)
{
	smp_park_aps();
	pr_info("memory: %lu MiB free for guests and tickvisor (largest block %lu MiB); "
		"%lu MiB of UEFI boot-services memory kept for the firmware",
		(unsigned long)(mem_free_bytes() >> 20), (unsigned long)(mem_largest_free() >> 20),
		(unsigned long)(mem_type_bytes(bi, MEM_BOOT_SERVICES) >> 20));
}

static void report_hpet_route(const struct timer_cpu *tc)
{
	if (!timer_caps.hpet)
		return;
	if (tc->hpet_comparator < 0)
		pr_info("HPET: no comparator can interrupt this CPU: timer=hpet falls back");
	else if (tc->hpet_ioapic_pin < 0)
		pr_info("HPET: comparator %d interrupts cpu0 by MSI (FSB)", tc->hpet_comparator);
	else
		pr_info("HPET: comparator %d interrupts cpu0 through I/O APIC input %d (%s, "
			"active %s)", tc->hpet_comparator, tc->hpet_ioapic_pin,
			tc->hpet_pin_mode & IOAPIC_REDIR_LEVEL ? "level" : "edge",
			tc->hpet_pin_mode & IOAPIC_REDIR_LOW ? "low" : "high");
}

__noreturn void vmm_main(struct boot_info *bi)
{
	uint32_t up;

	power_init(bi);
	panic_set_image_base(bi->image_base);
	host_init(bi);
	platform_init(bi);
	mce_cpu_init(true);
	this_cpu()->apic_id = platform.apic_ids[0];
	host_memory(bi);
	if (!platform_vmx_init(bi) || !vmm_vmx_cpu_on()) {
		/* Every CPU counted, its timer and TSC checked, and the platform
		 * reported before the refusal (issue 21.5). */
		up = smp_start_aps(false);
		topology_init(up);
		platform_report(up);
		platform_vmx_refuse(bi);
		power_off(1);
	}
	platform_timer_init();
	vmm_exit_init();
	vcpu_timer_host_init();
	vapic_host_init();
	vapic_pi_host_init();
	vcpu_calib_init();
	timer_cpu_init(&this_cpu()->timer, 0, this_cpu()->apic_id);
	report_hpet_route(&this_cpu()->timer);
	up = smp_start_aps(true);
	topology_init(up);
	platform_report(up);
	power_off(guests_run_all(&bi->cfg) ? 1 : 0);
}
