// SPDX-License-Identifier: BSD-2-Clause
/*
 * smp_logical: logical destinations (Intel SDM Vol. 3A, "Logical
 * Destination Mode" and "Lowest Priority Delivery Mode"; DESIGN.md, "IPI
 * rules"): for each destination the exact set of CPUs reached, once each.
 *
 *  - xAPIC flat model (DFR 0xFFFFFFFF): LDR[31:24] is a bit per CPU, a
 *    CPU is reached if LDR & MDA != 0; 0xFF reaches all;
 *  - xAPIC cluster model (DFR 0x0FFFFFFF): LDR[31:28] cluster, [27:24]
 *    member bits; a CPU is reached if the clusters match and the member
 *    bits meet; 0xFF reaches all;
 *  - x2APIC cluster: LDR is read-only, derived from the x2APIC ID as
 *    (ID >> 4) << 16 | 1 << (ID & 15); the destination's bits 31:16 pick
 *    the cluster, 15:0 the members; 0xFFFFFFFF reaches all;
 *  - lowest priority to a logical set: exactly one CPU of the set, once.
 *
 * Sent by the BSP and by an AP. Written for exactly 4 CPUs.
 */
#include "lib/guest.h"
#include "lib/smp.h"
#include "lib/smp_hits.h"
#include "lib/tsc.h"

#define IPI_VECTOR              0x43u
#define NEED_CPUS               4u
#define DFR_FLAT                0xffffffffu
#define DFR_CLUSTER             0x0fffffffu
#define LOWEST_ROUNDS           4u
#define MSR_X2APIC_LDR          X2APIC_MSR(LAPIC_LDR)

struct logical_case {
	uint32_t dest;                  /* message destination address */
	uint32_t want;                  /* CPUs reached, bit per CPU */
	unsigned sender;
	bool xfail_tcg;                 /* QEMU TCG (the baseline) gets it wrong */
};

#define CASE(dest, want, sender)        { dest, want, sender, false }

/* Flat: CPU n has LDR bit n. */
static const struct logical_case flat_cases[] = {
	CASE(0x01, 0x1, 0), CASE(0x02, 0x2, 0), CASE(0x0c, 0xc, 0), CASE(0x0f, 0xf, 0),
	CASE(0x0a, 0xa, 3), CASE(0x00, 0x0, 0), CASE(0x30, 0x0, 0), CASE(0xff, 0xf, 2),
};

/* Cluster: CPUs 0, 1 are members 0, 1 of cluster 1; CPUs 2, 3 of cluster 2.
 * 0xFF is a broadcast here too ("setting all destination bits to one ...
 * selects all APICs in each cluster"), which QEMU TCG does not implement. */
static const struct logical_case cluster_cases[] = {
	CASE(0x13, 0x3, 0), CASE(0x12, 0x2, 0), CASE(0x21, 0x4, 0), CASE(0x23, 0xc, 0),
	CASE(0x11, 0x1, 3), CASE(0x33, 0x0, 0), CASE(0x03, 0x0, 0), { 0xff, 0xf, 1, true },
};

/* x2APIC: all four in cluster 0, member bit = ID. */
static const struct logical_case x2apic_cases[] = {
	CASE(0x00000002, 0x2, 0), CASE(0x0000000a, 0xa, 0), CASE(0x0000000f, 0xf, 0),
	CASE(0x00000005, 0x5, 3), CASE(0x00010001, 0x0, 0), CASE(0x00000030, 0x0, 0),
	CASE(0xffffffff, 0xf, 2),
};

struct ldr_setup {
	uint32_t dfr;
	uint32_t ldr[NEED_CPUS];        /* bits 31:24 */
};

static const struct ldr_setup flat = { DFR_FLAT, { 0x01u << 24, 0x02u << 24, 0x04u << 24, 0x08u << 24 } };
static const struct ldr_setup cluster = { DFR_CLUSTER, { 0x11u << 24, 0x12u << 24, 0x21u << 24, 0x22u << 24 } };
static const struct ldr_setup cleared = { DFR_FLAT, { 0, 0, 0, 0 } };

static struct smp_hits hits;
static uint32_t ldr_seen[MAX_CPUS];
static int ldr_write_vector[MAX_CPUS];

static void ipi_handler(struct ex_regs *regs)
{
	(void)regs;
	smp_hits_record(&hits);
	apic_eoi();
}

/* On every CPU: DFR first, so the LDR is read in the new model. */
static void set_ldr(void *arg)
{
	const struct ldr_setup *s = arg;
	unsigned me = smp_id();

	apic_write(LAPIC_DFR, s->dfr);
	apic_write(LAPIC_LDR, me < NEED_CPUS ? s->ldr[me] : 0);
	ldr_seen[me] = apic_read(LAPIC_LDR);
}

/* On every CPU in x2APIC mode: read the LDR, try to write it. */
static void probe_x2apic_ldr(void *arg)
{
	unsigned me = smp_id();

	(void)arg;
	ldr_seen[me] = (uint32_t)rdmsr(MSR_X2APIC_LDR);
	ldr_write_vector[me] = wrmsr_safe(MSR_X2APIC_LDR, 0);
}

static uint32_t send_dm;                /* for send_logical() */
static uint32_t send_dest;

static void send_logical(void *arg)
{
	(void)arg;
	apic_icr_write(smp_icr(send_dm, IPI_VECTOR, LAPIC_DEST_NONE, true), send_dest);
}

static bool under_tcg(void)
{
	char name[13];

	return hypervisor_name(name) && !strcmp(name, "TCGTCGTCGTCG");
}

static void run_cases(const struct logical_case *c, unsigned n)
{
	bool tcg = under_tcg();

	for (unsigned i = 0; i < n; i++, c++) {
		uint32_t got = 0;
		bool ok;

		smp_hits_clear(&hits);
		send_dm = LAPIC_DM_FIXED;
		send_dest = c->dest;
		ok = on_cpu(c->sender, send_logical, NULL);
		ok &= smp_hits_expect(&hits, c->want, 1, SMP_HITS_TIMEOUT_US, SMP_HITS_QUIET_US, &got);
		report_xfail(c->xfail_tcg && tcg, ok, "destination 0x%x from CPU %u: reached CPUs 0x%x "
			     "(want 0x%x)", c->dest, c->sender, got, c->want);
	}
}

/* Exactly one CPU of `set` per IPI; which one is the APIC's choice. */
static void run_lowest(uint32_t dest, uint32_t set)
{
	uint32_t total = 0, seen = 0;
	bool ok = true;

	smp_hits_clear(&hits);
	send_dm = LAPIC_DM_LOWEST;
	send_dest = dest;
	for (unsigned i = 0; i < LOWEST_ROUNDS && ok; i++) {
		uint64_t deadline = tsc_deadline_us(SMP_HITS_TIMEOUT_US);

		ok = on_cpu(0, send_logical, NULL);
		while (total <= i && !tsc_passed(deadline)) {
			total = 0;
			for (unsigned cpu = 0; cpu < MAX_CPUS; cpu++)
				total += smp_hits_of(&hits, cpu);
			pause();
		}
		tsc_delay_us(SMP_HITS_QUIET_US);
		total = 0;
		for (unsigned cpu = 0; cpu < MAX_CPUS; cpu++)
			total += smp_hits_of(&hits, cpu);
		seen = smp_hits_mask(&hits);
		ok &= total == i + 1 && !(seen & ~set);
	}
	report(ok, "lowest priority to 0x%x, %u times: one CPU of 0x%x each time (%u runs, on 0x%x)",
	       dest, LOWEST_ROUNDS, set, total, seen);
}

static bool ldr_as_set(const struct ldr_setup *s)
{
	bool ok = on_cpus(set_ldr, (void *)s);

	for (unsigned cpu = 0; cpu < NEED_CPUS; cpu++)
		ok &= ldr_seen[cpu] == s->ldr[cpu];
	return ok;
}

static void test_xapic(void)
{
	report_prefix_push("xAPIC flat");
	if (report(ldr_as_set(&flat), "DFR 0x%x, LDR bit n on CPU n", DFR_FLAT)) {
		run_cases(flat_cases, ARRAY_SIZE(flat_cases));
		run_lowest(0x0e, 0xe);
	}
	report_prefix_pop();
	report_prefix_push("xAPIC cluster");
	if (report(ldr_as_set(&cluster), "DFR 0x%x, LDR 0x11 0x12 0x21 0x22", DFR_CLUSTER)) {
		run_cases(cluster_cases, ARRAY_SIZE(cluster_cases));
		run_lowest(0x23, 0xc);
	}
	report_prefix_pop();
	ldr_as_set(&cleared);
}

static void test_x2apic(void)
{
	bool derived = true, read_only = true;

	report_prefix_push("x2APIC cluster");
	if (!on_cpus(probe_x2apic_ldr, NULL))
		derived = false;
	for (unsigned cpu = 0; cpu < NEED_CPUS; cpu++) {
		derived &= ldr_seen[cpu] == x2apic_ldr(cpu);
		read_only &= ldr_write_vector[cpu] == GP_VECTOR;
	}
	report(derived, "LDR = (ID >> 4) << 16 | 1 << (ID & 15) on every CPU (CPU 3: 0x%x)",
	       ldr_seen[3]);
	report(read_only, "LDR is read-only: WRMSR raises #GP (CPU 1: vector %d)",
	       ldr_write_vector[1]);
	run_cases(x2apic_cases, ARRAY_SIZE(x2apic_cases));
	run_lowest(0x0000000e, 0xe);
	report_prefix_pop();
}

int main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	report_prefix_push("smp_logical");
	if (cpu_count() != NEED_CPUS) {
		report_skip("written for %u CPUs, have %u", NEED_CPUS, cpu_count());
		return report_summary();
	}
	handle_irq(IPI_VECTOR, ipi_handler);
	if (!smp_init_report())
		return report_summary();
	sti();
	test_xapic();
	if (smp_set_x2apic(true))
		test_x2apic();
	else
		report_skip("x2APIC: not available");
	return report_summary();
}
