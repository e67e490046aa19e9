/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Logging. Every line tickvisor prints starts with "tickvisor: " (the
 * result protocol in DESIGN.md); guest bytes are forwarded unprefixed.
 * Levels filter at run time.
 */
#ifndef VMM_HOST_LOG_H
#define VMM_HOST_LOG_H

#include "drivers/base.h"
#include "vmm/host/options.h"

extern enum log_level log_level;
/* Trace points enabled, BIT(TRACE_*) (log=trace:...); 0 unless tracing.
 * Hidden, so a trace point tests it in place (one TEST against memory,
 * one branch) instead of loading its address from the GOT first. */
extern uint32_t trace_mask __attribute__((visibility("hidden")));

/* Before ExitBootServices boot/ mirrors output to the UEFI console. */
void log_set_console(void (*hook)(const char *s, size_t n));
/* Whether lines go to the serial port directly (default on): off while a
 * console hook already writes them there (boot/efi_conout.c). */
void log_set_serial(bool on);
/* Whether lines go to the screen console (drivers/fbcon.c; default on:
 * queued until it starts, vmm/host/console.c). */
void log_set_screen(bool on);
void log_printf(enum log_level lvl, const char *fmt, ...) __printf(2, 3);
/* Raw bytes (guest serial output): no prefix, no newline added. */
void log_raw(const char *s, size_t n);

/* While guests run, tickvisor's own lines are queued, not waited out on
 * the UART (the guest would see the time as lost); guest bytes flush
 * them first, so the order on the line is kept. log_defer(false) and
 * log_flush() send everything. */
void log_defer(bool on);
void log_flush(void);
/* The serial port is settled (boot/efi_main.c, serial=): with replay,
 * the lines printed so far are written to the new port first. */
void log_serial_switched(bool replay);
/* Panic: write without taking the lock, and without deferring. */
void log_panic(void);

#define pr_err(...)   log_printf(LOG_ERROR, __VA_ARGS__)
#define pr_warn(...)  log_printf(LOG_WARN, __VA_ARGS__)
#define pr_info(...)  log_printf(LOG_INFO, __VA_ARGS__)
#define pr_debug(...) do { if (unlikely(log_level >= LOG_DEBUG)) log_printf(LOG_DEBUG, __VA_ARGS__); } while (0)

/* Trace points, compiled in and off by default: when off, a hot path pays
 * one predictable branch on the mask (log_trace_on). A line reads
 * "tickvisor: cpuN: trace SUBSYS: ...", N the physical CPU it ran on. */
void log_trace(enum trace_subsys s, const char *fmt, ...) __printf(2, 3);

static inline __attribute__((always_inline)) bool log_trace_on(enum trace_subsys s)
{
	return unlikely(trace_mask & BIT(s));
}

#endif
