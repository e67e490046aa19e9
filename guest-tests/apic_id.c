// SPDX-License-Identifier: BSD-2-Clause
/*
 * apic_id: the local APIC ID (Intel SDM Vol. 3A, "Local APIC ID", "Local
 * APIC State After Power-Up or Reset", "x2APIC State Transitions"). After
 * reset the xAPIC ID register holds the initial APIC ID (CPUID.1:EBX[31:24])
 * in bits 31:24. Software may change it (model-specific, and what this
 * virtual APIC allows, as most hypervisors do): physical-destination IPIs
 * then follow the new ID. In x2APIC mode the 32-bit x2APIC ID is the
 * initial ID again.
 */
#include "lib/guest.h"
#include "lib/apic_util.h"

#define VEC             0x72u
#define OTHER_ID        0x0eu   /* some ID no vCPU has (at most 16, 0..15) */

static volatile uint32_t hits;

static void on_vec(struct ex_regs *r)
{
	(void)r;
	hits++;
	apic_eoi();
}

/* Fixed IPI to physical destination `dest`; true if it reached us, once. */
static bool ipi_reaches_self(uint32_t dest)
{
	hits = 0;
	apic_icr_write(VEC, dest);
	apic_util_let_in(&hits, 1);
	return hits == 1;
}

static void test_xapic_id(void)
{
	uint32_t id = apic_initial_id(), other = id == OTHER_ID ? OTHER_ID - 1 : OTHER_ID;
	uint32_t reg = apic_read(LAPIC_ID);

	report(reg == id << 24, "ID register 0x%08x = initial APIC ID %u << 24", reg, id);
	if (cpuid(0).a >= 0xb && cpuid_indexed(0xb, 0).b)
		report(cpuid_indexed(0xb, 0).d == id, "CPUID.0xB:EDX %u = initial APIC ID",
		       cpuid_indexed(0xb, 0).d);
	else
		report_skip("CPUID leaf 0xB absent");
	report(ipi_reaches_self(id), "IPI to physical ID %u reaches this CPU", id);

	apic_write(LAPIC_ID, other << 24);
	reg = apic_read(LAPIC_ID);
	report(reg == other << 24, "ID writable: reads 0x%08x after writing 0x%08x", reg,
	       other << 24);
	report(apic_id() == other, "apic_id() follows (%u)", apic_id());
	report(ipi_reaches_self(other), "IPI to the new ID %u reaches this CPU", other);
	report(!ipi_reaches_self(id) && apic_vec_none(LAPIC_IRR),
	       "IPI to the old ID %u does not", id);
	report(apic_initial_id() == id, "CPUID.1:EBX[31:24] still the initial ID %u",
	       apic_initial_id());

	apic_write(LAPIC_ID, id << 24);
	report(apic_read(LAPIC_ID) == id << 24, "ID restored to 0x%08x", apic_read(LAPIC_ID));
	report(ipi_reaches_self(id), "IPI to the restored ID %u reaches this CPU", id);
}

static void test_x2apic_id(void)
{
	uint32_t id = apic_initial_id(), x2id;

	if (!apic_x2apic_offered())     /* SKIP, or FAIL where offered */
		return;
	enable_x2apic();
	x2id = apic_read(LAPIC_ID);
	report(x2id == id, "x2APIC ID %u = initial APIC ID", x2id);
	apic_sw_enable();
	report(ipi_reaches_self(x2id), "x2APIC IPI to physical ID %u reaches this CPU", x2id);
	reset_apic();                   /* via disabled: the only way back */
	report(apic_read(LAPIC_ID) == id << 24, "back in xAPIC mode: ID 0x%08x",
	       apic_read(LAPIC_ID));
}

int main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	if (!apic_test_start("apic_id"))
		return report_summary();
	handle_irq(VEC, on_vec);
	cli();
	apic_sw_enable();
	test_xapic_id();
	test_x2apic_id();
	return apic_test_end();
}
