/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The screen console: text drawn on the framebuffer the UEFI GOP left set
 * up (mode saved before ExitBootServices), with a built-in 8x16 font, line
 * wrap, scrolling, and PASS/FAIL/SKIP and error lines in colour. Pure C
 * over a pixel array: the host unit test draws into a heap buffer.
 */
#ifndef DRIVERS_FBCON_H
#define DRIVERS_FBCON_H

#include "drivers/base.h"

enum fb_format {
	FB_NONE,                /* no framebuffer tickvisor can draw on */
	FB_BGRX8888,            /* 32 bpp, blue in the lowest byte (GOP BGR) */
	FB_RGBX8888,            /* 32 bpp, red in the lowest byte (GOP RGB) */
};

struct fb_info {
	uint64_t base;          /* physical address of the first pixel */
	uint64_t size;          /* bytes */
	uint32_t width, height; /* visible pixels */
	uint32_t stride;        /* pixels per scan line, >= width */
	uint32_t format;        /* enum fb_format */
};

/* Foreground colours as 0xRRGGBB, by what a line says. */
#define FBCON_GREY    0xc0c0c0u
#define FBCON_GREEN   0x40e040u
#define FBCON_RED     0xff5050u
#define FBCON_YELLOW  0xf0d040u
#define FBCON_BG      0x000000u

/* The colour of a line from its first n characters. */
uint32_t fbcon_line_colour(const char *line, size_t n);

/* Draws from now on into pixels (fb's memory, mapped), after clearing
 * it and drawing what was queued so far. false (nothing drawn) when fb
 * has no format tickvisor draws or is too small for one line. */
bool fbcon_start(const struct fb_info *fb, uint32_t *pixels);
/* Text for the screen: kept in a ring until fbcon_flush(), so that it
 * can be queued before fbcon_start() and on paths that must not wait for
 * slow video memory. */
void fbcon_queue(const char *s, size_t n);
/* Draws everything queued (once started). */
void fbcon_flush(void);

#endif
