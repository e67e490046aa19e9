/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Exception fixups: an instruction that may fault on purpose (probing an
 * MSR) registers where execution resumes instead. Entries are 32-bit
 * offsets relative to themselves, so the position-independent image
 * needs no relocations for them.
 */
#ifndef VMM_EXTABLE_H
#define VMM_EXTABLE_H

#include "drivers/base.h"

struct extable_entry {
	int32_t insn;           /* faulting instruction, relative to &insn */
	int32_t fixup;          /* resume address, relative to &fixup */
};

#define EXTABLE_ENTRY(from, to) \
	".pushsection .extable, \"a\"\n\t.balign 4\n\t" \
	".long " #from " - .\n\t.long " #to " - .\n\t.popsection\n\t"

/* rdmsr that survives a #GP (after idt_init): false when the MSR does
 * not exist. */
bool rdmsr_safe(uint32_t msr, uint64_t *val);

/* Returns the fixup address for a faulting rip, or 0. */
uint64_t extable_lookup(uint64_t rip);

#endif
