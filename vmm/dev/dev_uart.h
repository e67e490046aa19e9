/* SPDX-License-Identifier: BSD-2-Clause */
/* The guest's COM1, a 16550A (vmm/dev/dev_uart.c): its register state. */
#ifndef VMM_DEV_UART_H
#define VMM_DEV_UART_H

#include "drivers/base.h"

#define DEV_UART_FIFO_SIZE 16u          /* the 16550A's receive FIFO */

/* Zero is the state after the chip's master reset (PC16550D, "Reset"):
 * IER, FCR, LCR and MCR 0, no data, no interrupt pending. */
struct dev_uart {
	uint8_t ier;            /* bits 3:0; 7:4 read 0 */
	uint8_t lcr;
	uint8_t mcr;            /* bits 4:0; 7:5 read 0 */
	uint8_t scr;
	uint8_t fcr;            /* FIFO enable and trigger level as written (FCR is write-only) */
	uint8_t dll, dlm;       /* divisor latch */
	uint8_t lsr_oe;         /* overrun error, until the LSR is read */
	uint8_t msr_delta;      /* MSR bits 3:0, until the MSR is read */
	bool thre_pending;      /* THR-empty interrupt pending (IIR reading or a THR write clears it) */
	uint8_t rx[DEV_UART_FIFO_SIZE]; /* loopback data (receive FIFO, or RBR alone) */
	uint8_t rx_head, rx_count;
	uint8_t rbr_last;       /* what RBR reads once the FIFO is empty */
};

#endif
