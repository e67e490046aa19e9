/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Emulating one guest instruction that touched guest-physical memory with
 * nothing (or an emulated device) behind it: fetch and decode it at the
 * guest's RIP (vmm/emul/gwalk.c, vmm/emul/insn.c), read and write its registers.
 * Shared by the xAPIC page (vmm/apic/vapic_mmio.c) and unassigned memory
 * (vmm/dev/dev_mmio_hole.c).
 */
#ifndef VMM_MMIO_H
#define VMM_MMIO_H

#include "vmm/emul/gwalk.h"
#include "vmm/emul/insn.h"
#include "vmm/vcpu.h"

/* Decodes the instruction at CS:RIP into *in; on failure ends the guest
 * naming `what` (the thing it touched) and returns -1. */
int mmio_decode(struct vcpu *v, struct mmio_insn *in, const char *what);
/* The guest's paging state, for translating its linear addresses. */
void mmio_gwalk_env(struct vcpu *v, struct gwalk_env *env, uint64_t pdpte[4]);
uint64_t mmio_get_gpr(struct vcpu *v, int reg);
void mmio_set_gpr(struct vcpu *v, int reg, uint64_t val);
/* A load of in->size bytes into the instruction's register. */
void mmio_put_load(struct vcpu *v, const struct mmio_insn *in, uint64_t val);
/* The value a store writes: its immediate or its source register. */
uint64_t mmio_store_value(struct vcpu *v, const struct mmio_insn *in);

#endif
