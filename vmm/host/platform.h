/* SPDX-License-Identifier: BSD-2-Clause */
/* What tickvisor found out about the machine it owns. */
#ifndef VMM_HOST_PLATFORM_H
#define VMM_HOST_PLATFORM_H

#include "drivers/acpi.h"
#include "drivers/hpet.h"
#include "drivers/pmtimer.h"
#include "drivers/tsc.h"
#include "vmm/host/boot_info.h"
#include "vmm/host/options.h"
#include "timer/timebase.h"
#include "vmx/caps.h"

struct platform {
	struct acpi_info acpi;
	bool has_hpet;
	const char *hpet_found_by;      /* "ACPI HPET table" or "probe at 0xfed00000" */
	struct hpet hpet;
	bool has_pmtimer;
	struct pmtimer pmtimer;
	struct tsc_info tsc;
	struct timebase tb;              /* guest TSC and APIC timer clocks */
	struct vmx_caps vmx;
	uint32_t ncpus;                 /* CPUs tickvisor may use */
	uint32_t ncpus_listed;          /* enabled CPUs the firmware reported, all */
	uint32_t apic_ids[TV_MAX_CPUS];
	uint32_t ioapic_addr;           /* 0: none known */
	uint32_t ioapic_pins;           /* its inputs, 0 if nothing answers there */
	struct tv_inject inject;        /* inject= of the configuration */
	bool tsc_unsynced;              /* the warp test found CPUs' TSCs apart */
};

extern struct platform platform;

/* ACPI, HPET, PM timer, host APIC, TSC; prints what it finds. */
void platform_init(const struct boot_info *bi);
/* Host timer capabilities for the guest-timer backends (after VMX probe). */
void platform_timer_init(void);
/* Masks the unmasked inputs of every I/O APIC that deliver vector (an
 * interrupt tickvisor never set up); returns how many. */
unsigned platform_ioapic_mask_vector(uint8_t vector);
/* VMX capability probe and report; false if unusable. */
bool platform_vmx_init(const struct boot_info *bi);
/* This CPU's LINT pins as the MADT's NMI entries say (issue 22.6):
 * which pins now deliver NMI, a bit each. */
unsigned platform_lint_nmi(uint32_t apic_id);
/* The refusal's error line, after the platform report (issue 21.5). */
void platform_vmx_refuse(const struct boot_info *bi);
/* platform: lines: the CPUs up, APIC, TSC, clocks, VMX (what it lacks). */
void platform_report(uint32_t up);

#endif
