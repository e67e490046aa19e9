/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef VMM_VMX_CPU_H
#define VMM_VMX_CPU_H

#include "drivers/base.h"

/* Enters VMX root operation on the calling CPU; prints why on failure. */
bool vmm_vmx_cpu_on(void);

#endif
