/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef VMM_HOST_VMX_CPU_H
#define VMM_HOST_VMX_CPU_H

#include "drivers/base.h"

/* Enters VMX root operation on the calling CPU; prints why on failure. */
bool vmm_vmx_cpu_on(void);

/* Around the set-up of a new VMCS on this CPU: a VMX instruction that
 * fails in between (a field this CPU lacks, say) is noted instead of a
 * panic, and vmx_setup_end() returns false with it described in err. */
void vmx_setup_begin(void);
bool vmx_setup_end(char *err, size_t n);

#endif
