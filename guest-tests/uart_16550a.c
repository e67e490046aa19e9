// SPDX-License-Identifier: BSD-2-Clause
/*
 * uart_16550a: COM1 passes Linux's 8250 autoconfiguration as a 16550A
 * (drivers/tty/serial/8250/8250_port.c: autoconfig()'s IER and loopback
 * tests, the FIFO bits of IIR, autoconfig_16550a()'s EFR, NatSemi, 16750
 * and XScale probes, size_fifo(), serial8250_do_startup()'s THRE tests),
 * step by step in Linux's order, and the register behaviour behind each
 * step (National Semiconductor PC16550D data sheet). QEMU's
 * hw/char/serial.c and Bochs's iodev/serial.cc agree on every value
 * checked here except where a comment says otherwise.
 *
 * Most steps turn on DLAB or loopback, when a byte written to THR would
 * not reach the console; so the checks are recorded first and reported
 * once the UART is back in the state the runtime set (8N1, FIFOs on,
 * DTR|RTS, IER 0).
 */
#include "lib/guest.h"
#include "lib/tsc.h"

#define COM1            0x3f8u
#define UART_IIR        2u              /* read side of FCR, EFR with LCR 0xbf */
#define UART_MSR        6u
#define UART_SCR        7u
#define LCR_CONF_MODE_A 0x80u           /* DLAB */
#define LCR_CONF_MODE_B 0xbfu           /* EFR access on 16650-class parts */
#define LCR_NATSEMI     0xe0u           /* bank 2 on NatSemi SuperIO UARTs */
#define MCR_LOOP        0x10u
#define FCR_ENABLE      0x01u
#define FCR_64BYTE      0x20u           /* TI16750 only */
#define FCR_TRIGGER_14  0xc0u
#define IER_RDI         0x01u
#define IER_THRI        0x02u
#define IER_RLSI        0x04u
#define IER_MSI         0x08u
#define IER_UUE         0x40u           /* XScale only */
#define IIR_FIFO        0xc0u
#define IIR_NO_INT      0x01u
#define LSR_DR          0x01u
#define LSR_OE          0x02u
#define LSR_IDLE        0x60u           /* THRE | TEMT */

#define MAX_CHECKS      64

static struct { bool ok; const char *what; uint32_t got; } checks[MAX_CHECKS];
static unsigned nchecks;

static void check(bool ok, const char *what, uint32_t got)
{
	if (nchecks < MAX_CHECKS)
		checks[nchecks++] = (typeof(checks[0])){ ok, what, got };
}

static uint8_t rd(unsigned reg)
{
	return inb((uint16_t)(COM1 + reg));
}

static void wr(unsigned reg, uint8_t val)
{
	outb((uint16_t)(COM1 + reg), val);
}

/* One read (reads of IIR, LSR, MSR have side effects), checked. */
static void expect_reg(unsigned reg, uint8_t want, const char *what)
{
	uint8_t got = rd(reg);

	check(got == want, what, got);
}

/* autoconfig(): IER exists (bits 3:0 keep what is written), and the
 * loopback test (MCR LOOP|OUT2|RTS makes MSR read DCD|CTS). */
static void step_exists(void)
{
	uint8_t s2, s3, msr;

	wr(UART_IER, 0);
	s2 = rd(UART_IER);
	wr(UART_IER, 0x0f);
	s3 = rd(UART_IER);
	check(s2 == 0 && s3 == 0x0f, "IER: 0 and 0x0f read back (autoconfig: IER test)",
	      (uint32_t)s2 << 8 | s3);
	wr(UART_IER, 0xff);
	expect_reg(UART_IER, 0x0f, "IER: bits 7:4 read 0");
	wr(UART_IER, IER_UUE);
	expect_reg(UART_IER, 0, "IER: UUE (bit 6) does not stick: not an XScale");
	wr(UART_IER, 0);
	msr = rd(UART_MSR);
	check(msr == 0xb0, "MSR: DCD, DSR, CTS from the far end, no delta", msr);
	wr(UART_MCR, MCR_LOOP | 0x0a);
	msr = rd(UART_MSR);
	/* Lines 0xb0 -> 0x90: DSR fell, so DDSR (bit 1); QEMU reports no
	 * deltas in loopback, Bochs and the data sheet do. */
	check(msr == 0x92, "loopback MCR 0x1a: MSR 0x92 (CTS=RTS, DCD=OUT2, DDSR)", msr);
	msr = rd(UART_MSR);
	check(msr == 0x90, "loopback: MSR 0x90 (autoconfig: LOOP test), deltas cleared by the read",
	      msr);
	expect_reg(UART_MCR, (MCR_LOOP | 0x0a), "MCR reads back 0x1a");
	wr(UART_MCR, 0x03);
	msr = rd(UART_MSR);
	check(msr == 0xb2, "loopback off: MSR 0xb2 (DSR back, DDSR)", msr);
	expect_reg(UART_MSR, 0xb0, "... then 0xb0");
}

/* autoconfig(): FCR bit 0 sets IIR bits 7:6 (16550A); autoconfig_16550a():
 * no EFR behind LCR 0x80 or 0xbf, no NatSemi bank 2, not a TI16750. */
static void step_16550a(void)
{
	uint8_t iir, efr_a, efr_b, mcr, excr1, s1, s2;

	wr(UART_LCR, LCR_CONF_MODE_B);
	wr(UART_IIR, 0);                        /* EFR on a 16650, FCR here */
	wr(UART_LCR, 0);
	expect_reg(UART_IIR, IIR_NO_INT, "FCR 0: IIR 0x01, FIFOs off");
	wr(UART_IIR, FCR_ENABLE);
	iir = rd(UART_IIR);
	check(iir >> 6 == 3, "FCR enable: IIR bits 7:6 = 11 (16550A)", iir);
	wr(UART_LCR, LCR_CONF_MODE_A);
	efr_a = rd(UART_IIR);
	wr(UART_LCR, LCR_CONF_MODE_B);
	efr_b = rd(UART_IIR);
	check(efr_a == 0xc1 && efr_b == 0xc1, "offset 2 reads IIR under LCR 0x80 and 0xbf: no EFR",
	      (uint32_t)efr_a << 8 | efr_b);
	wr(UART_LCR, 0);
	mcr = rd(UART_MCR);
	wr(UART_MCR, mcr ^ MCR_LOOP);
	wr(UART_LCR, LCR_NATSEMI);
	excr1 = rd(UART_IIR);
	wr(UART_LCR, 0);
	wr(UART_MCR, mcr);
	check(!((excr1 ^ mcr) & MCR_LOOP), "LCR 0xe0: offset 2 does not follow MCR LOOP: "
	      "not a NatSemi", excr1);
	wr(UART_IIR, FCR_ENABLE | FCR_64BYTE);
	s1 = rd(UART_IIR) >> 5;
	wr(UART_IIR, FCR_ENABLE);
	wr(UART_LCR, LCR_CONF_MODE_A);
	wr(UART_IIR, FCR_ENABLE | FCR_64BYTE);
	s2 = rd(UART_IIR) >> 5;
	wr(UART_IIR, FCR_ENABLE);
	wr(UART_LCR, 0);
	check(s1 == 6 && s2 == 6, "FCR bit 5 ignored with and without DLAB: not a TI16750",
	      (uint32_t)s1 << 8 | s2);
}

/* size_fifo(): 256 bytes in loopback at divisor 1 leave 16 in the FIFO
 * (Linux then keeps PORT_16550A instead of the U6's 64), plus what IIR
 * and LSR say about them on the way. */
static void step_fifo(void)
{
	unsigned n = 0;
	bool order = true;
	uint8_t lsr, iir_rls, iir_rdi, iir_cti;

	wr(UART_IIR, 0x07);
	wr(UART_MCR, MCR_LOOP);
	wr(UART_LCR, LCR_CONF_MODE_A);
	wr(UART_DLL, 1);
	wr(UART_DLM, 0);
	wr(UART_LCR, 0x03);
	for (unsigned i = 0; i < 256; i++)
		wr(UART_THR, (uint8_t)i);
	tsc_delay_us(2000);                     /* Linux waits 20 ms; natively Bochs needs some */
	wr(UART_IER, IER_RDI | IER_RLSI);
	iir_rls = rd(UART_IIR);
	lsr = rd(UART_LSR);
	check(lsr == (LSR_IDLE | LSR_OE | LSR_DR), "LSR after 256 loopback bytes: DR, OE, THRE, TEMT",
	      lsr);
	expect_reg(UART_LSR, (LSR_IDLE | LSR_DR), "reading LSR cleared OE");
	check(iir_rls == 0xc6, "IIR: receiver line status (overrun) first", iir_rls);
	iir_rdi = rd(UART_IIR);
	check(iir_rdi == 0xc4, "IIR: received data at the trigger level (1)", iir_rdi);
	wr(UART_IIR, FCR_ENABLE | FCR_TRIGGER_14);      /* no clear bit: the data stays */
	expect_reg(UART_IIR, 0xc4, "16 bytes >= trigger 14: received data");
	for (; n < 3; n++)
		order &= rd(UART_RBR) == n;
	iir_cti = rd(UART_IIR);
	check(iir_cti == 0xcc, "13 bytes < trigger 14: character timeout", iir_cti);
	wr(UART_IER, 0);
	for (; (rd(UART_LSR) & LSR_DR) && n < 256; n++)
		order &= rd(UART_RBR) == n;
	check(n == 16, "size_fifo: 16 bytes received (a 16550A)", n);
	check(order, "the FIFO kept bytes 0..15 in order, the overrun ones are lost", n);
	wr(UART_IIR, 0x07);
	wr(UART_MCR, 0x03);
}

/* With FIFOs off RBR holds one byte: a second one overruns it and
 * replaces it (PC16550D, LSR bit 1). */
static void step_no_fifo(void)
{
	uint8_t lsr1, lsr2, rbr;

	wr(UART_IIR, 0);
	wr(UART_MCR, MCR_LOOP);
	wr(UART_THR, 'a');
	lsr1 = rd(UART_LSR);
	wr(UART_THR, 'b');
	lsr2 = rd(UART_LSR);
	rbr = rd(UART_RBR);
	check(lsr1 == (LSR_IDLE | LSR_DR) && lsr2 == (LSR_IDLE | LSR_DR | LSR_OE),
	      "FIFOs off: one byte sets DR, a second one OE", (uint32_t)lsr1 << 8 | lsr2);
	check(rbr == 'b' && rd(UART_LSR) == LSR_IDLE, "RBR holds the newer byte, then DR clears",
	      rbr);
	wr(UART_IIR, 0x07);
	wr(UART_MCR, 0x03);
}

/* serial8250_do_startup(): THRE must be re-asserted when IER.THRI is
 * enabled again (else UART_BUG_THRE), and must show right after it is
 * enabled (else UART_BUG_TXEN). A THR write raises it again. */
static void step_thre(void)
{
	uint8_t iir1, iir2, iir3, iir4;

	wr(UART_IER, IER_THRI);
	iir1 = rd(UART_IIR);
	iir2 = rd(UART_IIR);
	wr(UART_IER, 0);
	wr(UART_IER, IER_THRI);
	iir3 = rd(UART_IIR);
	check(iir1 == 0xc2 && iir2 == 0xc1, "IER.THRI: IIR 0xc2, and reading it cleared it",
	      (uint32_t)iir1 << 8 | iir2);
	check(iir3 == 0xc2, "THRI enabled again: THRE re-asserted", iir3);
	wr(UART_MCR, MCR_LOOP);
	wr(UART_THR, 'x');
	iir4 = rd(UART_IIR);
	check(iir4 == 0xc2, "a THR write raises THRE again (the byte left at once)", iir4);
	wr(UART_IER, 0);
	wr(UART_IIR, 0x07);
	wr(UART_MCR, 0x03);
}

/* Modem-status interrupt from loopback line changes; TERI on RI 1 -> 0. */
static void step_msi(void)
{
	uint8_t iir, msr;

	wr(UART_MCR, MCR_LOOP | 0x04);          /* RI = OUT1 = 1 */
	(void)rd(UART_MSR);
	wr(UART_IER, IER_MSI);
	expect_reg(UART_IIR, 0xc1, "no delta: no modem-status interrupt");
	wr(UART_MCR, MCR_LOOP);
	iir = rd(UART_IIR);
	msr = rd(UART_MSR);
	check(iir == 0xc0, "RI fell: IIR modem status (0xc0)", iir);
	check(msr == 0x04, "MSR: TERI only, all lines low", msr);
	expect_reg(UART_IIR, 0xc1, "reading MSR cleared the modem-status interrupt");
	wr(UART_IER, 0);
	wr(UART_MCR, 0x03);
	(void)rd(UART_MSR);
}

/* Divisor latch behind DLAB; word accesses reach two registers, as on
 * the ISA bus. */
static void step_dlab_width(void)
{
	uint8_t dll, dlm;

	wr(UART_LCR, 0x83);
	wr(UART_DLL, 0x34);
	wr(UART_DLM, 0x12);
	wr(UART_LCR, 0x03);
	expect_reg(UART_IER, 0, "DLM write with DLAB left IER alone");
	wr(UART_LCR, 0x83);
	dll = rd(UART_DLL);
	dlm = rd(UART_DLM);
	wr(UART_DLL, 1);
	wr(UART_DLM, 0);
	wr(UART_LCR, 0x03);
	check(dll == 0x34 && dlm == 0x12, "divisor latch keeps 0x1234", (uint32_t)dlm << 8 | dll);
	outw(COM1 + UART_LCR, 0x0b03);
	check(inw(COM1 + UART_LCR) == 0x0b03, "outw/inw at LCR: LCR 0x03 and MCR 0x0b",
	      inw(COM1 + UART_LCR));
	wr(UART_MCR, 0x03);
	check(((inl(COM1 + UART_MCR) >> 8) & 0xff) == LSR_IDLE, "inl at MCR: LSR in byte 1",
	      inl(COM1 + UART_MCR));
	wr(UART_SCR, 0x5a);
	expect_reg(UART_SCR, 0x5a, "scratch register keeps 0x5a");
}

int main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	report_prefix_push("uart_16550a");
	serial_flush();
	step_exists();
	step_16550a();
	step_fifo();
	step_no_fifo();
	step_thre();
	step_msi();
	step_dlab_width();
	serial_init();                          /* the runtime's state again, whatever failed */
	for (unsigned i = 0; i < nchecks; i++)
		report(checks[i].ok, "%s (read %#x)", checks[i].what, checks[i].got);
	report_prefix_pop();
	return report_summary();
}
