// SPDX-License-Identifier: BSD-2-Clause
#include "drivers/fbcon.h"
#include "drivers/string.h"
#include "font.h"                       /* generated: scripts/gen-font.py */

#define FONT_WIDTH   8u
#define LINE_MAX     512u               /* characters of one screen line kept */
#define QUEUE_SIZE   8192u              /* text not yet drawn; older text is lost */

static struct {
	uint32_t *px;                   /* NULL until fbcon_start() */
	struct fb_info fb;
	uint32_t cols, rows;            /* text cells on screen */
	uint32_t col, row;              /* cursor */
	char line[LINE_MAX];            /* the current line's characters */
	uint32_t colour;                /* 0xRRGGBB of the current line */
	bool in_escape;                 /* inside an ANSI escape sequence */
} con;

static struct {
	char buf[QUEUE_SIZE];
	size_t head, tail;              /* tail - head characters wait */
} queue;

static const struct { const char *prefix; uint32_t colour; } line_colours[] = {
	{ "PASS:", FBCON_GREEN }, { "FAIL:", FBCON_RED }, { "XPASS:", FBCON_RED },
	{ "SKIP:", FBCON_YELLOW }, { "XFAIL:", FBCON_YELLOW },
	{ "tickvisor: error", FBCON_RED }, { "tickvisor: panic", FBCON_RED },
	{ "tickvisor: FAIL", FBCON_RED },
};

uint32_t fbcon_line_colour(const char *line, size_t n)
{
	for (size_t i = 0; i < ARRAY_SIZE(line_colours); i++) {
		size_t len = strlen(line_colours[i].prefix);

		if (n >= len && !memcmp(line, line_colours[i].prefix, len))
			return line_colours[i].colour;
	}
	return FBCON_GREY;
}

static uint32_t pixel(uint32_t rgb)
{
	if (con.fb.format == FB_RGBX8888)
		return (rgb & 0xff) << 16 | (rgb & 0xff00) | (rgb >> 16 & 0xff);
	return rgb;
}

static void draw_glyph(uint32_t col, uint32_t row, char c, uint32_t rgb)
{
	unsigned char u = (unsigned char)c;
	const uint8_t *g = font_glyphs[(u < FONT_FIRST || u > FONT_LAST ? '?' : u) - FONT_FIRST];
	uint32_t fg = pixel(rgb), bg = pixel(FBCON_BG);
	uint32_t *p = con.px + (size_t)row * FONT_HEIGHT * con.fb.stride + col * FONT_WIDTH;

	for (uint32_t y = 0; y < FONT_HEIGHT; y++, p += con.fb.stride)
		for (uint32_t x = 0; x < FONT_WIDTH; x++)
			p[x] = g[y] & (0x80u >> x) ? fg : bg;
}

static void clear_lines(uint32_t y0, uint32_t y1)
{
	uint32_t bg = pixel(FBCON_BG);

	for (uint32_t y = y0; y < y1; y++)
		for (uint32_t x = 0; x < con.fb.width; x++)
			con.px[(size_t)y * con.fb.stride + x] = bg;
}

/* At the bottom the text moves up by a third of the screen at once: video
 * memory is slow to read, and one move per line would read the whole
 * screen for every line (a Linux guest prints thousands). */
static void new_line(void)
{
	uint32_t jump = MAX(1u, con.rows / 3), keep = con.rows - jump;

	con.col = 0;
	if (++con.row < con.rows)
		return;
	memmove(con.px, con.px + (size_t)jump * FONT_HEIGHT * con.fb.stride,
		(size_t)keep * FONT_HEIGHT * con.fb.stride * sizeof(*con.px));
	clear_lines(keep * FONT_HEIGHT, con.rows * FONT_HEIGHT);
	con.row = keep;
}

/* A printable character at the cursor. Once the line's prefix says
 * PASS, FAIL or error, what was drawn of it is drawn again in colour. */
static void put_char(char c)
{
	uint32_t colour;

	if (con.col == con.cols)
		new_line();
	if (con.col < LINE_MAX)
		con.line[con.col] = c;
	colour = fbcon_line_colour(con.line, MIN(con.col + 1, LINE_MAX));
	if (colour != con.colour) {
		con.colour = colour;
		for (uint32_t i = 0; i < con.col && i < LINE_MAX; i++)
			draw_glyph(i, con.row, con.line[i], colour);
	}
	draw_glyph(con.col++, con.row, c, con.colour);
}

/* ESC [ ... final letter: skipped (guests may colour their output). */
static void draw_char(char c)
{
	if (con.in_escape) {
		con.in_escape = !((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'));
		return;
	}
	switch (c) {
	case '\n':
		new_line();
		con.colour = FBCON_GREY;
		return;
	case '\033':
		con.in_escape = true;
		return;
	case '\t':
		do
			put_char(' ');
		while (con.col % 8 && con.col < con.cols);
		return;
	default:
		if ((unsigned char)c >= 0x20)
			put_char(c);
	}
}

void fbcon_queue(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		queue.buf[queue.tail++ % QUEUE_SIZE] = s[i];
		if (queue.tail - queue.head > QUEUE_SIZE)
			queue.head = queue.tail - QUEUE_SIZE;
	}
}

void fbcon_flush(void)
{
	if (!con.px)
		return;
	while (queue.head != queue.tail)
		draw_char(queue.buf[queue.head++ % QUEUE_SIZE]);
}

bool fbcon_start(const struct fb_info *fb, uint32_t *pixels)
{
	if ((fb->format != FB_BGRX8888 && fb->format != FB_RGBX8888) || !pixels ||
	    fb->stride < fb->width || fb->width < FONT_WIDTH || fb->height < FONT_HEIGHT ||
	    (uint64_t)fb->stride * fb->height * 4 > fb->size)
		return false;
	con.fb = *fb;
	con.px = pixels;
	con.cols = fb->width / FONT_WIDTH;
	con.rows = fb->height / FONT_HEIGHT;
	con.col = con.row = 0;
	con.colour = FBCON_GREY;
	clear_lines(0, fb->height);     /* the firmware's text too */
	fbcon_flush();
	return true;
}
