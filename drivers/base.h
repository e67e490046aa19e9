/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Basic types and bit helpers shared by every layer. Plain C: it also
 * compiles on the host for the unit tests.
 */
#ifndef DRIVERS_BASE_H
#define DRIVERS_BASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define BIT(n)          (1ull << (n))
/* bits h..l inclusive, h >= l */
#define BITS(h, l)      (((~0ull) >> (63 - (h))) & ~((1ull << (l)) - 1))
/* value of the field described by mask m in x */
#define FIELD_GET(m, x) (((x) & (m)) >> __builtin_ctzll(m))
#define FIELD_PREP(m, v) (((uint64_t)(v) << __builtin_ctzll(m)) & (m))

#define ARRAY_SIZE(a)   (sizeof(a) / sizeof((a)[0]))
#define ALIGN_UP(x, a)  (((x) + ((a) - 1)) & ~((uint64_t)(a) - 1))
#define ALIGN_DOWN(x, a) ((x) & ~((uint64_t)(a) - 1))
#define MIN(a, b)       ((a) < (b) ? (a) : (b))
#define MAX(a, b)       ((a) > (b) ? (a) : (b))

/*
 * Physical CPUs tickvisor drives (and vCPUs a guest may have): 64, so
 * that a uint64_t holds a set of CPUs (cpus_lost, a guest's busy CPUs)
 * and every per-CPU array stays small enough for .data (GNU-EFI folds
 * .bss into it). xAPIC IDs 0..63 fit the 8-bit ID, a guest's MADT takes
 * up to ACPI_TV_MAX_CPUS entries, and x2APIC logical IDs 0..63 are
 * clusters 0..3 (vlapic_icr.c compares whole clusters, no CPU count).
 */
#define TV_MAX_CPUS     64u

#define PAGE_SIZE       4096u
#define KiB             1024ull
#define MiB             (1024ull * KiB)
#define GiB             (1024ull * MiB)

#define __packed        __attribute__((packed))
#define __aligned(n)    __attribute__((aligned(n)))
#define __noreturn      __attribute__((noreturn))
#define __printf(a, b)  __attribute__((format(printf, a, b)))
#define __unused        __attribute__((unused))
#define likely(x)       __builtin_expect(!!(x), 1)
#define unlikely(x)     __builtin_expect(!!(x), 0)

/* Little-endian values from byte streams with no alignment promise
 * (firmware tables, files), assembled from bytes. */
static inline uint16_t get_le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static inline uint32_t get_le32(const uint8_t *p)
{
	return get_le16(p) | (uint32_t)get_le16(p + 2) << 16;
}

static inline uint64_t get_le64(const uint8_t *p)
{
	return get_le32(p) | (uint64_t)get_le32(p + 4) << 32;
}

/* ... and stored into them (tables and boot structures built for guests). */
static inline void put_le16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static inline void put_le32(uint8_t *p, uint32_t v)
{
	put_le16(p, (uint16_t)v);
	put_le16(p + 2, (uint16_t)(v >> 16));
}

static inline void put_le64(uint8_t *p, uint64_t v)
{
	put_le32(p, (uint32_t)v);
	put_le32(p + 4, (uint32_t)(v >> 32));
}

#define READ_ONCE(x)     (*(const volatile __typeof__(x) *)&(x))
#define WRITE_ONCE(x, v) (*(volatile __typeof__(x) *)&(x) = (v))

#endif
