// SPDX-License-Identifier: BSD-2-Clause
/*
 * drivers/serial.c over a fake 16550 (PC16550D data sheet, "Register
 * Descriptions"): the driver's bus primitives (uart_inb ... uart_mmio_
 * write32, declared by serial.c under TV_HOST_TEST) land in a register
 * file that checks each access's address and width for the UART's kind
 * (I/O port base + n, byte MMIO base + n, 32-bit MMIO base + 4n) and
 * logs it. Checked: init programs the divisor (DLAB, DLL/DLM) for the
 * baud rate and leaves LCR at 8N1, a byte goes to THR only after LSR
 * says THRE, a wedged UART does not hang the writer, the probe.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "drivers/serial.h"
#include "drivers/uart.h"

#define LOG_MAX 4096

struct access {
	bool write;
	uint8_t reg;
	uint8_t v;
	bool dlab;                      /* LCR.DLAB when it happened */
};

/* The fake UART and the bus it sits on. */
static struct {
	struct serial_uart at;          /* where it decodes */
	bool absent;                    /* nothing decodes: reads give float */
	uint8_t float_value;            /* 0xff on an I/O bus, 0 on some MMIO */
	uint8_t ier, lcr, mcr, fcr, scr, dll, dlm;
	unsigned busy;                  /* LSR reads left with THRE clear */
	unsigned busy_per_byte;         /* busy after each THR write */
	bool wedged;                    /* THRE never set */
	char out[LOG_MAX];
	unsigned nout;
	struct access log[LOG_MAX];
	unsigned nlog;
} uart;

static void fake_reset(struct serial_uart at)
{
	memset(&uart, 0, sizeof(uart));
	uart.at = at;
	uart.float_value = 0xff;
	uart.dll = 0x0c;                /* as a firmware might leave it: 9600 */
}

static void logit(bool write, unsigned reg, uint8_t v)
{
	if (uart.nlog < LOG_MAX)
		uart.log[uart.nlog++] = (struct access){ write, (uint8_t)reg, v,
							 uart.lcr & UART_LCR_DLAB };
}

static uint8_t reg_read(unsigned reg)
{
	bool dlab = uart.lcr & UART_LCR_DLAB;
	uint8_t v = 0;

	switch (reg) {
	case UART_RBR: v = dlab ? uart.dll : 0; break;
	case UART_IER: v = dlab ? uart.dlm : uart.ier; break;
	case UART_IIR: v = UART_IIR_NO_INT; break;
	case UART_LCR: v = uart.lcr; break;
	case UART_MCR: v = uart.mcr; break;
	case UART_LSR:
		if (uart.wedged || uart.busy) {
			uart.busy -= !uart.wedged;
			v = 0;
		} else {
			v = UART_LSR_THRE | UART_LSR_TEMT;
		}
		break;
	case UART_SCR: v = uart.scr; break;
	}
	logit(false, reg, v);
	return v;
}

static void reg_write(unsigned reg, uint8_t v)
{
	bool dlab = uart.lcr & UART_LCR_DLAB;

	logit(true, reg, v);
	switch (reg) {
	case UART_THR:
		if (dlab) {
			uart.dll = v;
			break;
		}
		if (uart.nout < LOG_MAX)
			uart.out[uart.nout++] = (char)v;
		uart.busy = uart.busy_per_byte;
		break;
	case UART_IER:
		if (dlab)
			uart.dlm = v;
		else
			uart.ier = v;
		break;
	case UART_FCR: uart.fcr = v; break;
	case UART_LCR: uart.lcr = v; break;
	case UART_MCR: uart.mcr = v; break;
	case UART_SCR: uart.scr = v; break;
	}
}

/* The register an access of this kind and width at addr reaches; fails
 * the test for an address or width the UART's kind never uses. */
static unsigned decode(enum serial_space space, unsigned width, uint64_t addr)
{
	unsigned stride = space == SERIAL_SPACE_MMIO32 ? 4 : 1;
	unsigned want_width = stride;

	assert_int_equal(space, uart.at.space);
	assert_int_equal(width, want_width);
	assert_true(addr >= uart.at.base && addr < uart.at.base + 8 * stride);
	assert_int_equal((addr - uart.at.base) % stride, 0);
	return (unsigned)((addr - uart.at.base) / stride);
}

uint8_t uart_inb(uint16_t port)
{
	unsigned reg = decode(SERIAL_SPACE_IO, 1, port);

	return uart.absent ? uart.float_value : reg_read(reg);
}

void uart_outb(uint16_t port, uint8_t v)
{
	unsigned reg = decode(SERIAL_SPACE_IO, 1, port);

	if (!uart.absent)
		reg_write(reg, v);
}

uint8_t uart_mmio_read8(uint64_t addr)
{
	unsigned reg = decode(SERIAL_SPACE_MMIO8, 1, addr);

	return uart.absent ? uart.float_value : reg_read(reg);
}

void uart_mmio_write8(uint64_t addr, uint8_t v)
{
	unsigned reg = decode(SERIAL_SPACE_MMIO8, 1, addr);

	if (!uart.absent)
		reg_write(reg, v);
}

/* A 32-bit register holds the 8-bit one in its low byte; the upper
 * bytes read 0 and writes must leave them 0. */
uint32_t uart_mmio_read32(uint64_t addr)
{
	unsigned reg = decode(SERIAL_SPACE_MMIO32, 4, addr);

	return uart.absent ? uart.float_value * 0x01010101u : reg_read(reg);
}

void uart_mmio_write32(uint64_t addr, uint32_t v)
{
	unsigned reg = decode(SERIAL_SPACE_MMIO32, 4, addr);

	assert_int_equal(v >> 8, 0);
	if (!uart.absent)
		reg_write(reg, (uint8_t)v);
}

static const struct serial_uart com2 = { SERIAL_SPACE_IO, 0x2f8 };
static const struct serial_uart lpss = { SERIAL_SPACE_MMIO32, 0xfe032000 };
static const struct serial_uart mmio8 = { SERIAL_SPACE_MMIO8, 0xfedc9000 };

/* The last write to reg before log entry `before`, with DLAB as given. */
static int last_write(unsigned before, unsigned reg, bool dlab)
{
	for (unsigned i = before; i-- > 0;)
		if (uart.log[i].write && uart.log[i].reg == reg && uart.log[i].dlab == dlab)
			return uart.log[i].v;
	return -1;
}

static void check_init(const struct serial_uart *u, uint32_t baud, unsigned div)
{
	fake_reset(*u);
	serial_init(u, baud);
	assert_true(serial_same(u, &(struct serial_uart){ u->space, u->base }));
	assert_int_equal(serial_current().base, u->base);
	/* The divisor latch: DLL and DLM written while DLAB was set ... */
	assert_int_equal(last_write(uart.nlog, UART_DLL, true), div & 0xff);
	assert_int_equal(last_write(uart.nlog, UART_DLH, true), div >> 8);
	assert_int_equal(uart.dll, div & 0xff);
	assert_int_equal(uart.dlm, div >> 8);
	/* ... then DLAB cleared: 8 data bits, no parity, 1 stop bit. */
	assert_int_equal(uart.lcr, UART_LCR_8N1);
	assert_int_equal(uart.ier, 0);
	assert_int_equal(uart.fcr, UART_FCR_ENABLE_CLEAR);
	assert_int_equal(uart.mcr, UART_MCR_DTR_RTS_OUT2);
	/* Nothing reached THR or IER while DLAB was set but the latch. */
	for (unsigned i = 0; i < uart.nlog; i++)
		if (uart.log[i].write && uart.log[i].dlab)
			assert_true(uart.log[i].reg == UART_DLL || uart.log[i].reg == UART_DLH ||
				    uart.log[i].reg == UART_LCR);
}

static void test_init_divisor(void **state)
{
	check_init(&com2, 115200, 1);
	check_init(&com2, 57600, 2);
	check_init(&com2, 38400, 3);
	check_init(&lpss, 19200, 6);
	check_init(&mmio8, 9600, 12);
}

/* baud 0: the firmware's divisor stays (an MMIO UART's clock need not
 * be 1.8432 MHz); DLAB is never set. */
static void test_init_keeps_divisor(void **state)
{
	fake_reset(lpss);
	uart.dll = 0x34;
	uart.dlm = 0x12;
	serial_init(&lpss, 0);
	assert_int_equal(uart.dll, 0x34);
	assert_int_equal(uart.dlm, 0x12);
	assert_int_equal(uart.lcr, UART_LCR_8N1);
	for (unsigned i = 0; i < uart.nlog; i++)
		assert_false(uart.log[i].dlab);
}

/* Register n at base + 4n as 32-bit accesses (decode() fails any other),
 * at base + n for byte registers and I/O ports: the LCR write lands at
 * the LCR. */
static void test_stride(void **state)
{
	static const struct serial_uart *const kinds[] = { &com2, &lpss, &mmio8 };

	for (unsigned k = 0; k < ARRAY_SIZE(kinds); k++) {
		fake_reset(*kinds[k]);
		serial_init(kinds[k], 115200);
		assert_int_equal(uart.lcr, UART_LCR_8N1);
		serial_write("ok", 2);
		assert_int_equal(uart.nout, 2);
		assert_memory_equal(uart.out, "ok", 2);
	}
	assert_int_equal(serial_span(&lpss), 32);
	assert_int_equal(serial_span(&mmio8), 8);
	assert_int_equal(serial_span(&com2), 8);
}

/* Each byte goes to THR only once an LSR read showed THRE, and a
 * newline goes out as CR LF. */
static void test_thre(void **state)
{
	unsigned thr = 0;
	bool thre_seen = false;

	fake_reset(lpss);
	serial_init(&lpss, 115200);
	uart.nlog = 0;
	uart.busy = uart.busy_per_byte = 3;
	serial_write("a\nb", 3);
	assert_int_equal(uart.nout, 4);
	assert_memory_equal(uart.out, "a\r\nb", 4);
	for (unsigned i = 0; i < uart.nlog; i++) {
		const struct access *a = &uart.log[i];

		if (!a->write && a->reg == UART_LSR)
			thre_seen = a->v & UART_LSR_THRE;
		if (a->write && a->reg == UART_THR) {
			assert_true(thre_seen);
			thre_seen = false;      /* the next byte waits again */
			thr++;
		}
	}
	assert_int_equal(thr, 4);
	/* 3 busy reads and one with THRE for each byte. */
	assert_int_equal(uart.nlog, 4 * (4 + 1));
}

/* A UART whose THRE never comes: the writer gives up waiting (bounded)
 * rather than hang the hypervisor; serial_flush too. */
static void test_wedged(void **state)
{
	fake_reset(com2);
	serial_init(&com2, 115200);
	uart.wedged = true;
	serial_putc('x');
	serial_flush();
	assert_int_equal(uart.nout, 1);
}

/* No UART chosen: nothing touches the bus. */
static void test_none(void **state)
{
	fake_reset(com2);
	serial_init(NULL, 115200);
	serial_write("x\n", 2);
	serial_flush();
	assert_int_equal(uart.nlog, 0);
	assert_int_equal(serial_current().base, 0);
}

static void test_probe(void **state)
{
	static const struct serial_uart *const kinds[] = { &com2, &lpss, &mmio8 };

	for (unsigned k = 0; k < ARRAY_SIZE(kinds); k++) {
		fake_reset(*kinds[k]);
		assert_true(serial_probe(kinds[k]));
		/* Nothing there: the bus floats high ... */
		uart.absent = true;
		assert_false(serial_probe(kinds[k]));
		/* ... or low, as some MMIO fabrics answer. */
		uart.float_value = 0;
		assert_false(serial_probe(kinds[k]));
	}
	assert_false(serial_probe(&(struct serial_uart){ SERIAL_SPACE_MMIO32, 0 }));
}

static void test_describe(void **state)
{
	char buf[64];

	serial_describe(&com2, buf, sizeof(buf));
	assert_string_equal(buf, "0x2f8");
	serial_describe(&lpss, buf, sizeof(buf));
	assert_string_equal(buf, "MMIO 0xfe032000 (32-bit registers)");
	serial_describe(&mmio8, buf, sizeof(buf));
	assert_string_equal(buf, "MMIO 0xfedc9000 (byte registers)");
	assert_true(serial_baud_valid(115200) && serial_baud_valid(9600));
	assert_false(serial_baud_valid(0) || serial_baud_valid(14400) ||
		     serial_baud_valid(230400));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_init_divisor),
		cmocka_unit_test(test_init_keeps_divisor),
		cmocka_unit_test(test_stride),
		cmocka_unit_test(test_thre),
		cmocka_unit_test(test_wedged),
		cmocka_unit_test(test_none),
		cmocka_unit_test(test_probe),
		cmocka_unit_test(test_describe),
	};

	return cmocka_run_group_tests_name("serial", tests, NULL, NULL);
}
