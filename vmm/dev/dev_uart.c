// SPDX-License-Identifier: BSD-2-Clause
/*
 * COM1, a 16550A (National Semiconductor PC16550D data sheet, "Register
 * Descriptions") complete enough for Linux's 8250 autoconfiguration
 * (drivers/tty/serial/8250/8250_port.c: autoconfig(), autoconfig_16550a(),
 * size_fifo(), serial8250_do_startup()'s THRE tests) to find a 16550A.
 * Bytes written to THR go to the host serial port (through the log, so
 * lines of different CPUs do not mix); in loopback mode they come back in
 * RBR instead. The transmitter sends at once, so LSR always says THRE and
 * TEMT. No interrupt line is wired (the guest's PIC is masked and there
 * is no I/O APIC): the interrupt sources are only visible in IIR, which
 * is what a driver polling the port reads.
 *
 * Where the data sheet leaves a choice, QEMU's hw/char/serial.c and
 * Bochs's iodev/serial.cc agree with what is done here:
 * - IER bits 7:4 and MCR bits 7:5 read 0 (Linux's XScale UUE test relies
 *   on it); FCR is write-only, IIR bits 7:6 read 11 while FIFOs are on;
 * - the THR-empty interrupt is raised when IER.ETBEI goes from 0 to 1
 *   with THR empty and after each THR write (the byte leaves at once),
 *   and cleared by reading IIR while it is the reported source or by
 *   disabling it (Linux's startup test re-enables it and expects it back);
 * - loopback: MSR's lines are MCR's outputs (CTS=RTS, DSR=DTR, RI=OUT1,
 *   DCD=OUT2) with their delta bits; THR data lands in the receive FIFO
 *   (16 bytes, an overrun drops the new byte and sets LSR.OE), or in RBR
 *   alone with FIFOs off (an overrun replaces it).
 * Received data below the FIFO trigger level is reported as a character
 * timeout at once: the four character times the chip waits have no
 * meaning without a line.
 */
#include "drivers/serial.h"
#include "drivers/uart.h"
#include "vmm/dev/dev_io.h"
#include "vmm/host/log.h"

/* MSR lines when not in loopback: the far end of the (virtual) cable is
 * there and ready. */
#define UART_MSR_LINES_CONNECTED  (UART_MSR_DCD | UART_MSR_DSR | UART_MSR_CTS)

static bool uart_fifo_on(const struct dev_uart *u)
{
	return u->fcr & UART_FCR_ENABLE;
}

/* MSR bits 7:4 as the lines stand with this MCR. */
static uint8_t uart_msr_lines(uint8_t mcr)
{
	if (!(mcr & UART_MCR_LOOP))
		return UART_MSR_LINES_CONNECTED;
	return (uint8_t)(((mcr & UART_MCR_RTS) ? UART_MSR_CTS : 0) |
			 ((mcr & UART_MCR_DTR) ? UART_MSR_DSR : 0) |
			 ((mcr & UART_MCR_OUT1) ? UART_MSR_RI : 0) |
			 ((mcr & UART_MCR_OUT2) ? UART_MSR_DCD : 0));
}

static void uart_mcr_write(struct dev_uart *u, uint8_t val)
{
	uint8_t was = uart_msr_lines(u->mcr), now;

	u->mcr = val & UART_MCR_MASK;
	now = uart_msr_lines(u->mcr);
	if ((was ^ now) & UART_MSR_CTS)
		u->msr_delta |= UART_MSR_DCTS;
	if ((was ^ now) & UART_MSR_DSR)
		u->msr_delta |= UART_MSR_DDSR;
	if ((was & UART_MSR_RI) && !(now & UART_MSR_RI))
		u->msr_delta |= UART_MSR_TERI;
	if ((was ^ now) & UART_MSR_DCD)
		u->msr_delta |= UART_MSR_DDCD;
}

static void uart_rx_clear(struct dev_uart *u)
{
	u->rx_head = 0;
	u->rx_count = 0;
}

static void uart_rx_push(struct dev_uart *u, uint8_t c)
{
	if (!uart_fifo_on(u)) {                 /* RBR alone: the new byte replaces it */
		if (u->rx_count)
			u->lsr_oe = UART_LSR_OE;
		u->rx[u->rx_head] = c;
		u->rx_count = 1;
		return;
	}
	if (u->rx_count == DEV_UART_FIFO_SIZE) {        /* full: the new byte is lost */
		u->lsr_oe = UART_LSR_OE;
		return;
	}
	u->rx[(u->rx_head + u->rx_count) % DEV_UART_FIFO_SIZE] = c;
	u->rx_count++;
}

static uint8_t uart_rx_pop(struct dev_uart *u)
{
	if (u->rx_count) {
		u->rbr_last = u->rx[u->rx_head];
		u->rx_head = (uint8_t)((u->rx_head + 1) % DEV_UART_FIFO_SIZE);
		u->rx_count--;
	}
	return u->rbr_last;
}

static unsigned uart_rx_trigger(const struct dev_uart *u)
{
	static const uint8_t level[4] = { 1, 4, 8, 14 };

	return level[FIELD_GET(UART_FCR_TRIGGER, u->fcr)];
}

/* FCR: bit 0 must be 1 for the other bits to take (PC16550D, "FIFO
 * Control Register"); turning FIFOs on or off empties them. */
static void uart_fcr_write(struct dev_uart *u, uint8_t val)
{
	uint8_t fcr = (val & UART_FCR_ENABLE) ? (uint8_t)(val & (UART_FCR_ENABLE |
								 UART_FCR_TRIGGER)) : 0;

	if (((fcr ^ u->fcr) & UART_FCR_ENABLE) || (fcr & UART_FCR_ENABLE && val & UART_FCR_CLEAR_RX))
		uart_rx_clear(u);
	u->fcr = fcr;
}

static void uart_ier_write(struct dev_uart *u, uint8_t val)
{
	uint8_t on = (uint8_t)(val & ~u->ier);

	u->ier = val & UART_IER_MASK;
	if (on & UART_IER_ETBEI)
		u->thre_pending = true;         /* THR is always empty */
	else if (!(u->ier & UART_IER_ETBEI))
		u->thre_pending = false;
}

static void uart_thr_write(struct dev_uart *u, uint8_t c)
{
	if (u->mcr & UART_MCR_LOOP) {
		uart_rx_push(u, c);
	} else {
		char ch = (char)c;

		log_raw(&ch, 1);
	}
	u->thre_pending = true;         /* the byte left at once: THR is empty again */
}

/* IIR: the highest-priority enabled source (PC16550D, "Interrupt
 * Identification Register", Table IV); reading it while THR-empty is
 * the source clears that one. */
static uint8_t uart_iir_read(struct dev_uart *u)
{
	uint8_t id = UART_IIR_NO_INT;

	if ((u->ier & UART_IER_ELSI) && u->lsr_oe)
		id = UART_IIR_RLSI;
	else if ((u->ier & UART_IER_ERBFI) && u->rx_count)
		id = uart_fifo_on(u) && u->rx_count < uart_rx_trigger(u) ? UART_IIR_CTI
									  : UART_IIR_RDI;
	else if ((u->ier & UART_IER_ETBEI) && u->thre_pending)
		id = UART_IIR_THRI;
	else if ((u->ier & UART_IER_EDSSI) && u->msr_delta)
		id = UART_IIR_MSI;
	if (id == UART_IIR_THRI)
		u->thre_pending = false;
	return (uint8_t)(id | (uart_fifo_on(u) ? UART_IIR_FIFO_ON : 0));
}

static uint8_t uart_read(struct dev_uart *u, unsigned reg)
{
	uint8_t val;

	switch (reg) {
	case UART_RBR: return (u->lcr & UART_LCR_DLAB) ? u->dll : uart_rx_pop(u);
	case UART_IER: return (u->lcr & UART_LCR_DLAB) ? u->dlm : u->ier;
	case UART_IIR: return uart_iir_read(u);
	case UART_LCR: return u->lcr;
	case UART_MCR: return u->mcr;
	case UART_LSR:
		val = (uint8_t)((u->rx_count ? UART_LSR_DR : 0) | u->lsr_oe |
				UART_LSR_THRE | UART_LSR_TEMT);
		u->lsr_oe = 0;
		return val;
	case UART_MSR:
		val = uart_msr_lines(u->mcr) | u->msr_delta;
		u->msr_delta = 0;
		return val;
	default: return u->scr;
	}
}

static void uart_write(struct dev_uart *u, unsigned reg, uint8_t val)
{
	bool dlab = u->lcr & UART_LCR_DLAB;

	switch (reg) {
	case UART_THR:
		if (dlab)
			u->dll = val;
		else
			uart_thr_write(u, val);
		break;
	case UART_IER:
		if (dlab)
			u->dlm = val;
		else
			uart_ier_write(u, val);
		break;
	case UART_FCR: uart_fcr_write(u, val); break;
	case UART_LCR: u->lcr = val; break;
	case UART_MCR: uart_mcr_write(u, val); break;
	case UART_SCR: u->scr = val; break;
	default: break;                 /* LSR, MSR: factory test writes, ignored */
	}
}

int io_serial(struct vcpu *v, struct io_req *r)
{
	struct guest_devices *d = &v->guest->dev;

	if (r->size != 1)
		return dev_io_bytewise(v, r);
	spin_lock(&d->lock);
	if (r->in)
		r->val = uart_read(&d->uart, r->port - SERIAL_COM1);
	else
		uart_write(&d->uart, r->port - SERIAL_COM1, (uint8_t)r->val);
	spin_unlock(&d->lock);
	return 0;
}
