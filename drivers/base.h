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

/* Physical CPUs tickvisor drives (and vCPUs a guest may have). */
#define TV_MAX_CPUS     16u

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

#define READ_ONCE(x)     (*(const volatile __typeof__(x) *)&(x))
#define WRITE_ONCE(x, v) (*(volatile __typeof__(x) *)&(x) = (v))

#endif
