/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tickvisor hypercalls (VMCALL at CPL 0; see docs/hypercalls.md).
 * RAX = function, RBX/RCX/RDX = arguments; results in RAX (and RBX, RCX,
 * RDX where stated); RAX = ~0 for an unknown function.
 */
#ifndef VMM_HYPERCALL_H
#define VMM_HYPERCALL_H

enum tv_hypercall {
	TV_HC_PING  = 0,        /* -> RAX = 0x7469636b ("tick") */
	TV_HC_EXITS = 1,        /* RBX = basic exit reason or ~0 (all) -> RAX = count */
	TV_HC_INFO  = 2,        /* -> RAX TSC Hz, RBX APIC timer Hz, RCX flags, RDX vCPUs */
	TV_HC_HOST_NMI = 3,     /* RBX = vCPU -> RAX = host NMIs its CPU handled */
	TV_HC_EXIT_COST = 4,    /* -> RAX entry + exit TSC cycles, RBX entry, RCX exit */
	TV_HC_HPET_STRAYS = 5,  /* inject=hpet-strays only -> RAX 0: HPET input masked */
	TV_HC_NR,
};

#define TV_HC_PONG          0x7469636bull
#define TV_HC_ERROR         (~0ull)
/* TV_HC_INFO's flags (TV_INFO_*) are in vmm/apic/vapic.h, with
 * vapic_info_flags() that builds them. */

#endif
