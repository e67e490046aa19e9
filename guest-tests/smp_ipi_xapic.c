// SPDX-License-Identifier: BSD-2-Clause
/*
 * smp_ipi_xapic: xAPIC fixed IPIs with a physical destination - the ICR
 * writes tickvisor takes on its exit fast path with APICv (an APIC-write
 * exit resumed at once, vmm/apic/vapic_mmio.c, lapic/vlapic_icr.c
 * vlapic_icr_fast()) - in their corner cases (Intel SDM Vol. 3A,
 * "Interrupt Command Register (ICR)", "Determining IPI Destination",
 * "Local APIC ID"; DESIGN.md, "IPI rules"):
 *
 *  - reserved bits and the delivery-status bit written as 1: the IPI goes
 *    out once, and the read-only delivery status reads 0 (idle: tickvisor
 *    delivers at once), no error in the ESR;
 *  - a destination in each state the guest can put it in: spinning with
 *    IF=1, IF=0 (waits, then one run right after STI), halted (woken),
 *    APIC software-disabled (not accepted, not even once enabled again);
 *  - xAPIC IDs are writable: an AP that moved its ID is reached at the new
 *    one and not at the old; two APICs that share an ID both take an IPI
 *    to it - every APIC whose ID matches the destination accepts, as KVM
 *    reads the architecture (its commit "Honor architectural behavior for
 *    aliased 8-bit APIC IDs") and as tickvisor's vlapic_send_ipi() does.
 *    Bochs's own APIC delivers to the first match only (cpu/apic.cc,
 *    apic_bus_deliver_interrupt), and sets the ESR's send-accept error
 *    when nothing matches, which P6-era APICs did: natively, for
 *    information only, those two cases fail;
 *  - self: its own ID as physical destination, and the self shorthand
 *    with a reserved bit set (the CPU then leaves it to tickvisor instead
 *    of virtualizing the self-IPI itself);
 *  - an ID no APIC has: nothing anywhere, no error; and the broadcast ID,
 *    which takes the slow path: everyone once.
 *
 * Each case counts the handler runs per CPU (smp_hits). With apicv=off
 * the same writes are EPT violations tickvisor emulates; natively they
 * show what the hardware (emulator) does.
 */
#include "lib/guest.h"
#include "lib/apic_util.h"
#include "lib/smp.h"
#include "lib/smp_hits.h"
#include "lib/tsc.h"

#define IPI_VECTOR              0x4au
#define NR_IPIS                 4u
#define HELD_US                 1000u   /* an IPI to a CLI'd CPU stays pending this long */
#define HALT_SETTLE_US          100u
#define ABSENT_ID               0x7eu
#define MOVED_ID                0x20u
#define BROADCAST_ID            0xffu
/* ICR bits the SDM marks reserved (31:20, 17:16, 13), and delivery status
 * (12, read-only). */
#define ICR_RESERVED            (BITS(31, 20) | BITS(17, 16) | BIT(13))
#define ICR_STATUS              BIT(12)

enum ap_mode { AP_SPIN, AP_IF0, AP_HALT, AP_SW_DISABLED, AP_MOVE_ID };

struct ap_work {
	enum ap_mode mode;
	uint32_t new_id;                /* AP_MOVE_ID: the ID it takes meanwhile */
};

static struct smp_hits hits;
static unsigned peer, self_id;
static struct ap_task task;
static volatile uint32_t ap_runs_before;

static void ipi_handler(struct ex_regs *regs)
{
	(void)regs;
	smp_hits_record(&hits);
	apic_eoi();
}

/* ICR_HI, then ICR_LO with `extra` bits on top of a fixed IPI. */
static void send(uint32_t dest, uint32_t extra, unsigned shorthand)
{
	apic_icr_write(smp_icr(LAPIC_DM_FIXED, IPI_VECTOR, shorthand, false) | extra, dest);
}

static bool ap_wait_go(void)
{
	return ap_task_wait_go(&task, SMP_HITS_TIMEOUT_US * (NR_IPIS + 4));
}

/* On the AP: the state to be in until the BSP says go. */
static void ap_busy(void *arg)
{
	const struct ap_work *w = arg;
	uint32_t id = apic_read(LAPIC_ID);

	switch (w->mode) {
	case AP_SPIN:
		sti();
		ap_task_ready(&task);
		ap_wait_go();
		cli();
		break;
	case AP_IF0:
		cli();
		ap_task_ready(&task);
		ap_wait_go();
		ap_runs_before = smp_hits_of(&hits, peer);
		sti();
		tsc_delay_us(SMP_HITS_QUIET_US);
		cli();
		break;
	case AP_HALT:
		cli();
		ap_task_ready(&task);
		safe_halt();                    /* STI; HLT: the IPI ends it */
		ap_runs_before = smp_hits_of(&hits, peer);
		cli();
		break;
	case AP_SW_DISABLED:
		cli();
		apic_sw_disable();
		sti();
		ap_task_ready(&task);
		ap_wait_go();
		apic_sw_enable();
		tsc_delay_us(SMP_HITS_QUIET_US);
		cli();
		break;
	case AP_MOVE_ID:
		cli();
		apic_write(LAPIC_ID, w->new_id << 24);
		sti();
		ap_task_ready(&task);
		ap_wait_go();
		cli();
		apic_write(LAPIC_ID, id);
		break;
	}
}

static bool start_ap(struct ap_work *w)
{
	smp_hits_clear(&hits);
	ap_runs_before = ~0u;
	return ap_task_start(&task, peer, ap_busy, w, SMP_HITS_TIMEOUT_US);
}

static bool finish_ap(void)
{
	return ap_task_finish(&task, peer);
}

/* Waits (IF=1, this CPU may be a destination) for `want`, n runs each. */
static bool expect(uint32_t want, uint32_t n)
{
	bool ok;

	sti();
	ok = smp_hits_expect(&hits, want, n, SMP_HITS_TIMEOUT_US, SMP_HITS_QUIET_US, NULL);
	cli();
	return ok;
}

static bool icr_idle_no_error(void)
{
	return !(apic_read(LAPIC_ICR_LO) & ICR_STATUS) && apic_esr_latch() == 0;
}

static void test_spinning(void)
{
	struct ap_work w = { AP_SPIN, 0 };
	unsigned got = 0;
	bool idle = true, done;

	if (!start_ap(&w)) {
		report_fail("spinning: the AP did not start");
		return;
	}
	while (got < NR_IPIS) {
		send(peer, 0, LAPIC_DEST_NONE);
		idle &= icr_idle_no_error();
		if (!smp_hits_expect(&hits, (uint32_t)BIT(peer), got + 1, SMP_HITS_TIMEOUT_US, 0,
				     NULL))
			break;
		got++;
	}
	done = finish_ap();
	report(done && got == NR_IPIS && idle &&
	       smp_hits_expect(&hits, (uint32_t)BIT(peer), NR_IPIS, 0, SMP_HITS_QUIET_US, NULL),
	       "AP spinning with IF=1: %u of %u IPIs, one run each, on CPU %u only, ICR idle",
	       got, NR_IPIS, peer);
}

static void test_reserved_bits(void)
{
	struct ap_work w = { AP_SPIN, 0 };
	uint32_t icr;
	bool delivered, done;

	if (!start_ap(&w)) {
		report_fail("reserved bits: the AP did not start");
		return;
	}
	send(peer, ICR_RESERVED | ICR_STATUS, LAPIC_DEST_NONE);
	icr = apic_read(LAPIC_ICR_LO);
	delivered = smp_hits_expect(&hits, (uint32_t)BIT(peer), 1, SMP_HITS_TIMEOUT_US,
				    SMP_HITS_QUIET_US, NULL);
	done = finish_ap();
	report(done && delivered, "reserved ICR bits and delivery status written as 1: "
	       "one run on CPU %u only", peer);
	report(!(icr & ICR_STATUS) && (icr & 0xffu) == IPI_VECTOR && apic_esr_latch() == 0,
	       "... ICR reads delivery status 0 and its vector (0x%x), no ESR error", icr);
}

static void test_if0(void)
{
	struct ap_work w = { AP_IF0, 0 };
	bool done;

	if (!start_ap(&w)) {
		report_fail("IF=0: the AP did not start");
		return;
	}
	send(peer, 0, LAPIC_DEST_NONE);
	tsc_delay_us(HELD_US);
	done = finish_ap();
	report(done && ap_runs_before == 0 && smp_hits_of(&hits, peer) == 1 &&
	       smp_hits_mask(&hits) == BIT(peer),
	       "AP with IF=0: the IPI waits (%u runs), then one run after STI (%u)",
	       ap_runs_before, smp_hits_of(&hits, peer));
}

static void test_halted(void)
{
	struct ap_work w = { AP_HALT, 0 };
	uint64_t hlt_before = smp_hlt_exits();
	bool halted, done;

	if (!start_ap(&w)) {
		report_fail("halted: the AP did not start");
		return;
	}
	halted = smp_wait_halted(hlt_before, HALT_SETTLE_US);
	send(peer, 0, LAPIC_DEST_NONE);
	done = finish_ap();
	report(done && halted && ap_runs_before == 1 &&
	       smp_hits_expect(&hits, (uint32_t)BIT(peer), 1, 0, SMP_HITS_QUIET_US, NULL),
	       "AP halted (STI; HLT): woken, one run before the instruction after HLT (%u)",
	       ap_runs_before);
}

static void test_sw_disabled(void)
{
	struct ap_work w = { AP_SW_DISABLED, 0 };
	bool done;

	if (!start_ap(&w)) {
		report_fail("software-disabled: the AP did not start");
		return;
	}
	send(peer, 0, LAPIC_DEST_NONE);
	tsc_delay_us(HELD_US);
	done = finish_ap();
	report(done && smp_hits_mask(&hits) == 0,
	       "AP with its APIC software-disabled: not accepted, not even after it is enabled "
	       "again (%u runs)", smp_hits_of(&hits, peer));
}

static void test_moved_id(void)
{
	struct ap_work w = { AP_MOVE_ID, MOVED_ID };
	bool at_new, at_old, done;

	if (!start_ap(&w)) {
		report_fail("moved ID: the AP did not start");
		return;
	}
	send(MOVED_ID, 0, LAPIC_DEST_NONE);
	at_new = expect((uint32_t)BIT(peer), 1);
	smp_hits_clear(&hits);
	send(peer, 0, LAPIC_DEST_NONE);
	at_old = expect(0, 0);
	done = finish_ap();
	report(done && at_new, "AP moved its xAPIC ID to 0x%x: an IPI to 0x%x reaches it once",
	       MOVED_ID, MOVED_ID);
	report(done && at_old, "... and one to its old ID %u reaches nobody", peer);
}

static void test_shared_id(void)
{
	struct ap_work w = { AP_MOVE_ID, self_id };
	bool both, done;

	if (!start_ap(&w)) {
		report_fail("shared ID: the AP did not start");
		return;
	}
	send(self_id, 0, LAPIC_DEST_NONE);
	both = expect((uint32_t)(BIT(peer) | BIT(self_id)), 1);
	done = finish_ap();
	report(done && both, "AP took this CPU's ID %u: an IPI to it runs once on both", self_id);
}

static void test_self(void)
{
	bool once;

	smp_hits_clear(&hits);
	send(self_id, 0, LAPIC_DEST_NONE);
	once = expect((uint32_t)BIT(self_id), 1);
	report(once && icr_idle_no_error(), "own ID %u as physical destination: one run here "
	       "only (runs: mask 0x%x, %u here)", self_id, smp_hits_mask(&hits),
	       smp_hits_of(&hits, self_id));
	smp_hits_clear(&hits);
	send(0, BIT(13), LAPIC_DEST_SELF);
	report(expect((uint32_t)BIT(self_id), 1) && icr_idle_no_error(),
	       "self shorthand with reserved bit 13: one run here only");
	smp_hits_clear(&hits);
	send(0, 0, LAPIC_DEST_SELF);
	report(expect((uint32_t)BIT(self_id), 1) && icr_idle_no_error(),
	       "self shorthand: one run here only");
}

static void test_absent_and_broadcast(void)
{
	struct ap_work w = { AP_SPIN, 0 };
	bool nobody, everyone, done;

	smp_hits_clear(&hits);
	send(ABSENT_ID, 0, LAPIC_DEST_NONE);
	nobody = expect(0, 0) && icr_idle_no_error();
	report(nobody, "ID 0x%x (no such APIC): no run anywhere, no error", ABSENT_ID);
	if (!start_ap(&w)) {
		report_fail("broadcast: the AP did not start");
		return;
	}
	send(BROADCAST_ID, 0, LAPIC_DEST_NONE);
	everyone = expect((uint32_t)(BIT(peer) | BIT(self_id)), 1);
	done = finish_ap();
	report(done && everyone, "broadcast ID 0x%x: one run on each CPU", BROADCAST_ID);
}

int main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	report_prefix_push("smp_ipi_xapic");
	handle_irq(IPI_VECTOR, ipi_handler);
	if (!smp_init_peer(&peer))
		return report_summary();
	if (cpu_count() != 2) {
		report_skip("the broadcast and shared-ID cases count on 2 CPUs, have %u",
			    cpu_count());
		return report_summary();
	}
	if (apic_is_x2apic()) {
		report_skip("starts in x2APIC mode");
		return report_summary();
	}
	cli();
	self_id = apic_id();
	apic_esr_latch();
	test_spinning();
	test_reserved_bits();
	test_if0();
	test_halted();
	test_sw_disabled();
	test_moved_id();
	test_shared_id();
	test_self();
	test_absent_and_broadcast();
	return report_summary();
}
