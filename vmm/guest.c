// SPDX-License-Identifier: BSD-2-Clause
/*
 * Guest lifecycle: RAM and EPT, Multiboot loading, vCPU creation, run,
 * teardown and the per-guest report. Whatever a guest does, it ends here
 * with a status and tickvisor goes on with the next one.
 */
#include <stdarg.h>
#include "drivers/io.h"
#include "drivers/fmt.h"
#include "drivers/string.h"
#include "vmm/dump.h"
#include "vmm/guest.h"
#include "vmm/lapic_glue.h"
#include "vmm/host/log.h"
#include "vmm/host/mem.h"
#include "vmm/msr.h"
#include "vmm/loader/multiboot.h"
#include "vmm/host/percpu.h"
#include "vmm/host/platform.h"
#include "vmm/host/smp.h"
#include "vmm/vcpu_setup.h"
#include "vmm/vcpu_timer.h"
#include "vmm/host/vmx_cpu.h"
#include "vmx/vmx.h"

#define GUEST_RAM_ALIGN (2 * MiB)

static void *ept_alloc_page(void *ctx)
{
	return mem_try_alloc(PAGE_SIZE, PAGE_SIZE);
}

static void ept_free_page(void *ctx, void *page)
{
	mem_free(page, PAGE_SIZE);
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
	if (first && fmt) {
		va_start(ap, fmt);
		fmt_vsnprintf(msg, sizeof(msg), fmt, ap);
		va_end(ap);
		pr_info("guest %s: %s", g->spec->name, msg);
	}
	return -1;
}

int vcpu_kill(struct vcpu *v, int status, const char *fmt, ...)
{
	char msg[192];
	va_list ap;

	va_start(ap, fmt);
	fmt_vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (!READ_ONCE(v->guest->ended)) {
		pr_err("guest %s: vcpu%u: %s", v->guest->spec->name, v->id, msg);
		vcpu_dump(v);
	}
	return guest_end(v->guest, status, NULL);
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
	g->ept = (struct ept){ .alloc_page = ept_alloc_page, .free_page = ept_free_page };
	if (!ept_init(&g->ept) ||
	    !ept_map(&g->ept, 0, (uint64_t)g->ram, g->ram_size, EPT_RWX | EPT_MT_WB))
		return guest_end(g, GUEST_STATUS_LOAD_FAIL, "out of memory for EPT tables");
	g->eptp = ept_pointer(&g->ept);
	vapic_guest_init(g);
	return 0;
}

static int guest_load(struct guest *g, uint32_t *entry, uint32_t *mbi)
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
	*entry = r.entry;
	*mbi = r.mbi;
	pr_debug("guest %s: kernel %#lx-%#lx, entry %#x, boot info %#x", s->name,
		 (unsigned long)r.kernel_start, (unsigned long)r.kernel_end, r.entry, r.mbi);
	return 0;
}

#define VCPU_STOP_US 5000000u   /* an AP must be back this soon after the end */

/* Everything of a vCPU that does not need its VMCS: made on the BSP for
 * all vCPUs before any runs, so no IPI can find a vCPU missing. */
static struct vcpu *vcpu_alloc(struct guest *g, uint32_t id)
{
	struct vcpu *v = mem_alloc(sizeof(*v));

	v->guest = g;
	v->id = id;
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
	vcpu_timer_init(v);
	vcpu_timer_calibrate(v);
	if (v->id == 0)
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

/* Waits for CPU i to leave guest g; false, with the reason, if it does
 * not. vcpu_timer.c keeps every vCPU of a multi-vCPU guest within reach
 * (the kick, or the VMX-preemption timer while the guest has IF=0), so
 * this is a host failure - but one that ends the guest, not tickvisor. */
static bool guest_stop_cpu(struct guest *g, uint32_t i)
{
	vcpu_kick(g->vcpus[i]);
	if (smp_wait(i, VCPU_STOP_US))
		return true;
	cpus_lost |= BIT(i);
	pr_err("guest %s: cpu%u did not stop running it within %u ms: the guest ends with "
	       "status %d, its memory is kept and cpu%u is left out of later guests",
	       g->spec->name, i, VCPU_STOP_US / 1000, GUEST_STATUS_HUNG, i);
	spin_lock(&g->lock);
	g->status = GUEST_STATUS_HUNG;
	spin_unlock(&g->lock);
	return false;
}

/* A guest whose vCPUs would land on a lost CPU is not started. */
static int guest_check_cpus(struct guest *g)
{
	for (uint32_t i = 1; i < g->nvcpus; i++)
		if (cpus_lost & BIT(i))
			return guest_end(g, GUEST_STATUS_LOAD_FAIL, "wants cpu%u, which is still "
					 "running an earlier guest", i);
	return 0;
}

/* vCPU n runs on CPU n: the APs' vCPUs start there, vCPU 0 here. False
 * if a CPU did not stop: the guest's memory then stays allocated. */
static bool guest_run_vcpus(struct guest *g)
{
	bool stopped = true;

	for (uint32_t i = 0; i < g->nvcpus; i++)
		vcpu_alloc(g, i);
	if (g->spec->timeout_s)
		g->deadline_tsc = rdtsc() + (uint64_t)g->spec->timeout_s * platform.tb.tsc_hz;
	for (uint32_t i = 1; i < g->nvcpus; i++)
		smp_run_on(i, vcpu_thread, g->vcpus[i]);
	vcpu_thread(g->vcpus[0]);
	/* vCPU 0 returns only once the guest has ended: make the others
	 * notice, and wait for them to be back in their idle loops. */
	guest_end(g, GUEST_STATUS_KILLED, NULL);
	for (uint32_t i = 1; i < g->nvcpus; i++)
		stopped &= guest_stop_cpu(g, i);
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

static void guest_report_exits(const struct guest *g)
{
	char line[400];
	size_t n = 0;
	uint64_t total = guest_exits(g, GUEST_EXITS_ALL);

	for (unsigned r = 0; r < VMX_EXIT_NR && n < sizeof(line); r++) {
		uint64_t c = guest_exits(g, r);

		if (c)
			n += (size_t)fmt_snprintf(line + n, sizeof(line) - n, "%s%s %lu",
						  n ? ", " : "", vmx_exit_name(r), (unsigned long)c);
	}
	pr_info("guest %s: %lu VM exits%s%s", g->spec->name, (unsigned long)total,
		n ? ": " : "", n ? line : "");
	guest_report_unassigned(g);
	if (g->spec->opts.advance == ADVANCE_AUTO && g->vcpus[0])
		pr_info("guest %s: timer advance settled at %lu TSC cycles running (%lu expiries), "
			"%lu halted (%lu)", g->spec->name, (unsigned long)g->vcpus[0]->advance.tsc,
			(unsigned long)g->vcpus[0]->advance.observations,
			(unsigned long)g->vcpus[0]->advance_halt.tsc,
			(unsigned long)g->vcpus[0]->advance_halt.observations);
}

static int guest_run(const struct guest_spec *s)
{
	struct guest *g = mem_alloc(sizeof(*g));
	bool stopped = true;

	g->spec = s;
	g->nvcpus = s->vcpus;
	pr_info("guest %s: starting (%s, mem %lu MiB, %u vCPU%s, timer %s, advance %s, apicv %s, "
		"hlt %s)", s->name, s->path, (unsigned long)(s->mem_bytes >> 20), s->vcpus,
		s->vcpus == 1 ? "" : "s", timer_sel_name(s->opts.timer),
		s->opts.advance == ADVANCE_OFF ? "off" : s->opts.advance == ADVANCE_AUTO ? "auto"
									 : "fixed",
		s->opts.apicv ? "on" : "off", s->opts.hlt == HLT_EXIT ? "exit" : "guest");
	if (s->vcpus > ncpus_online)
		guest_end(g, GUEST_STATUS_LOAD_FAIL, "wants %u vCPUs but only %u CPUs are up",
			  s->vcpus, ncpus_online);
	else if (!guest_check_cpus(g) && !guest_mem_init(g) &&
		 !guest_load(g, &g->entry, &g->mbi)) {
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
