// SPDX-License-Identifier: BSD-2-Clause
#include <stdarg.h>
#include "drivers/fbcon.h"
#include "drivers/fmt.h"
#include "drivers/serial.h"
#include "vmm/host/log.h"
#include "vmm/host/percpu.h"
#include "vmm/host/spinlock.h"

#define LOG_LINE_MAX 512u

enum log_level log_level = LOG_INFO;
uint32_t trace_mask;

static void (*console_hook)(const char *s, size_t n);
static bool serial_off;         /* before EBS, when the firmware's console has COM1 */
static bool screen_off;         /* console=serial, or no screen to draw on */
static struct spinlock log_lock;
static bool defer;              /* guests run: queue tickvisor's own lines */
static bool no_lock;            /* panicking: the holder may be the CPU that faulted */
/* The lines printed before the configuration names the serial port,
 * for a port chosen there (serial=): it then shows the whole log. */
static char early[2048];
static size_t early_len;
static bool early_done;

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

void log_set_serial(bool on)
{
	serial_off = !on;
}

void log_set_screen(bool on)
{
	screen_off = !on;
}

static void early_keep(const char *s, size_t n)
{
	if (early_done || early_len + n > sizeof(early))
		return;                 /* what does not fit is only on the first port */
	__builtin_memcpy(early + early_len, s, n);
	early_len += n;
}

void log_serial_switched(bool replay)
{
	log_lock_take();
	if (replay && !early_done)
		serial_write(early, early_len);
	early_done = true;
	log_lock_drop();
}

static void emit(const char *s, size_t n, bool raw)
{
	early_keep(s, n);
	if (serial_off) {
		/* the console hook reaches the UART itself */
	} else if (raw) {
		for (size_t i = 0; i < n; i++)
			serial_putc(s[i]);
	} else if (defer) {
		serial_queue(s, n);
	} else {
		serial_write(s, n);
	}
	if (console_hook)
		console_hook(s, n);
	/* Queued before the screen console starts too: it then shows what
	 * the firmware's console showed. Drawn later while deferred (video
	 * memory is slow; a guest runs). */
	if (!screen_off) {
		fbcon_queue(s, n);
		if (!defer)
			fbcon_flush();
	}
}

/* One line: the prefix, then `head` (may be empty), then the message. */
static void log_line(const char *head, const char *fmt, va_list ap)
{
	static const char prefix[] = "tickvisor: ";
	char line[LOG_LINE_MAX];
	size_t n = sizeof(prefix) - 1, room;
	int r;

	__builtin_memcpy(line, prefix, n);
	r = fmt_snprintf(line + n, sizeof(line) - n - 1, "%s", head);
	n += (size_t)r < sizeof(line) - n - 1 ? (size_t)r : sizeof(line) - n - 2;
	room = sizeof(line) - n - 1;
	r = fmt_vsnprintf(line + n, room, fmt, ap);
	n += (size_t)r < room ? (size_t)r : room - 1;
	line[n++] = '\n';
	log_lock_take();
	emit(line, n, false);
	log_lock_drop();
}

void log_printf(enum log_level lvl, const char *fmt, ...)
{
	va_list ap;

	if (lvl > log_level)
		return;
	va_start(ap, fmt);
	log_line("", fmt, ap);
	va_end(ap);
}

void log_trace(enum trace_subsys s, const char *fmt, ...)
{
	char head[32];
	va_list ap;

	fmt_snprintf(head, sizeof(head), "cpu%u: trace %s: ", this_cpu()->index,
		     (unsigned)s < TRACE_NR ? trace_names[s] : "?");
	va_start(ap, fmt);
	log_line(head, fmt, ap);
	va_end(ap);
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
	if (!on) {
		serial_flush();
		if (!screen_off)
			fbcon_flush();
	}
	log_lock_drop();
}

void log_flush(void)
{
	log_lock_take();
	serial_flush();
	if (!screen_off)
		fbcon_flush();
	log_lock_drop();
}
