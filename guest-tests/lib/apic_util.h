/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Helpers shared by the local APIC conformance tests (guest-tests/apic_*.c):
 * bounded waits in TSC time (lib/tsc.h), IRR/ISR/TMR bit tests, self-IPIs,
 * the ESR's write-before-read sequence, IA32_APIC_BASE writes that keep
 * the runtime's cached APIC mode (percpu.x2apic) in step, and a test's
 * common start, end and run in xAPIC and x2APIC mode.
 *
 * Every wait is bounded, so an interrupt that never comes is a FAIL and
 * not a hang. Under tickvisor a self-IPI is pending at the next VM entry,
 * so the bounds are generous and only cost time when something is wrong.
 */
#ifndef GUEST_APIC_UTIL_H
#define GUEST_APIC_UTIL_H

#include "lib/apic.h"
#include "lib/tsc.h"

#define APIC_WAIT_US            10000u  /* upper bound for an expected interrupt */
#define APIC_QUIET_US           200u    /* how long "nothing arrives" is watched */

/* Fields lib/apic.h does not name (yet): ESR bits (Intel SDM Vol. 3A,
 * "Error Handling"), the version register, SVR bit 12. Guarded, in case
 * apic.h grows them. */
#ifndef LAPIC_ESR_SEND_ILLEGAL
#define LAPIC_ESR_SEND_ILLEGAL  BIT(5)
#define LAPIC_ESR_RECV_ILLEGAL  BIT(6)
#define LAPIC_ESR_ILLEGAL_REG   BIT(7)
#endif
#ifndef LAPIC_VERSION_VER
#define LAPIC_VERSION_VER       BITS(7, 0)
#define LAPIC_VERSION_MAXLVT    BITS(23, 16)
#define LAPIC_VERSION_EOI_SUPP  BIT(24)
#endif
#ifndef LAPIC_SVR_EOI_SUPP
#define LAPIC_SVR_EOI_SUPP      BIT(12)
#endif

/* Spins until *count >= target or `us` pass; true if it got there. */
bool apic_util_wait(const volatile uint32_t *count, uint32_t target, uint64_t us);
/* Lets pending interrupts in: IF=1 until *count >= target (at most
 * APIC_WAIT_US; count NULL: no such wait), then APIC_QUIET_US more for
 * anything extra to show up, then IF=0 again. */
void apic_util_let_in(const volatile uint32_t *count, uint32_t target);

/* Bit `vec` of the 256-bit ISR, TMR or IRR (base LAPIC_ISR/TMR/IRR). */
bool apic_vec_test(enum lapic_reg base, unsigned vec);
/* No bit set in any of the eight registers at base. */
bool apic_vec_none(enum lapic_reg base);

/* A fixed, edge-triggered IPI to this CPU through the ICR shorthand. */
void apic_self_ipi(unsigned vec);
/* Writes the ESR, then reads it: the errors since the previous write. */
uint32_t apic_esr_latch(void);

/* Counts interrupts on the spurious vector (SVR vector 0xff) instead of
 * ending the test; they take no EOI (SDM "Spurious Interrupt"). */
void apic_catch_spurious(void);

/* A test's start: its report prefix, a FAIL and false if the loader left
 * x2APIC mode on, else apic_catch_spurious(). Its end: one check that no
 * spurious interrupt came, the prefix popped, report_summary()'s status. */
bool apic_test_start(const char *name);
int apic_test_end(void);

/* Whether the CPU has x2APIC (CPUID.1:ECX[21]); if not, a FAIL where
 * tickvisor's configuration offers it (TV_HC_INFO), else a SKIP. */
bool apic_x2apic_offered(void);
/* x2APIC mode, software-enabled; false (after apic_x2apic_offered()'s
 * FAIL or SKIP, or a FAIL if the mode did not stick) otherwise. */
bool apic_enter_x2apic(void);
/* With IF=0 and the APIC software-enabled: run("xAPIC"), then in x2APIC
 * mode run("x2APIC") and back to xAPIC (or the SKIP of
 * apic_enter_x2apic()). */
void apic_run_both_modes(void (*run)(const char *mode));

/* CPUID.1:EBX[31:24]. */
uint32_t apic_initial_id(void);
/* WRMSR IA32_APIC_BASE with fault fixup; afterwards the runtime's cached
 * mode follows whatever the MSR now says. Returns the vector taken, 0 if
 * none. */
int apic_base_write_safe(uint64_t val);

#endif
