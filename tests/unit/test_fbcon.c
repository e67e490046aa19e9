// SPDX-License-Identifier: BSD-2-Clause
/*
 * drivers/fbcon.c on the host: text drawn into a heap framebuffer of
 * exactly its size (ASan catches a pixel written past it; the padding of
 * each scan line beyond `width` holds a sentinel that must survive),
 * compared pixel for pixel with the glyphs of the generated font.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "drivers/fbcon.h"
#include "font.h"

#define SENTINEL 0xdeadbeefu

static uint32_t *px;
static struct fb_info fb;

static void screen(uint32_t cols, uint32_t rows, uint32_t pad, uint32_t format)
{
	free(px);
	fb = (struct fb_info){ .width = cols * 8, .height = rows * FONT_HEIGHT,
			       .stride = cols * 8 + pad, .format = format };
	fb.size = (uint64_t)fb.stride * fb.height * 4;
	px = malloc(fb.size);
	for (size_t i = 0; i < fb.size / 4; i++)
		px[i] = SENTINEL;
	assert_true(fbcon_start(&fb, px));
}

static void put(const char *s)
{
	fbcon_queue(s, strlen(s));
	fbcon_flush();
}

/* The cell (col,row) shows character c in colour rgb (as stored). */
static void expect_cell(uint32_t col, uint32_t row, char c, uint32_t stored)
{
	const uint8_t *g = font_glyphs[(unsigned char)c - FONT_FIRST];

	for (uint32_t y = 0; y < FONT_HEIGHT; y++)
		for (uint32_t x = 0; x < 8; x++) {
			uint32_t got = px[(row * FONT_HEIGHT + y) * fb.stride + col * 8 + x];
			uint32_t want = g[y] & (0x80u >> x) ? stored : 0;

			if (got != want)
				fail_msg("'%c' at cell %u,%u pixel %u,%u: %#x, want %#x", c, col, row,
					 x, y, got, want);
		}
}

static void expect_row(uint32_t row, const char *text, uint32_t stored)
{
	size_t n = strlen(text);

	for (uint32_t i = 0; i < fb.width / 8; i++)
		expect_cell(i, row, i < n ? text[i] : ' ', i < n ? stored : 0);
	for (uint32_t y = row * FONT_HEIGHT; y < (row + 1) * FONT_HEIGHT; y++)
		for (uint32_t x = fb.width; x < fb.stride; x++)
			assert_int_equal(px[y * fb.stride + x], SENTINEL);
}

static void test_font_is_real(void **state)
{
	unsigned set = 0;

	for (unsigned y = 0; y < FONT_HEIGHT; y++)
		set += (unsigned)__builtin_popcount(font_glyphs['A' - FONT_FIRST][y]);
	assert_true(set > 10);          /* not an empty glyph table */
	for (unsigned y = 0; y < FONT_HEIGHT; y++)
		assert_int_equal(font_glyphs[' ' - FONT_FIRST][y], 0);
}

static void test_text_and_colours(void **state)
{
	screen(20, 5, 3, FB_BGRX8888);
	put("tickvisor: hi\nPASS: ok\nFAIL: no\ntickvisor: error: x\nSKIP: s");
	expect_row(0, "tickvisor: hi", FBCON_GREY);
	expect_row(1, "PASS: ok", FBCON_GREEN);
	expect_row(2, "FAIL: no", FBCON_RED);
	/* drawn grey up to "tickvisor: erro", then again in red */
	expect_row(3, "tickvisor: error: x", FBCON_RED);
	expect_row(4, "SKIP: s", FBCON_YELLOW);
}

static void test_rgb_order(void **state)
{
	screen(10, 2, 0, FB_RGBX8888);
	put("FAIL: x");
	expect_row(0, "FAIL: x", 0x5050ffu);    /* red in the low byte */
}

static void test_wrap_and_scroll(void **state)
{
	screen(4, 3, 1, FB_BGRX8888);
	put("abcdef\n1");
	expect_row(0, "abcd", FBCON_GREY);
	expect_row(1, "ef", FBCON_GREY);
	expect_row(2, "1", FBCON_GREY);
	put("\n2");                     /* 3 rows: up by one (a third) */
	expect_row(0, "ef", FBCON_GREY);
	expect_row(1, "1", FBCON_GREY);
	expect_row(2, "2", FBCON_GREY);
	put("\nabcd\n");               /* a full line, then its newline: one line */
	expect_row(0, "2", FBCON_GREY);
	expect_row(1, "abcd", FBCON_GREY);
	expect_row(2, "", FBCON_GREY);

	screen(4, 7, 0, FB_BGRX8888);   /* 7 rows: up by 2 at the bottom */
	put("0\n1\n2\n3\n4\n5\n6\n7");
	expect_row(0, "2", FBCON_GREY);
	expect_row(4, "6", FBCON_GREY);
	expect_row(5, "7", FBCON_GREY);
	expect_row(6, "", FBCON_GREY);
}

static void test_controls(void **state)
{
	screen(12, 2, 0, FB_BGRX8888);
	put("\033[1;32mab\033[0m\tc\r\x01\xe9");
	expect_row(0, "ab      c?", FBCON_GREY);
}

/* Text queued before the screen is known is drawn when it starts; of
 * more than the ring holds (8192 characters) the newest is kept. */
static void test_queued_before_start(void **state)
{
	char big[9000];

	fbcon_queue("lost\n", 5);
	memset(big, 'x', sizeof(big));
	big[sizeof(big) - 3] = '\n';
	memcpy(big + sizeof(big) - 2, "ok", 2);
	fbcon_queue(big, sizeof(big));
	screen(8, 2, 0, FB_BGRX8888);
	/* 8192 kept: 8189 x's (8 a line, 5 on the last), then "\nok" */
	expect_row(0, "xxxxx", FBCON_GREY);
	expect_row(1, "ok", FBCON_GREY);
}

static void test_unusable(void **state)
{
	uint32_t one[64];
	struct fb_info f = { .width = 8, .height = 16, .stride = 8, .size = sizeof(one) * 8,
			     .format = FB_NONE };

	assert_false(fbcon_start(&f, one));
	f.format = FB_BGRX8888;
	f.size = 100;                   /* smaller than stride x height pixels */
	assert_false(fbcon_start(&f, one));
	f.size = 8 * 16 * 4;
	f.stride = 4;                   /* stride below width */
	assert_false(fbcon_start(&f, one));
	f.stride = 8;
	f.height = 15;                  /* not one text row */
	assert_false(fbcon_start(&f, one));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_font_is_real),
		cmocka_unit_test(test_text_and_colours),
		cmocka_unit_test(test_rgb_order),
		cmocka_unit_test(test_wrap_and_scroll),
		cmocka_unit_test(test_controls),
		cmocka_unit_test(test_queued_before_start),
		cmocka_unit_test(test_unusable),
	};
	int r = cmocka_run_group_tests(tests, NULL, NULL);

	free(px);
	return r;
}
