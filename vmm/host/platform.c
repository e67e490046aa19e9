// SPDX-License-Identifier: BSD-2-Clause
#include "drivers/ioapic.h"
#include "drivers/apic.h"
#include "drivers/io.h"
#include "drivers/pic.h"
#include "drivers/errata.h"
#include "drivers/fmt.h"
#include "drivers/string.h"
#include "vmm/host/irq.h"
#include "vmm/host/log.h"
#include "vmm/host/panic.h"
#include "vmm/host/percpu.h"
#include "timer/host.h"
#include "vmm/host/platform.h"
#include "vmm/host/tsc_sync.h"

#define IOAPIC_DEFAULT_BASE 0xfec00000u

struct platform platform;

static void acpi_init(const struct boot_info *bi)
{
	struct acpi_info *a = &platform.acpi;
	char err[96];

	if (!bi->rsdp) {
		pr_info("ACPI: firmware published no tables (as OVMF under Bochs): "
			"CPUs from MP services, HPET and PM timer probed");
		return;
	}
	if (acpi_parse(a, bi->rsdp, acpi_map_identity, NULL, err, sizeof(err))) {
		pr_warn("ACPI: %s: tables ignored", err);
		return;
	}
	pr_info("ACPI: RSDP rev %u (%s)%s%s%s%s%s", a->rsdp_revision, a->oem_id,
		a->has_madt ? ", MADT" : "", a->has_hpet ? ", HPET" : "",
		a->has_fadt ? ", FADT" : "", a->has_ioapic ? ", I/O APIC" : "",
		a->has_spcr ? ", SPCR" : "");
	for (uint32_t i = 0; i < a->nnotes; i++)
		pr_warn("ACPI: %s", a->notes[i]);
	if (a->has_madt)
		pr_info("ACPI: MADT lists %u CPU%s, local APIC at %#lx", a->ncpus,
			a->ncpus == 1 ? "" : "s", (unsigned long)a->lapic_addr);
	if (a->has_fadt)
		pr_info("ACPI: FADT PM1a_CNT %#x, PM timer %#x (%s), reset %s", a->pm1a_cnt_port,
			a->pm_tmr_port, a->pm_tmr_32bit ? "32-bit" : "24-bit",
			a->reset_supported ? "register" : "unsupported");
	if (a->has_s5)
		pr_info("ACPI: \\_S5 SLP_TYP %u/%u (DSDT): power-off by PM1a_CNT%s", a->s5_typa,
			a->s5_typb, a->pm1b_cnt_port ? " and PM1b_CNT" : "");
	else if (a->has_fadt)
		pr_info("ACPI: no \\_S5 found in the DSDT: power-off by the firmware only");
}

/* The counts are the firmware's, all of them; tickvisor holds the first
 * TV_MAX_CPUS (the BSP among them) and says so. */
static void cpus_init(const struct boot_info *bi)
{
	uint32_t listed = bi->ncpus + bi->cpus_dropped;

	platform.ncpus = bi->ncpus;
	platform.ncpus_listed = listed;
	for (uint32_t i = 0; i < bi->ncpus; i++)
		platform.apic_ids[i] = bi->cpus[i].apic_id;
	if (platform.acpi.has_madt && platform.acpi.ncpus != listed)
		pr_warn("MADT lists %u CPUs but MP services reported %u: using MP services",
			platform.acpi.ncpus, listed);
	pr_info("%u CPU%s (APIC IDs from UEFI MP services)", listed, listed == 1 ? "" : "s");
	if (bi->cpus_dropped)
		pr_warn("%u CPUs beyond the first %u are left unused", bi->cpus_dropped,
			TV_MAX_CPUS);
}

static void hpet_init(void)
{
	uint64_t base = platform.acpi.has_hpet ? platform.acpi.hpet_addr : HPET_DEFAULT_BASE;

	platform.hpet_found_by = platform.acpi.has_hpet ? "ACPI HPET table" : "probe at 0xfed00000";
	if (!hpet_probe(&platform.hpet, base)) {
		pr_info("HPET: none (%s)", platform.hpet_found_by);
		return;
	}
	hpet_enable(&platform.hpet);
	if (platform.inject.hpet_stuck) {
		hpet_halt(&platform.hpet);
		pr_warn("inject=hpet-stuck: the HPET's main counter is left halted");
	}
	if (platform.inject.hpet_strays)
		pr_warn("inject=hpet-strays: guests may raise stray HPET interrupts "
			"(TV_HC_HPET_STRAYS)");
	platform.has_hpet = true;
	pr_info("HPET: %#lx (%s), %lu Hz, %u comparators, %u-bit counter, vendor %#x",
		(unsigned long)base, platform.hpet_found_by, (unsigned long)platform.hpet.freq_hz,
		platform.hpet.ncomparators, platform.hpet.counter_64 ? 64 : 32,
		platform.hpet.vendor);
}

static void pmtimer_init(void)
{
	struct pmtimer *t = &platform.pmtimer;

	if (platform.acpi.pm_tmr_port) {
		t->port = (uint16_t)platform.acpi.pm_tmr_port;
		t->is_32bit = platform.acpi.pm_tmr_32bit;
		platform.has_pmtimer = pmtimer_check(t);
	} else {
		platform.has_pmtimer = pmtimer_probe_piix4(t);
	}
	if (platform.has_pmtimer)
		pr_info("ACPI PM timer: port %#x (%s)", t->port,
			platform.acpi.pm_tmr_port ? "FADT" : "PIIX4 PM base");
}

/* A reference clock tsc_calibrate() gave up on is not used at all: the
 * HPET is then no timer backend either (issue 22.4). */
static void tsc_report_rejected(const struct tsc_info *t)
{
	for (unsigned i = 0; i < t->nrejected; i++) {
		bool hpet = !strcmp(t->rejected[i], "HPET");
		const char *also = hpet ? ", neither as a clock nor as a timer" : "";

		if (t->rejected_hz[i])
			pr_warn("TSC: the %s %s (%lu Hz): not used%s", t->rejected[i],
				t->rejected_why[i], (unsigned long)t->rejected_hz[i], also);
		else
			pr_warn("TSC: the %s %s: not used%s", t->rejected[i], t->rejected_why[i],
				also);
		if (hpet)
			platform.has_hpet = false;
		else
			platform.has_pmtimer = false;
	}
}

static void tsc_init(void)
{
	struct tsc_info *t = &platform.tsc;

	if (!tsc_calibrate(t, platform.has_hpet ? &platform.hpet : NULL,
			   platform.has_pmtimer ? &platform.pmtimer : NULL)) {
		tsc_report_rejected(t);
		panic("cannot determine the TSC frequency: no HPET or ACPI PM timer that "
		      "counts, and no CPUID 0x15/0x16");
	}
	tsc_report_rejected(t);
	if (!t->trusted)
		pr_warn("TSC: no reference clock measured it: %lu Hz taken on trust from %s "
			"(after %lu ms of trying)", (unsigned long)t->hz, t->source,
			(unsigned long)(t->cycles / (t->hz / 1000)));
	pr_info("TSC: %lu Hz from %s%s", (unsigned long)t->hz, t->source,
		t->invariant ? ", invariant" : ", not invariant");
	if (t->measured_hz)
		pr_info("TSC: measured %lu Hz against the %s (calibration took %lu ms)",
			(unsigned long)t->measured_hz, t->measured_by,
			(unsigned long)(t->cycles / (t->hz / 1000)));
	if (t->cpuid15_hz && t->measured_hz && t->hz != t->cpuid15_hz)
		pr_info("TSC: CPUID 0x15 says %lu Hz, %lu ppm off the measurement: ignored",
			(unsigned long)t->cpuid15_hz,
			(unsigned long)tsc_ppm_diff(t->cpuid15_hz, t->measured_hz));
	if (t->cpuid16_hz)
		pr_info("TSC: CPUID 0x16 base frequency %lu MHz (information only)",
			(unsigned long)(t->cpuid16_hz / 1000000));
	timebase_init(&platform.tb, t->hz);
	if (platform.tb.tsc_hz != t->hz)
		pr_info("TSC: guests see %lu Hz (kHz-rounded, so the APIC timer divides it)",
			(unsigned long)platform.tb.tsc_hz);
	pr_info("guest APIC timer: %lu Hz (TSC / %u)", (unsigned long)platform.tb.apic_hz,
		platform.tb.apic_div);
}

/* IA32_BIOS_SIGN_ID[63:32] after the SDM's write of 0 and CPUID.01H
 * ("Microcode Update Facilities"); false where the MSR is missing (Bochs
 * has none), and then nothing is written either. */
static bool microcode_rev(uint32_t *rev)
{
	uint64_t v;

	if (!host_rdmsr_safe(MSR_IA32_BIOS_SIGN_ID, &v))
		return false;
	wrmsr(MSR_IA32_BIOS_SIGN_ID, 0);
	(void)cpuid(1, 0);
	*rev = (uint32_t)(rdmsr(MSR_IA32_BIOS_SIGN_ID) >> 32);
	return true;
}

static bool cpu_is_intel(void)
{
	struct cpuid_regs r = cpuid(0, 0);

	return r.ebx == 0x756e6547 && r.edx == 0x49656e69 && r.ecx == 0x6c65746e;
}

/* TSC-deadline mode of the host APIC only where Linux's microcode list
 * (drivers/errata.c) says it works (issue 22.4). Under a hypervisor the
 * microcode revision is the hypervisor's invention: not checked, as
 * Linux does. */
static void tsc_deadline_errata(void)
{
	struct cpuid_regs r = cpuid(1, 0);
	struct cpu_sig sig = errata_decode_sig(r.eax);
	uint32_t rev;
	const char *why;

	if (!apic_caps.tsc_deadline || !cpu_is_intel() || (r.ecx & CPUID_1_ECX_HYPERVISOR))
		return;
	/* Revision 0 is what Bochs (no such MSR behind ignore_bad_msrs)
	 * returns: no revision to check against. */
	if (!microcode_rev(&rev) || !rev) {
		pr_info("host APIC: microcode revision unknown (IA32_BIOS_SIGN_ID reads nothing): "
			"TSC-deadline errata not checked");
		return;
	}
	if (!(why = errata_tsc_deadline(sig.family, sig.model, sig.stepping, rev)))
		return;
	apic_caps.tsc_deadline_erratum = why;
	apic_caps.tsc_deadline = false;
	pr_warn("host APIC: TSC-deadline mode not used (%s, this one has %#x): one-shot instead",
		why, rev);
}

unsigned platform_lint_nmi(uint32_t apic_id)
{
	uint16_t flags[2] = { 0, 0 };
	unsigned pins = acpi_lint_nmis(&platform.acpi, apic_id, flags);

	for (unsigned pin = 0; pin < 2; pin++)
		if (pins & BIT(pin))
			apic_lint_nmi(pin, FIELD_GET(ACPI_INTI_POLARITY, flags[pin]) ==
					   ACPI_INTI_ACTIVE_LOW);
	return pins;
}

/* The MADT's NMI wiring on the BSP; each AP does the same (smp.c). */
static void lint_nmi_init(void)
{
	uint16_t flags[2] = { 0, 0 };
	unsigned pins = platform_lint_nmi(platform.apic_ids[0]);

	(void)acpi_lint_nmis(&platform.acpi, platform.apic_ids[0], flags);
	if (!platform.acpi.has_madt)
		return;
	if (!pins) {
		pr_info("host APIC: LINT0 and LINT1 masked (the MADT wires no NMI to them)");
		return;
	}
	for (unsigned pin = 0; pin < 2; pin++)
		if (pins & BIT(pin))
			pr_info("host APIC: LINT%u delivers NMI, as the MADT says (%s, %s)%s", pin,
				FIELD_GET(ACPI_INTI_POLARITY, flags[pin]) == ACPI_INTI_ACTIVE_LOW
					? "active low" : "active high",
				FIELD_GET(ACPI_INTI_TRIGGER, flags[pin]) == ACPI_INTI_LEVEL
					? "level flag ignored: NMI is edge" : "edge",
				platform.acpi.nnmis > 1 || !platform.acpi.nmis[0].all
					? "" : " on every CPU");
}

static void pic_mask_all(void)
{
	/* The legacy 8259s stay masked: every host interrupt is an APIC one. */
	outb(PIC1_DATA, PIC_MASK_ALL);
	outb(PIC2_DATA, PIC_MASK_ALL);
}

/* Firmware leftovers (issue 22.6): an input the firmware left unmasked
 * (a legacy timer, a USB controller's legacy interrupt) would interrupt
 * tickvisor on a vector it never set up. Every input of every I/O APIC
 * the MADT lists is masked before any is routed (timer/host.c routes the
 * HPET's own, on the first: the one that holds the ISA and HPET inputs). */
static void ioapic_quiet(void)
{
	unsigned n = ioapic_entries(platform.ioapic_addr), was;
	uint32_t listed = MIN(platform.acpi.nioapics, ACPI_MAX_IOAPICS);

	platform.ioapic_pins = n;
	if (!n)
		pr_info("I/O APIC: none answers at %#x", platform.ioapic_addr);
	else
		pr_info("I/O APIC: %u inputs at %#x, all masked (%u the firmware left unmasked)",
			n, platform.ioapic_addr, ioapic_mask_all(platform.ioapic_addr, n));
	for (uint32_t i = 1; i < listed; i++) {
		const struct acpi_ioapic *io = &platform.acpi.ioapics[i];
		unsigned m = io->addr >> 32 ? 0 : ioapic_entries(io->addr);

		if (!m) {
			pr_warn("I/O APIC %u (id %u, GSI %u): none answers at %#lx: not used", i,
				io->id, io->gsi_base, (unsigned long)io->addr);
			continue;
		}
		was = ioapic_mask_all(io->addr, m);
		pr_info("I/O APIC %u (id %u): %u inputs at %#lx (GSI %u-%u), all masked (%u the "
			"firmware left unmasked); none routed", i, io->id, m,
			(unsigned long)io->addr, io->gsi_base, io->gsi_base + m - 1, was);
	}
	if (platform.acpi.nioapics > ACPI_MAX_IOAPICS)
		pr_warn("I/O APIC: the MADT lists %u, only the first %u are masked",
			platform.acpi.nioapics, ACPI_MAX_IOAPICS);
}

unsigned platform_ioapic_mask_vector(uint8_t vector)
{
	uint32_t listed = MIN(platform.acpi.nioapics, ACPI_MAX_IOAPICS);
	unsigned n = platform.ioapic_pins ?
		     ioapic_mask_vector(platform.ioapic_addr, platform.ioapic_pins, vector) : 0;

	for (uint32_t i = 1; i < listed; i++) {
		const struct acpi_ioapic *io = &platform.acpi.ioapics[i];
		unsigned m = io->addr >> 32 ? 0 : ioapic_entries(io->addr);

		if (m)
			n += ioapic_mask_vector(io->addr, m, vector);
	}
	return n;
}

/* Before anything reads the TSC for time: a firmware's offset undone on
 * the BSP, as smp.c does on every AP (vmm/host/tsc_sync.h). */
static void bsp_tsc_adjust(void)
{
	int64_t was = tsc_adjust_undo();

	if (was)
		pr_warn("cpu0: IA32_TSC_ADJUST was %ld (left by the firmware): set to 0",
			(long)was);
}

void platform_init(const struct boot_info *bi)
{
	platform.inject = bi->cfg.inject;
	bsp_tsc_adjust();
	acpi_init(bi);
	cpus_init(bi);
	pic_mask_all();
	apic_init_cpu(VEC_SPURIOUS);
	tsc_deadline_errata();
	pr_info("host APIC: %s mode, id %u, TSC-deadline %s", apic_caps.x2apic ? "x2APIC" : "xAPIC",
		apic_id(), apic_caps.tsc_deadline ? "yes" : "no");
	lint_nmi_init();
	platform.ioapic_addr = platform.acpi.has_ioapic ? (uint32_t)platform.acpi.ioapic_addr
							: IOAPIC_DEFAULT_BASE;
	ioapic_quiet();
	hpet_init();
	pmtimer_init();
	tsc_init();
}

void platform_timer_init(void)
{
	struct timer_caps *c = &timer_caps;

	c->preempt = platform.vmx.preempt_timer;
	c->preempt_rate = platform.vmx.preempt_rate;
	c->lapic_tscdl = apic_caps.tsc_deadline;
	c->tsc_hz = platform.tb.tsc_hz;
	c->hpet = platform.has_hpet ? &platform.hpet : NULL;
	c->ioapic_base = platform.ioapic_addr;
	c->ioapic_gsi_base = platform.acpi.has_ioapic ? platform.acpi.ioapic_gsi_base : 0;
	c->isos = platform.acpi.isos;
	c->nisos = platform.acpi.nisos;
	c->vec_lapic = VEC_HOST_TIMER;
	c->vec_hpet = VEC_HPET;
	if (!c->lapic_tscdl) {
		c->lapic_hz = apic_timer_calibrate(c->tsc_hz);
		pr_info("host APIC timer: %lu Hz (one-shot mode, no TSC-deadline)",
			(unsigned long)c->lapic_hz);
	}
}

static const char *yn(bool b)
{
	return b ? "yes" : "no";
}

static void vmx_report(const struct vmx_caps *c)
{
	pr_info("VMX: revision %#x, VMCS region %u bytes, true controls %s%s", c->revision,
		c->vmcs_size, yn(c->true_ctls),
		c->locked_by_us ? ", IA32_FEATURE_CONTROL locked by tickvisor" : "");
	if (c->preempt_erratum)
		pr_warn("VMX: preemption timer not used: %s", c->preempt_erratum);
	else
		pr_info("VMX: preemption timer %s (rate %u: one tick per %u TSC cycles)",
			yn(c->preempt_timer), c->preempt_rate, 1u << c->preempt_rate);
	pr_info("VMX: EPT %s (4-level walk %s, 2M pages %s, 1G pages %s), VPID %s, "
		"unrestricted guest %s, VMCS memory type %u%s", yn(c->ept), yn(c->ept_walk4),
		yn(c->ept_2m), yn(c->ept_1g), yn(c->vpid), yn(c->unrestricted), c->vmcs_memtype,
		c->vmcs_memtype == VMX_MEMTYPE_WB ? " (write-back)" : "");
	pr_info("VMX: TPR shadow %s, APIC-access %s, APIC-register virtualization %s, "
		"virtual-interrupt delivery %s, x2APIC virtualization %s, posted interrupts %s",
		yn(c->tpr_shadow), yn(c->apic_access), yn(c->apic_reg_virt), yn(c->vid),
		yn(c->x2apic_virt), yn(c->posted_intr));
	pr_info("VMX: activity states HLT %s, wait-for-SIPI %s", yn(c->act_hlt), yn(c->act_wfs));
}

bool platform_vmx_init(const struct boot_info *bi)
{
	struct vmx_caps *c = &platform.vmx;
	bool ok = vmx_probe(c);

	c->locked_by_us |= bi->feature_control_locked;

	/* The APIC and TSC probes ran earlier (platform_init). */
	pr_info("CPU: VMX %s, TSC-deadline %s, invariant TSC %s, x2APIC %s", yn(c->vmx),
		yn(apic_caps.tsc_deadline), yn(platform.tsc.invariant), yn(apic_caps.x2apic));
	if (c->vmx && c->revision)
		vmx_report(c);
	return ok;
}

void platform_vmx_refuse(const struct boot_info *bi)
{
	/* The reason was printed before ExitBootServices (boot/efi_main.c)
	 * where it matched this probe's. */
	if (platform.vmx.unusable && bi->vmx_unusable != platform.vmx.unusable)
		pr_err("error: VMX unavailable: %s", platform.vmx.unusable);
	else if (platform.vmx.unusable)
		pr_err("error: no guest runs: VMX unavailable (reason above)");
	else
		pr_err("error: no guest runs: VMX operation failed on cpu0 (reason above)");
}

/* "0-3", "0,2,4-7": the APIC IDs of the CPUs up, as ranges. */
static void apic_id_ranges(char *buf, size_t n, uint32_t up)
{
	size_t len = 0;

	buf[0] = 0;
	for (uint32_t i = 0; i < up && len < n; i++) {
		uint32_t first = i, id = cpus[i] ? cpus[i]->apic_id : platform.apic_ids[i];

		while (i + 1 < up && cpus[i + 1] && cpus[i + 1]->apic_id == id + (i + 1 - first))
			i++;
		len += (size_t)fmt_snprintf(buf + len, n - len, i > first ? "%s%u-%u" : "%s%u",
					    len ? "," : "", id, id + (i - first));
	}
}

void platform_report(uint32_t up)
{
	const struct vmx_caps *c = &platform.vmx;
	char ids[96], missing[160] = "";
	size_t m = 0;

	apic_id_ranges(ids, sizeof(ids), up);
	pr_info("platform: %u of %u CPUs up (APIC ID%s %s), %s, TSC %lu Hz (%s, %s%s), %s%s",
		up, platform.ncpus_listed, up == 1 ? "" : "s", ids, apic_caps.x2apic ? "x2APIC" : "xAPIC",
		(unsigned long)platform.tsc.hz, platform.tsc.source,
		platform.tsc.invariant ? "invariant" : "not invariant",
		up < 2 ? "" : platform.tsc_unsynced ? ", CPUs out of step" : ", CPUs in step",
		platform.has_hpet ? "HPET" : "no HPET",
		platform.has_pmtimer ? ", ACPI PM timer" : ", no PM timer");
	if (!c->vmx || !c->revision) {
		pr_info("platform: VMX unusable: %s", c->unusable ? c->unusable : "not reported");
		return;
	}
#define MISS(cond, name) do { if (!(cond)) m += (size_t)fmt_snprintf(missing + m, \
		sizeof(missing) - m, "%s%s", m ? ", " : "", name); } while (0)
	MISS(c->preempt_timer, "preemption timer");
	MISS(c->ept, "EPT");
	MISS(c->unrestricted, "unrestricted guest");
	MISS(c->vid, "virtual-interrupt delivery");
	MISS(c->posted_intr, "posted interrupts");
	MISS(c->act_hlt, "HLT activity state");
#undef MISS
	pr_info("platform: VMX: %s%s%s", c->unusable ? "unusable: " : "usable",
		c->unusable ? c->unusable : "",
		m ? "" : " (every feature tickvisor uses)");
	if (m)
		pr_info("platform: VMX lacks: %s", missing);
}
