// SPDX-License-Identifier: BSD-2-Clause
#include "drivers/fmt.h"
#include "drivers/io.h"
#include "timer/host.h"
#include "vmm/guest.h"
#include "vmm/host/log.h"
#include "vmm/host/platform.h"
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

/* How late the expiry dated expire_at is, in TSC cycles; 0 unless more
 * than the guest's late_us after target. */
static uint64_t late_by(const struct vcpu *v, uint64_t target, uint64_t expire_at)
{
	int64_t late = (int64_t)(expire_at - target);
	uint64_t limit = (uint64_t)v->guest->spec->opts.late_us * (platform.tb.tsc_hz / 1000000);

	return late > 0 && (uint64_t)late > limit ? (uint64_t)late : 0;
}

static void late_line(const struct vcpu *v, uint64_t target, uint64_t late, const char *how)
{
	log_trace(TRACE_LATE, "vcpu%u: expiry %lu us late (%lu TSC cycles, late_us=%u): target "
		  "%#lx, backend %s, %s", v->id, (unsigned long)(late / (platform.tb.tsc_hz / 1000000)),
		  (unsigned long)late, v->guest->spec->opts.late_us, (unsigned long)target,
		  timer_kind_name(v->timer_kind), how);
}

/* What the vCPU's CPU was doing: woken from a halt in root mode, or at an
 * entry after an exit (the backend's own, or another that came first), and
 * where the preemption timer stood, relative to the target. */
static void trace_timer_late(struct vcpu *v, uint64_t target, uint64_t expire_at, bool halted)
{
	uint64_t late = late_by(v, target, expire_at);
	unsigned basic = vmx_exit_basic(&v->exit);
	char how[200];
	int n;

	if (!late)
		return;
	if (halted) {
		late_line(v, target, late, "found by the vCPU halted in root mode");
		return;
	}
	n = fmt_snprintf(how, sizeof(how), "found at the entry after exit %u (%s%s) at rip %#lx",
			 basic, vmx_exit_name(basic),
			 v->timer_exit ? ", the backend's" : "", (unsigned long)vmread(VMCS_GUEST_RIP));
	if ((v->cached_pin_ctls & BIT(PIN_PREEMPT_TIMER)) && (size_t)n < sizeof(how))
		fmt_snprintf(how + n, sizeof(how) - (size_t)n, "; preemption timer armed for "
			     "target%+ld", (long)(v->preempt_at + v->tsc_offset - target));
	late_line(v, target, late, how);
}

void trace_timer_late_posted(struct vcpu *v, uint64_t target, uint64_t expire_at)
{
	uint64_t late = late_by(v, target, expire_at);

	if (late)
		late_line(v, target, late, "posted by the housekeeper");
}

/* Said after the expiry, from what the hot path keeps anyway: the guest
 * TSC is read here, so it is that of the line, a little after the expiry. */
void trace_timer_expire(struct vcpu *v, uint64_t target, uint64_t expire_at,
			uint64_t spin_until, bool halted)
{
	const struct vlapic *l = v->lapic;
	const struct vtimer *t = &l->timer;
	uint64_t now = rdtsc() + v->tsc_offset;
	uint32_t vec = vlapic_get(l, LAPIC_LVT_TIMER) & 0xffu;

	if (log_trace_on(TRACE_LATE))
		trace_timer_late(v, target, expire_at, halted);
	if (!log_trace_on(TRACE_TIMER))
		return;

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
