// SPDX-License-Identifier: BSD-2-Clause
#include "drivers/io.h"
#include "vmm/host/log.h"
#include "vmm/trace.h"
#include "vmx/vmx.h"

static const char *const vtimer_mode_names[] = {
	[VTIMER_ONESHOT] = "one-shot", [VTIMER_PERIODIC] = "periodic",
	[VTIMER_TSC_DEADLINE] = "TSC-deadline",
};

static const char *const ipi_dm_names[8] = {
	[LAPIC_DM_FIXED] = "fixed", [LAPIC_DM_LOWEST] = "lowest-priority",
	[LAPIC_DM_SMI] = "SMI", [LAPIC_DM_NMI] = "NMI", [LAPIC_DM_INIT] = "INIT",
	[LAPIC_DM_SIPI] = "SIPI", [LAPIC_DM_EXTINT] = "ExtINT",
};

static const char *const ipi_sh_names[4] = {
	[LAPIC_SH_NONE] = "", [LAPIC_SH_SELF] = " (self)",
	[LAPIC_SH_ALL] = " (all)", [LAPIC_SH_OTHERS] = " (all others)",
};

static const char *name_of(const char *const *names, size_t n, unsigned i)
{
	return i < n && names[i] ? names[i] : "?";
}

void trace_timer_arm(struct vcpu *v)
{
	const struct vtimer *t = &v->lapic->timer;
	uint64_t now = v->lapic->ops->now(v->lapic);

	if (!t->armed) {
		log_trace(TRACE_TIMER, "vcpu%u: stop", v->id);
		return;
	}
	log_trace(TRACE_TIMER, "vcpu%u: arm %s, target %#lx (in %ld TSC cycles)", v->id,
		  name_of(vtimer_mode_names, ARRAY_SIZE(vtimer_mode_names), t->mode),
		  (unsigned long)t->target, (long)(t->target - now));
}

static const char *timer_delivery(const struct vlapic *l)
{
	if (vlapic_get(l, LAPIC_LVT_TIMER) & LAPIC_LVT_MASKED)
		return "masked: not delivered";
	return l->hw_vid ? "virtual-interrupt delivery" : "event injection";
}

/* Said after the expiry, from what the hot path keeps anyway: the guest
 * TSC is read here, so it is that of the line, a little after the expiry. */
void trace_timer_expire(struct vcpu *v, uint64_t spin_until)
{
	const struct vlapic *l = v->lapic;
	const struct vtimer *t = &l->timer;
	uint64_t now = rdtsc() + v->tsc_offset;
	uint32_t vec = vlapic_get(l, LAPIC_LVT_TIMER) & 0xffu;

	if (!t->armed) {
		log_trace(TRACE_TIMER, "vcpu%u: expire at %#lx, inject vector %#x (%s), entry wait "
			  "until %#lx", v->id, (unsigned long)now, vec, timer_delivery(l),
			  (unsigned long)spin_until);
		return;
	}
	log_trace(TRACE_TIMER, "vcpu%u: expire at %#lx, inject vector %#x (%s), entry wait until "
		  "%#lx, next target %#lx (in %ld TSC cycles)", v->id, (unsigned long)now, vec,
		  timer_delivery(l), (unsigned long)spin_until, (unsigned long)t->target,
		  (long)(t->target - now));
}

void trace_ipi(struct vlapic *l, const struct vlapic *t, const struct lapic_ipi *ipi)
{
	const char *dm = name_of(ipi_dm_names, ARRAY_SIZE(ipi_dm_names), ipi->dm);

	if (t) {
		log_trace(TRACE_IPI, "vcpu%u: deliver %s vector %#x to vcpu%u", l->id, dm,
			  ipi->vector, t->id);
		return;
	}
	log_trace(TRACE_IPI, "vcpu%u: send %s vector %#x to %s %#x%s", l->id, dm, ipi->vector,
		  ipi->logical ? "logical" : "physical", ipi->dest,
		  name_of(ipi_sh_names, ARRAY_SIZE(ipi_sh_names), ipi->shorthand));
}

void trace_exit(struct vcpu *v)
{
	unsigned basic = vmx_exit_basic(&v->exit);

	log_trace(TRACE_EXIT, "vcpu%u: exit %u (%s) at rip %#lx, qualification %#lx", v->id,
		  basic, vmx_exit_name(basic), (unsigned long)vmread(VMCS_GUEST_RIP),
		  (unsigned long)vmread(VMCS_EXIT_QUALIFICATION));
}
