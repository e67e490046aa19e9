/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Basic types and bit helpers for guest tests. Only the compiler's
 * freestanding headers are used: guests have no C library.
 */
#ifndef GUEST_BITS_H
#define GUEST_BITS_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define BIT(n)                  (UINT64_C(1) << (n))
/* Bits h..l inclusive, as a mask. */
#define BITS(h, l)              ((~UINT64_C(0) >> (63 - (h))) & (~UINT64_C(0) << (l)))
/* A value placed into / taken from the field `mask` of a register. */
#define FIELD_PREP(mask, v)     (((uint64_t)(v) << __builtin_ctzll(mask)) & (mask))
#define FIELD_GET(mask, r)      (((uint64_t)(r) & (mask)) >> __builtin_ctzll(mask))
#define ARRAY_SIZE(a)           (sizeof(a) / sizeof((a)[0]))
#define ALIGN_UP(x, a)          (((x) + (a) - 1) & ~((__typeof__(x))(a) - 1))

#define KiB                     UINT64_C(1024)
#define MiB                     (1024ull * KiB)
#define GiB                     (1024ull * MiB)

#define __STR(x)                #x
#define STR(x)                  __STR(x)

#define __packed                __attribute__((packed))
#define __aligned(n)            __attribute__((aligned(n)))
#define __noreturn              __attribute__((noreturn))
#define __printf(a, b)          __attribute__((format(printf, a, b)))
#define __weak                  __attribute__((weak))
#define __used                  __attribute__((used))

#define barrier()               asm volatile("" ::: "memory")
#define READ_ONCE(x)            (*(const volatile __typeof__(x) *)&(x))
#define WRITE_ONCE(x, v)        (*(volatile __typeof__(x) *)&(x) = (v))

#endif
