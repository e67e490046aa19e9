/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * timer=posted (DESIGN.md, "Exitless timer"; seed 002): a housekeeping
 * CPU that runs no vCPU keeps every vCPU's APIC timer of the guest in one
 * queue (timer/tqueue.h), sleeps on its own host timer until the earliest
 * target less the advance, spins to the exact target and delivers the
 * expiry through the vCPU's posted-interrupt descriptor: the vCPU takes
 * no VM exit for it, and a periodic timer is re-armed right there.
 *
 * One lock per housekeeper guards the queue and, while a guest's timers
 * are posted, every vCPU's timer state (struct vtimer, IA32_TSC_DEADLINE,
 * TSC offset): the vCPU takes it around each APIC register access, TSC
 * write and INIT (housekeeper_timer_lock/unlock), the housekeeper around
 * each expiry. So an expiry and the guest's change of that timer happen
 * one after the other, never interleaved; see housekeeper.c for why no
 * post can follow a cancel.
 */
#ifndef VMM_HOUSEKEEPER_H
#define VMM_HOUSEKEEPER_H

#include "vmm/vcpu.h"
#include "vmm/vcpu/vcpu_run.h"

/* housekeeper_timer_lock(), housekeeper_timer_unlock() and
 * housekeeper_timer_cancel(), which vmm/vcpu/ calls, are declared in
 * vmm/vcpu/vcpu_run.h. */

/* Whether g's timers are posted (timer=posted; timer=auto where the CPU
 * has posted interrupts and virtual-interrupt delivery and a CPU is
 * free), and on which housekeeping CPU: housekeeping=N, else the lowest
 * CPU not in `busy` (a bit per CPU that runs a vCPU of g or that an
 * earlier guest kept). 0, or -1 once it has ended g saying what is
 * missing or wrong. */
int housekeeper_plan(struct guest *g, uint64_t busy);
/* The housekeeping CPU's index, -1 when g's timers are not posted. */
int housekeeper_cpu(const struct guest *g);
/* The housekeeping loop, on that CPU, until g ends (guest_end kicks it). */
void housekeeper_run(void *guest);
/* After the housekeeper and every vCPU have stopped. */
void housekeeper_free(struct guest *g);

/* v halts in root mode (HLT exit): its own CPU serves its timer until it
 * is unparked (vcpu_timer_block). Without a housekeeper: nothing. */
void housekeeper_timer_park(struct vcpu *v);
void housekeeper_timer_unpark(struct vcpu *v);

#endif
