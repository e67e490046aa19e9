/* SPDX-License-Identifier: BSD-2-Clause */
/* Port I/O. Under tickvisor each of these is one VM exit. */
#ifndef GUEST_IO_H
#define GUEST_IO_H

#include "lib/bits.h"

static inline void outb(uint16_t port, uint8_t v)
{
	asm volatile("outb %0, %1" : : "a"(v), "Nd"(port));
}

static inline void outw(uint16_t port, uint16_t v)
{
	asm volatile("outw %0, %1" : : "a"(v), "Nd"(port));
}

static inline void outl(uint16_t port, uint32_t v)
{
	asm volatile("outl %0, %1" : : "a"(v), "Nd"(port));
}

static inline uint8_t inb(uint16_t port)
{
	uint8_t v;

	asm volatile("inb %1, %0" : "=a"(v) : "Nd"(port));
	return v;
}

static inline uint16_t inw(uint16_t port)
{
	uint16_t v;

	asm volatile("inw %1, %0" : "=a"(v) : "Nd"(port));
	return v;
}

static inline uint32_t inl(uint16_t port)
{
	uint32_t v;

	asm volatile("inl %1, %0" : "=a"(v) : "Nd"(port));
	return v;
}

#endif
