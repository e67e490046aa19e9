// SPDX-License-Identifier: BSD-2-Clause
#include "drivers/fbcon.h"
#include "vmm/host/console.h"
#include "vmm/host/log.h"

static const char *const format_names[] = {
	[FB_BGRX8888] = "BGR", [FB_RGBX8888] = "RGB",
};

/* No screen: the log stays on the serial port, whatever console= said,
 * so that nothing is lost without a word. */
static void screen_off(enum console_sel sel, const char *why)
{
	log_set_screen(false);
	if (sel == CONSOLE_SERIAL)
		pr_info("screen: off (console=serial)");
	else
		pr_info("screen: none (%s)%s", why,
			sel == CONSOLE_SCREEN ? ": console=screen falls back to the serial port" : "");
	log_set_serial(true);
}

void console_init(const struct boot_info *bi)
{
	enum console_sel sel = bi->cfg.opts.console;
	const struct fb_info *fb = &bi->screen;

	if (sel == CONSOLE_SERIAL || fb->format == FB_NONE) {
		screen_off(sel, bi->screen_none);
		return;
	}
	if (!fbcon_start(fb, (uint32_t *)(uintptr_t)fb->base)) {
		screen_off(sel, "a framebuffer smaller than its mode says");
		return;
	}
	pr_info("screen: %ux%u, 32 bpp %s at %#lx (%u x %u characters)", fb->width, fb->height,
		format_names[fb->format], (unsigned long)fb->base, fb->width / 8, fb->height / 16);
	if (sel == CONSOLE_SCREEN) {
		pr_info("console=screen: nothing more on the serial port");
		log_flush();
		log_set_serial(false);
	}
}
