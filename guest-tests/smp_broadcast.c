// SPDX-License-Identifier: BSD-2-Clause
/*
 * smp_broadcast: IPIs to several CPUs at once (Intel SDM Vol. 3A,
 * "Determining IPI Destination"; DESIGN.md, "IPI rules": shorthands are
 * expanded per vCPU). For each, the exact set of CPUs whose handler ran,
 * once each:
 *
 *  - physical destination 0xFF (xAPIC) / 0xFFFFFFFF (x2APIC): every CPU,
 *    the sender included;
 *  - shorthand all-including-self: every CPU;
 *  - shorthand all-excluding-self: every CPU but the sender;
 *  - shorthand self: the sender only;
 *  - an NMI to all-excluding-self: every other CPU's NMI handler, once;
 *  - a physical destination no CPU has: nobody;
 *
 * sent by the BSP and by APs, in xAPIC and x2APIC mode. Needs 4 CPUs.
 */
#include "lib/guest.h"
#include "lib/smp.h"
#include "lib/smp_hits.h"
#include "lib/tsc.h"

#define IPI_VECTOR              0x42u
#define XAPIC_BROADCAST         0xffu
#define X2APIC_BROADCAST        0xffffffffu
#define NO_SUCH_APIC            0x20u   /* above every CPU here, below broadcast */
#define NEED_CPUS               4u

enum want { WANT_ALL, WANT_OTHERS, WANT_SELF, WANT_NONE };

struct bcast_case {
	const char *name;
	unsigned sender;
	unsigned dm;                    /* LAPIC_DM_FIXED or LAPIC_DM_NMI */
	unsigned shorthand;
	uint32_t dest;                  /* with LAPIC_DEST_NONE; see dest_of() */
	enum want want;
};

/* dest 0: the broadcast ID of the current mode. */
static const struct bcast_case cases[] = {
	{ "physical broadcast", 0, LAPIC_DM_FIXED, LAPIC_DEST_NONE, 0, WANT_ALL },
	{ "physical broadcast", 2, LAPIC_DM_FIXED, LAPIC_DEST_NONE, 0, WANT_ALL },
	{ "all including self", 0, LAPIC_DM_FIXED, LAPIC_DEST_ALL, 0, WANT_ALL },
	{ "all including self", 3, LAPIC_DM_FIXED, LAPIC_DEST_ALL, 0, WANT_ALL },
	{ "all excluding self", 0, LAPIC_DM_FIXED, LAPIC_DEST_ALL_BUT_SELF, 0, WANT_OTHERS },
	{ "all excluding self", 2, LAPIC_DM_FIXED, LAPIC_DEST_ALL_BUT_SELF, 0, WANT_OTHERS },
	{ "self", 0, LAPIC_DM_FIXED, LAPIC_DEST_SELF, 0, WANT_SELF },
	{ "self", 3, LAPIC_DM_FIXED, LAPIC_DEST_SELF, 0, WANT_SELF },
	{ "NMI to all excluding self", 0, LAPIC_DM_NMI, LAPIC_DEST_ALL_BUT_SELF, 0, WANT_OTHERS },
	{ "NMI to all excluding self", 1, LAPIC_DM_NMI, LAPIC_DEST_ALL_BUT_SELF, 0, WANT_OTHERS },
	{ "physical ID 0x20 (no such CPU)", 1, LAPIC_DM_FIXED, LAPIC_DEST_NONE, NO_SUCH_APIC,
	  WANT_NONE },
};

static struct smp_hits hits, nmi_hits;
static unsigned ncpus;

static void ipi_handler(struct ex_regs *regs)
{
	(void)regs;
	smp_hits_record(&hits);
	apic_eoi();
}

static void nmi_handler(struct ex_regs *regs)
{
	(void)regs;
	smp_hits_record(&nmi_hits);
}

static uint32_t want_mask(const struct bcast_case *c)
{
	uint32_t all = (uint32_t)BIT(ncpus) - 1;

	switch (c->want) {
	case WANT_ALL:    return all;
	case WANT_OTHERS: return all & ~(uint32_t)BIT(c->sender);
	case WANT_SELF:   return (uint32_t)BIT(c->sender);
	case WANT_NONE:   return 0;
	}
	return 0;
}

/* On the sender; its own handler runs here too (interrupts are on). */
static void send_case(void *arg)
{
	const struct bcast_case *c = arg;
	unsigned vector = c->dm == LAPIC_DM_NMI ? 0 : IPI_VECTOR;
	uint32_t dest = c->dest;

	if (!dest && c->shorthand == LAPIC_DEST_NONE)
		dest = apic_is_x2apic() ? X2APIC_BROADCAST : XAPIC_BROADCAST;
	apic_icr_write(smp_icr(c->dm, vector, c->shorthand, false), dest);
}

static void run_case(const struct bcast_case *c)
{
	struct smp_hits *h = c->dm == LAPIC_DM_NMI ? &nmi_hits : &hits;
	uint32_t want = want_mask(c), got = 0;
	bool ok;

	smp_hits_clear(&hits);
	smp_hits_clear(&nmi_hits);
	ok = on_cpu(c->sender, send_case, (void *)c);
	ok &= smp_hits_expect(h, want, 1, SMP_HITS_TIMEOUT_US, SMP_HITS_QUIET_US, &got);
	/* ... and nothing of the other kind */
	ok &= !smp_hits_mask(h == &hits ? &nmi_hits : &hits);
	report(ok, "%s from CPU %u: reached CPUs 0x%x once each (want 0x%x)", c->name, c->sender,
	       got, want);
}

static void test_mode(bool x2)
{
	report_prefix_push(x2 ? "x2APIC" : "xAPIC");
	for (unsigned i = 0; i < ARRAY_SIZE(cases); i++)
		run_case(&cases[i]);
	report_prefix_pop();
}

int main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	report_prefix_push("smp_broadcast");
	ncpus = cpu_count();
	if (ncpus < NEED_CPUS) {
		report_skip("needs %u CPUs, have %u", NEED_CPUS, ncpus);
		return report_summary();
	}
	handle_irq(IPI_VECTOR, ipi_handler);
	handle_irq(NMI_VECTOR, nmi_handler);
	if (!smp_init_report())
		return report_summary();
	sti();
	smp_run_both_modes(test_mode);
	return report_summary();
}
