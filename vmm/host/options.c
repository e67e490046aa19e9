// SPDX-License-Identifier: BSD-2-Clause
#include "vmm/host/options.h"

const char *const trace_names[TRACE_NR] = {
	[TRACE_TIMER] = "timer", [TRACE_IPI] = "ipi", [TRACE_EXIT] = "exit",
	[TRACE_LATE] = "late",
};
