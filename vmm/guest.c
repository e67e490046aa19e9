// SPDX-License-Identifier: BSD-2-Clause
/*
 * Guest lifecycle: RAM and EPT, Multiboot loading, vCPU creation, run,
 * teardown and the per-guest report. Whatever a guest does, it ends here
 * with a status and tickvisor goes on with the next one.
 */
#include <stdarg.h>
#include "drivers/apic.h"
#include "drivers/io.h"
#include "drivers/fmt.h"
#include "drivers/string.h"
#include "timer/timebase.h"
#include "vmm/dev/dev_ports.h"
#include "vmm/vcpu/vcpu_dump.h"
#include "vmm/guest.h"
#include "vmm/apic/housekeeper.h"
#include "vmm/apic/vapic.h"
#include "vmm/host/log.h"
#include "vmm/host/mem.h"
#include "vmm/vcpu/msr_bitmap.h"
#include "vmm/dev/acpi_tables.h"
#include "vmm/dev/dev_power.h"
#include "vmm/loader/linux.h"
#include "vmm/loader/multiboot.h"
#include "vmm/host/irq.h"
#include "vmm/host/percpu.h"
#include "vmm/host/platform.h"
#include "vmm/host/smp.h"
#include "vmm/host/topology.h"
#include "vmm/vcpu/vcpu_calib.h"
#include "vmm/vcpu/vcpu_setup.h"
#include "vmm/apic/vcpu_timer.h"
#include "vmm/host/vmx_cpu.h"
#include "vmx/vmx.h"
#include "vmm/vcpu/vcpu_run.h"

#define GUEST_RAM_ALIGN (2 * MiB)

static void *ept_alloc_page(void *ctx)
{
	return mem_try_alloc(PAGE_SIZE, PAGE_SIZE);
}

static void ept_free_page(void *ctx, void *page)
{
	mem_free(page, PAGE_SIZE);
}

/* The first end of a guest wakes every CPU that works for it: its
 * vCPUs (one halted in root mode would sleep on until its own timer),
 * the housekeeper, and the BSP when it only waits (guest_wait_end). The
 * kick follows the store of `ended`, so a CPU that checked before sleeps
 * with the kick pending and wakes at once. */
static void guest_kick_all(struct guest *g)
{
	int hk = housekeeper_cpu(g);

	for (uint32_t i = 0; i < g->nvcpus; i++)
		if (g->vcpus[i])
			vcpu_kick(g->vcpus[i]);
	if (hk > 0 && cpus[hk] != this_cpu())
		apic_send_ipi(cpus[hk]->apic_id, VEC_KICK);
	if (cpus[0] != this_cpu())
		apic_send_ipi(cpus[0]->apic_id, VEC_KICK);
}

int guest_end(struct guest *g, int status, const char *fmt, ...)
{
	char msg[192];
	va_list ap;
	bool first;

	spin_lock(&g->lock);
	first = !g->ended;
	if (first) {
		g->ended = true;
		g->status = status;
	}
	spin_unlock(&g->lock);
	if (first)
		guest_kick_all(g);
	if (first && fmt) {
		va_start(ap, fmt);
		fmt_vsnprintf(msg, sizeof(msg), fmt, ap);
		va_end(ap);
		pr_info("guest %s: %s", g->spec->name, msg);
	}
	return -1;
}

void *guest_ram_ptr(const struct guest *g, uint64_t gpa, uint64_t len)
{
	if (gpa >= g->ram_size || len > g->ram_size - gpa)
		return NULL;
	return g->ram + gpa;
}

static int guest_mem_init(struct guest *g)
{
	const struct guest_spec *s = g->spec;

	g->ram = mem_try_alloc(s->mem_bytes, GUEST_RAM_ALIGN);
	if (!g->ram)
		return guest_end(g, GUEST_STATUS_LOAD_FAIL,
				 "not enough memory for mem=%lu MiB (largest free block %lu MiB)",
				 (unsigned long)(s->mem_bytes >> 20),
				 (unsigned long)(mem_largest_free() >> 20));
	g->ram_size = s->mem_bytes;
	g->ept = (struct ept){ .alloc_page = ept_alloc_page, .free_page = ept_free_page,
			       .small_only = !platform.vmx.ept_2m };
	if (!ept_init(&g->ept) ||
	    !ept_map(&g->ept, 0, (uint64_t)g->ram, g->ram_size, EPT_RWX | EPT_MT_WB))
		return guest_end(g, GUEST_STATUS_LOAD_FAIL, "out of memory for EPT tables");
	g->eptp = ept_pointer(&g->ept);
	vapic_guest_init(g);
	return 0;
}

/* The FADT and DSDT point the guest at the registers dev_power.c models. */
_Static_assert(ACPI_TV_RESET_PORT == DEV_RESET_CONTROL_PORT &&
	       ACPI_TV_RESET_VALUE == DEV_RESET_VALUE &&
	       ACPI_TV_SLEEP_CTL_PORT == DEV_ACPI_SLEEP_CONTROL_PORT &&
	       ACPI_TV_SLEEP_STS_PORT == DEV_ACPI_SLEEP_STATUS_PORT &&
	       ACPI_TV_SLP_TYP_S5 == DEV_ACPI_SLP_TYP_S5, "FADT registers = dev_power.h");

/* The ACPI tables every guest finds in its BIOS area (both loaders'
 * memory maps reserve it); vCPU n's APIC ID is n. Returns the RSDP. */
static int guest_acpi(struct guest *g, uint64_t *rsdp)
{
	uint32_t ids[TV_MAX_CPUS];
	struct acpi_tables_layout at;
	char err[160];

	for (uint32_t i = 0; i < g->nvcpus; i++)
		ids[i] = i;
	if (acpi_tables_build(g->ram + ACPI_TABLES_BASE, ACPI_TABLES_SIZE, ACPI_TABLES_BASE, ids,
			      g->nvcpus, &at, err, sizeof(err)))
		return guest_end(g, GUEST_STATUS_LOAD_FAIL, "cannot build ACPI tables: %s", err);
	*rsdp = at.rsdp;
	return 0;
}

/* A bzImage by the Linux boot protocol; the modules are its initrd. */
static int guest_load_linux(struct guest *g, uint64_t rsdp)
{
	const struct guest_spec *s = g->spec;
	struct linux_initrd parts[TV_MAX_MODULES];
	struct linux_boot b = { .cmdline = s->cmdline, .initrd = parts, .ninitrd = s->nmodules,
				.acpi_rsdp = rsdp };
	struct linux_result r;
	char err[LX_ERR_LEN];

	for (uint32_t i = 0; i < s->nmodules; i++)
		parts[i] = (struct linux_initrd){ s->modules[i].data, s->modules[i].size,
						  s->modules[i].path };
	if (linux_load(g->ram, g->ram_size, s->image, s->image_size, &b, &r, err, sizeof(err)))
		return guest_end(g, GUEST_STATUS_LOAD_FAIL, "cannot load %s: %s", s->path, err);
	g->boot_linux = true;
	g->entry = r.entry;
	g->mbi = r.boot_params;
	g->linux_gdt = r.gdt;
	pr_info("guest %s: Linux boot protocol %u.%02u: kernel %#lx-%#lx (runs to %#lx), "
		"initrd %#lx+%#lx", s->name, r.protocol >> 8, r.protocol & 0xff,
		(unsigned long)r.kernel_start, (unsigned long)r.kernel_end,
		(unsigned long)r.runtime_end, (unsigned long)r.initrd_start,
		(unsigned long)r.initrd_size);
	return 0;
}

static int guest_load_multiboot(struct guest *g)
{
	const struct guest_spec *s = g->spec;
	struct mb_module mods[TV_MAX_MODULES];
	struct mb_result r;
	char err[160];

	for (uint32_t i = 0; i < s->nmodules; i++)
		mods[i] = (struct mb_module){ s->modules[i].data, s->modules[i].size,
					      s->modules[i].path };
	if (multiboot_load(g->ram, g->ram_size, s->image, s->image_size, s->cmdline, mods,
			   s->nmodules, &r, err, sizeof(err)))
		return guest_end(g, GUEST_STATUS_LOAD_FAIL, "cannot load %s: %s", s->path, err);
	g->entry = r.entry;
	g->mbi = r.mbi;
	pr_debug("guest %s: kernel %#lx-%#lx, entry %#x, boot info %#x", s->name,
		 (unsigned long)r.kernel_start, (unsigned long)r.kernel_end, r.entry, r.mbi);
	return 0;
}

/* The tables first: a Multiboot kernel that loads itself over the BIOS
 * area wins (its memory map called that area reserved). A bzImage is
 * known by its setup header magic, anything else is Multiboot. */
static int guest_load(struct guest *g)
{
	const struct guest_spec *s = g->spec;
	uint64_t rsdp;

	if (guest_acpi(g, &rsdp))
		return -1;
	if (linux_is_bzimage(s->image, s->image_size))
		return guest_load_linux(g, rsdp);
	return guest_load_multiboot(g);
}

#define VCPU_STOP_US 5000000u   /* an AP must be back this soon after the end */

/* The physical CPU of vCPU i: the i-th of its cpus= list, else CPU i. */
static uint32_t guest_vcpu_cpu(const struct guest_spec *s, uint32_t i)
{
	return s->ncpus_listed ? s->cpus[i] : topology_vcpu_cpu(i);
}

/* Everything of a vCPU that does not need its VMCS: made on the BSP for
 * all vCPUs before any runs, so no IPI can find a vCPU missing. */
static struct vcpu *vcpu_alloc(struct guest *g, uint32_t id)
{
	struct vcpu *v = mem_alloc(sizeof(*v));

	v->guest = g;
	v->id = id;
	v->cpu = guest_vcpu_cpu(g->spec, id);
	v->init_cd_nw = CR0_CD | CR0_NW;        /* power-up state */
	v->msr_bitmap = msr_bitmap_new();
	g->vcpus[id] = v;
	vapic_create(v);
	return v;
}

/* VMCLEAR on the CPU where the VMCS is current, so the processor writes
 * back whatever it caches of it and never touches the region again (SDM
 * Vol. 3C, "Software Use of the VMCS and Related Structures"): only then
 * may the page be freed. A VMCS that will not clear is never freed. */
static void vcpu_vmcs_release(struct vcpu *v)
{
	if (v->vmcs && !vmclear((uint64_t)v->vmcs)) {
		pr_err("guest %s: vcpu%u: VMCLEAR of its VMCS failed: the page is kept",
		       v->guest->spec->name, v->id);
		v->vmcs = NULL;
	}
}

/* The VMCS and its APIC part; a VMX instruction that fails on the way
 * (a field this CPU does not have) ends the guest, naming the field. */
static bool vcpu_thread_setup(struct vcpu *v, char *err, size_t n)
{
	bool ok;

	vmx_setup_begin();
	ok = vcpu_setup_vmcs(v, err, n);
	if (ok)
		vapic_vcpu_init(v);
	return vmx_setup_end(ok ? err : NULL, ok ? n : 0) && ok;
}

/* On the vCPU's own CPU: the VMCS (host state is per CPU), then run until
 * the guest ends, then VMCLEAR here where the VMCS is current. */
static void vcpu_thread(void *arg)
{
	struct vcpu *v = arg;
	struct guest *g = v->guest;
	char err[160];

	if (!vcpu_thread_setup(v, err, sizeof(err))) {
		guest_end(g, GUEST_STATUS_LOAD_FAIL, "vcpu%u: cannot set up the VMCS: %s", v->id, err);
		vcpu_vmcs_release(v);
		return;
	}
	vcpu_calib_measure(v);
	vcpu_calib_probe_if0(v);
	vcpu_timer_init(v);             /* after probe 5, which timer=auto heeds */
	if (v->id == 0 && g->boot_linux)
		vcpu_reset_linux(v, g->entry, g->mbi, g->linux_gdt);
	else if (v->id == 0)
		vcpu_reset_multiboot(v, g->entry, g->mbi);
	else
		v->wait_sipi = true;    /* APs wait for the guest's INIT-SIPI */
	vcpu_run(v);
	vcpu_vmcs_release(v);
}

static void vcpu_free(struct vcpu *v)
{
	vapic_pi_free(v);
	if (v->vmcs)
		mem_free(v->vmcs, PAGE_SIZE);
	if (v->lapic)
		mem_free(v->lapic, sizeof(*v->lapic));
	if (v->msr_bitmap)
		mem_free(v->msr_bitmap, PAGE_SIZE);
	mem_free(v, sizeof(*v));
}

static void guest_destroy(struct guest *g)
{
	housekeeper_free(g);
	for (uint32_t i = 0; i < g->nvcpus; i++)
		if (g->vcpus[i])
			vcpu_free(g->vcpus[i]);
	ept_destroy(&g->ept);
	vapic_guest_destroy(g);
	if (g->ram)
		mem_free(g->ram, g->ram_size);
}

/* CPUs that did not come back from a guest that ended (bit n: CPU n).
 * Such a CPU may still run that guest's code on its VMCS, EPT and RAM:
 * none of them is freed, and no later guest gets the CPU. */
static uint64_t cpus_lost;
_Static_assert(TV_MAX_CPUS <= 64, "cpus_lost and busy hold a bit per CPU");

/* Waits for CPU `cpu` to leave guest g; false, with the reason, if it
 * does not. vcpu_timer.c keeps every vCPU of a multi-vCPU guest within
 * reach (the kick, or the VMX-preemption timer while the guest has IF=0),
 * and the housekeeper checks for the end between expiries, so this is a
 * host failure - but one that ends the guest, not tickvisor. */
static bool guest_stop_cpu(struct guest *g, uint32_t cpu)
{
	apic_send_ipi(cpus[cpu]->apic_id, VEC_KICK);
	if (smp_wait(cpu, VCPU_STOP_US))
		return true;
	cpus_lost |= BIT(cpu);
	pr_err("guest %s: cpu%u did not stop running it within %u ms: the guest ends with "
	       "status %d, its memory is kept and cpu%u is left out of later guests",
	       g->spec->name, cpu, VCPU_STOP_US / 1000, GUEST_STATUS_HUNG, cpu);
	spin_lock(&g->lock);
	g->status = GUEST_STATUS_HUNG;
	spin_unlock(&g->lock);
	return false;
}

/* Where SMT is in use, which core each vCPU got (issue 22.9). */
static void guest_report_placement(const struct guest *g)
{
	char text[256];
	size_t len = 0;

	if (!topology_smt())
		return;
	text[0] = 0;
	for (uint32_t i = 0; i < g->nvcpus && len + 1 < sizeof(text); i++) {
		uint32_t c = guest_vcpu_cpu(g->spec, i);

		len += (size_t)fmt_snprintf(text + len, sizeof(text) - len, "%svcpu%u on cpu%u "
					    "(core %u)", i ? ", " : "", i, c,
					    host_topology.core_key[c]);
	}
	pr_info("guest %s: %s", g->spec->name, text);
}

/* The CPUs g's vCPUs run on (bit n: CPU n), checked: each must be up and
 * not kept by an earlier guest that did not let go of it (issue 13.1). */
static int guest_place_vcpus(struct guest *g, uint64_t *busy)
{
	const struct guest_spec *s = g->spec;

	*busy = 0;
	for (uint32_t i = 0; i < g->nvcpus; i++) {
		uint32_t c = guest_vcpu_cpu(s, i);

		if (c >= ncpus_online || !cpus[c])
			return guest_end(g, GUEST_STATUS_LOAD_FAIL, "vcpu%u: cpus= names cpu%u, which "
					 "does not exist (%u CPU%s up)", i, c, ncpus_online,
					 ncpus_online == 1 ? " is" : "s are");
		if (cpus_lost & BIT(c))
			return guest_end(g, GUEST_STATUS_LOAD_FAIL, "wants cpu%u, which is still "
					 "running an earlier guest", c);
		*busy |= BIT(c);
	}
	guest_report_placement(g);
	return 0;
}

/* The BSP runs none of g's vCPUs and is not its housekeeper: it sleeps
 * until g ends (guest_end() kicks it), or - should every vCPU's CPU
 * fail to end it - until its time limit is well over. */
static void guest_wait_end(struct guest *g)
{
	uint64_t give_up = g->deadline_tsc ? g->deadline_tsc + VCPU_STOP_US *
					     (platform.tb.tsc_hz / 1000000) : 0;

	while (!READ_ONCE(g->ended)) {
		if (give_up && timebase_reached(rdtsc(), give_up)) {
			guest_end(g, GUEST_STATUS_HUNG, "no vCPU ended it after its time limit");
			break;
		}
		if (give_up && !timer_host_sleep_arm(&this_cpu()->timer, give_up))
			continue;
		wait_for_interrupt();
	}
	timer_host_disarm_all(&this_cpu()->timer);
}

/* Each vCPU starts on its CPU, the housekeeper on its own; the BSP takes
 * whichever of them is CPU 0's, else waits. False if a CPU did not stop:
 * the guest's memory then stays allocated. */
static bool guest_run_vcpus(struct guest *g)
{
	struct vcpu *here = NULL;
	int hk = housekeeper_cpu(g);
	bool stopped = true;

	if (g->spec->timeout_s)
		g->deadline_tsc = rdtsc() + (uint64_t)g->spec->timeout_s * platform.tb.tsc_hz;
	if (hk > 0)
		smp_run_on((uint32_t)hk, housekeeper_run, g);
	for (uint32_t i = 0; i < g->nvcpus; i++) {
		struct vcpu *v = g->vcpus[i];

		if (v->cpu)
			smp_run_on(v->cpu, vcpu_thread, v);
		else
			here = v;
	}
	if (here)
		vcpu_thread(here);
	else if (hk == 0)
		housekeeper_run(g);
	else
		guest_wait_end(g);
	/* Make the others notice the end, and wait for them to be back in
	 * their idle loops. */
	guest_end(g, GUEST_STATUS_KILLED, NULL);
	for (uint32_t i = 0; i < g->nvcpus; i++)
		if (g->vcpus[i]->cpu)
			stopped &= guest_stop_cpu(g, g->vcpus[i]->cpu);
	if (hk > 0)
		stopped &= guest_stop_cpu(g, (uint32_t)hk);
	return stopped;
}

uint64_t guest_exits(const struct guest *g, uint64_t reason)
{
	uint64_t n = 0;

	for (uint32_t i = 0; i < g->nvcpus; i++) {
		const struct vcpu *v = g->vcpus[i];

		if (!v)
			continue;
		if (reason != GUEST_EXITS_ALL)
			n += v->stats.exits[reason];
		else            /* summed here, not counted on every exit */
			for (unsigned r = 0; r < VMX_EXIT_NR; r++)
				n += v->stats.exits[r];
	}
	return n;
}

/* Unassigned memory the guest read (all ones) or wrote (dropped). */
static void guest_report_unassigned(const struct guest *g)
{
	uint64_t rd = 0, wr = 0;

	for (uint32_t i = 0; i < g->nvcpus; i++) {
		if (g->vcpus[i]) {
			rd += g->vcpus[i]->stats.unassigned_reads;
			wr += g->vcpus[i]->stats.unassigned_writes;
		}
	}
	if (rd || wr)
		pr_info("guest %s: unassigned memory: %lu reads (all ones), %lu writes (dropped)",
			g->spec->name, (unsigned long)rd, (unsigned long)wr);
}

/* "reason N, reason N, ..." of the nonzero counts in exits[]; its length. */
static size_t exits_by_reason(char *line, size_t size, const uint64_t *exits)
{
	size_t n = 0;

	for (unsigned r = 0; r < VMX_EXIT_NR && n < size; r++)
		if (exits[r])
			n += (size_t)fmt_snprintf(line + n, size - n, "%s%s %lu", n ? ", " : "",
						  vmx_exit_name(r), (unsigned long)exits[r]);
	return n;
}

/* One line per vCPU of a multi-vCPU guest, so that a figure for one vCPU
 * (the isolated CPU of a dedicated-CPU guest: issue 24.5) can be read. */
static void guest_report_vcpu_exits(const struct guest *g)
{
	char line[400];

	if (g->nvcpus < 2)
		return;
	for (uint32_t i = 0; i < g->nvcpus; i++) {
		const struct vcpu *v = g->vcpus[i];
		uint64_t total = 0;
		size_t n;

		if (!v)
			continue;
		for (unsigned r = 0; r < VMX_EXIT_NR; r++)
			total += v->stats.exits[r];
		n = exits_by_reason(line, sizeof(line), v->stats.exits);
		pr_info("guest %s: vcpu%u: %lu VM exits%s%s", g->spec->name, i,
			(unsigned long)total, n ? ": " : "", n ? line : "");
	}
}

static void guest_report_exits(const struct guest *g)
{
	char line[400];
	uint64_t exits[VMX_EXIT_NR];
	size_t n;

	for (unsigned r = 0; r < VMX_EXIT_NR; r++)
		exits[r] = guest_exits(g, r);
	n = exits_by_reason(line, sizeof(line), exits);
	pr_info("guest %s: %lu VM exits%s%s", g->spec->name,
		(unsigned long)guest_exits(g, GUEST_EXITS_ALL), n ? ": " : "", n ? line : "");
	guest_report_vcpu_exits(g);
	guest_report_unassigned(g);
	if (g->spec->opts.advance == ADVANCE_AUTO && g->vcpus[0]) {
		const struct vcpu *v = g->vcpus[0];

		pr_info("guest %s: timer advance settled at %lu TSC cycles running one-shot (%lu "
			"expiries), %lu periodic (%lu), %lu TSC-deadline (%lu); %lu halted (%lu)",
			g->spec->name, (unsigned long)v->advance[VTIMER_ONESHOT].tsc,
			(unsigned long)v->advance[VTIMER_ONESHOT].observations,
			(unsigned long)v->advance[VTIMER_PERIODIC].tsc,
			(unsigned long)v->advance[VTIMER_PERIODIC].observations,
			(unsigned long)v->advance[VTIMER_TSC_DEADLINE].tsc,
			(unsigned long)v->advance[VTIMER_TSC_DEADLINE].observations,
			(unsigned long)v->advance_halt.tsc,
			(unsigned long)v->advance_halt.observations);
	}
}

/* CPUs, memory, timers, image: each step ends the guest on failure. */
static int guest_prepare(struct guest *g)
{
	const struct guest_spec *s = g->spec;
	uint64_t busy;

	if (s->vcpus > ncpus_online)
		return guest_end(g, GUEST_STATUS_LOAD_FAIL, "wants %u vCPUs but only %u CPUs are up",
				 s->vcpus, ncpus_online);
	/* Each vCPU's TSC is its CPU's plus one offset: CPUs out of step would
	 * show the guest a TSC that differs between its vCPUs (issue 22.4). */
	if (s->vcpus > 1 && platform.tsc_unsynced)
		return guest_end(g, GUEST_STATUS_LOAD_FAIL, "has %u vCPUs, but the CPUs' TSCs are "
				 "out of step (warp test): refused", s->vcpus);
	if (guest_place_vcpus(g, &busy) || guest_mem_init(g) ||
	    housekeeper_plan(g, busy | cpus_lost) || guest_load(g))
		return -1;
	/* Before any vCPU runs, so no IPI can find a vCPU missing. */
	for (uint32_t i = 0; i < g->nvcpus; i++)
		vcpu_alloc(g, i);
	return 0;
}

static int guest_run(const struct guest_spec *s)
{
	struct guest *g = mem_alloc(sizeof(*g));
	bool stopped = true;

	g->spec = s;
	g->nvcpus = s->vcpus;
	dev_cmos_guest_init(&g->dev.rtc);
	g->hlt = s->opts.hlt;
	pr_info("guest %s: starting (%s, mem %lu MiB, %u vCPU%s, timer %s, advance %s, apicv %s, "
		"hlt %s)", s->name, s->path, (unsigned long)(s->mem_bytes >> 20), s->vcpus,
		s->vcpus == 1 ? "" : "s", timer_sel_name(s->opts.timer),
		s->opts.advance == ADVANCE_OFF ? "off" : s->opts.advance == ADVANCE_AUTO ? "auto"
									 : "fixed",
		s->opts.apicv ? "on" : "off", s->opts.hlt == HLT_EXIT ? "exit" : "guest");
	if (!guest_prepare(g)) {
		log_defer(true);
		stopped = guest_run_vcpus(g);
		log_defer(false);
		guest_report_exits(g);
	}
	int status = g->status;

	if (stopped) {
		guest_destroy(g);
		mem_free(g, sizeof(*g));
	}
	pr_info("guest %s exited with status %d", s->name, status);
	return status;
}

uint32_t guests_run_all(const struct tv_config *cfg)
{
	uint32_t failed = 0;

	for (uint32_t i = 0; i < cfg->nguests; i++)
		if (guest_run(&cfg->guests[i]))
			failed++;
	pr_info("done: %u guests, %u failed", cfg->nguests, failed);
	return failed;
}
