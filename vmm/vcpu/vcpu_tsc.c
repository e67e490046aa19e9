// SPDX-License-Identifier: BSD-2-Clause
/* The guest TSC: host TSC + offset, with IA32_TSC_ADJUST kept in step. */
#include "drivers/io.h"
#include "vmm/vcpu/vcpu_run.h"
#include "vmm/vcpu/vcpu_tsc.h"
#include "vmx/vmx.h"

static void set_offset(struct vcpu *v, uint64_t offset)
{
	int64_t delta = (int64_t)(offset - v->tsc_offset);

	/* A posted timer's housekeeper converts with the offset too. */
	housekeeper_timer_lock(v);
	v->tsc_offset = offset;
	vmwrite(VMCS_TSC_OFFSET, offset);
	if (v->lapic)
		vlapic_tsc_moved(v->lapic, delta);
	housekeeper_timer_unlock(v);
}

uint64_t vcpu_tsc_read(const struct vcpu *v)
{
	return rdtsc() + v->tsc_offset;
}

void vcpu_tsc_write(struct vcpu *v, uint64_t tsc)
{
	uint64_t offset = tsc - rdtsc();

	v->tsc_adjust += offset - v->tsc_offset;
	set_offset(v, offset);
}

void vcpu_tsc_write_adjust(struct vcpu *v, uint64_t adjust)
{
	set_offset(v, v->tsc_offset + (adjust - v->tsc_adjust));
	v->tsc_adjust = adjust;
}
