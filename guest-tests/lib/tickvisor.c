// SPDX-License-Identifier: BSD-2-Clause
/* tickvisor detection and hypercalls; ABI in tickvisor.h. */
#include "lib/tickvisor.h"
#include "lib/desc.h"
#include "lib/processor.h"
#include "lib/string.h"

bool hypervisor_present(void)
{
	return cpuid(1).c & CPUID_1_ECX_HYPERVISOR;
}

bool hypervisor_name(char buf[13])
{
	struct cpuid r;

	buf[0] = '\0';
	if (!hypervisor_present())
		return false;
	r = cpuid(CPUID_HV_BASE);
	memcpy(buf, &r.b, 4);
	memcpy(buf + 4, &r.c, 4);
	memcpy(buf + 8, &r.d, 4);
	buf[12] = '\0';
	return true;
}

/* Cached: CPUID is a VM exit, and tests call this between exit counts. */
bool tickvisor_present(void)
{
	static int present = -1;
	char name[13];

	if (present < 0)
		present = hypervisor_name(name) &&
			  !memcmp(name, TV_CPUID_SIGNATURE, sizeof(name) - 1);
	return present;
}

uint64_t tv_hypercall(uint64_t fn, uint64_t a1, uint64_t a2, uint64_t a3, uint64_t out[4])
{
	uint64_t rax = fn, rbx = a1, rcx = a2, rdx = a3;

	exception_clear();
	asm volatile(ASM_TRY("1f") "vmcall\n1:"
		     : "+a"(rax), "+b"(rbx), "+c"(rcx), "+d"(rdx) : : "memory");
	if (exception_vector())
		rax = TV_HC_ERROR;
	if (out) {
		out[0] = rax;
		out[1] = rbx;
		out[2] = rcx;
		out[3] = rdx;
	}
	return rax;
}

uint64_t tv_exits(uint64_t reason)
{
	return tv_hypercall(TV_HC_EXITS, reason, 0, 0, NULL);
}

bool tv_get_info(struct tv_info *info)
{
	uint64_t r[4];

	if (tv_hypercall(TV_HC_INFO, 0, 0, 0, r) == TV_HC_ERROR)
		return false;
	*info = (struct tv_info){
		.tsc_hz = r[0], .apic_timer_hz = r[1], .flags = r[2], .nr_vcpus = r[3],
	};
	return true;
}
