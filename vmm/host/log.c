// SPDX-License-Identifier: BSD-2-Clause
#include <stdarg.h>
#include "drivers/fmt.h"
#include "drivers/serial.h"
#include "vmm/host/log.h"
#include "vmm/host/spinlock.h"

#define LOG_LINE_MAX 512u

enum log_level log_level = LOG_INFO;

static void (*console_hook)(const char *s, size_t n);
static struct spinlock log_lock;
static bool defer;              /* guests run: queue tickvisor's own lines */
static bool no_lock;            /* panicking: the holder may be the CPU that faulted */

void log_panic(void)
{
	WRITE_ONCE(no_lock, true);
	WRITE_ONCE(defer, false);
}

static void log_lock_take(void)
{
	if (!READ_ONCE(no_lock))
		spin_lock(&log_lock);
}

static void log_lock_drop(void)
{
	if (!READ_ONCE(no_lock))
		spin_unlock(&log_lock);
}

void log_set_console(void (*hook)(const char *s, size_t n))
{
	console_hook = hook;
}

static void emit(const char *s, size_t n, bool raw)
{
	if (raw) {
		for (size_t i = 0; i < n; i++)
			serial_putc(s[i]);
	} else if (defer) {
		serial_queue(s, n);
	} else {
		serial_write(s, n);
	}
	if (console_hook)
		console_hook(s, n);
}

void log_printf(enum log_level lvl, const char *fmt, ...)
{
	static const char prefix[] = "tickvisor: ";
	char line[LOG_LINE_MAX];
	size_t n = sizeof(prefix) - 1;
	va_list ap;
	int r;

	if (lvl > log_level)
		return;
	__builtin_memcpy(line, prefix, n);
	va_start(ap, fmt);
	r = fmt_vsnprintf(line + n, sizeof(line) - n - 1, fmt, ap);
	va_end(ap);
	n += (size_t)r < sizeof(line) - n - 1 ? (size_t)r : sizeof(line) - n - 2;
	line[n++] = '\n';
	log_lock_take();
	emit(line, n, false);
	log_lock_drop();
}

void log_raw(const char *s, size_t n)
{
	log_lock_take();
	emit(s, n, true);
	log_lock_drop();
}

void log_defer(bool on)
{
	log_lock_take();
	defer = on;
	if (!on)
		serial_flush();
	log_lock_drop();
}

void log_flush(void)
{
	log_lock_take();
	serial_flush();
	log_lock_drop();
}
