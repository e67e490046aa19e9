/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * 16550 UART registers (National Semiconductor PC16550D data sheet,
 * "Register Descriptions"): offsets from the port base and their bits.
 * Shared by the host's serial driver (drivers/serial.c) and the guest's
 * emulated COM1 (vmm/dev/dev_uart.c). Plain C, no I/O.
 */
#ifndef DRIVERS_UART_H
#define DRIVERS_UART_H

#include "drivers/base.h"

enum uart_reg {
	UART_THR = 0,   /* transmit holding (write, DLAB=0) */
	UART_RBR = 0,   /* receive buffer (read, DLAB=0) */
	UART_DLL = 0,   /* divisor latch low (DLAB=1) */
	UART_IER = 1,
	UART_DLH = 1,   /* divisor latch high (DLAB=1) */
	UART_IIR = 2,   /* interrupt identification (read) */
	UART_FCR = 2,   /* FIFO control (write) */
	UART_LCR = 3,
	UART_MCR = 4,
	UART_LSR = 5,
	UART_MSR = 6,   /* modem status */
	UART_SCR = 7,   /* scratch */
};
#define UART_IER_ERBFI         BIT(0)           /* received data available */
#define UART_IER_ETBEI         BIT(1)           /* THR empty */
#define UART_IER_ELSI          BIT(2)           /* receiver line status */
#define UART_IER_EDSSI         BIT(3)           /* modem status */
#define UART_IER_MASK          BITS(3, 0)
#define UART_IIR_NO_INT        BIT(0)           /* no interrupt pending */
#define UART_IIR_ID            BITS(3, 1)       /* highest-priority source: */
#define   UART_IIR_MSI         0x00u            /* modem status */
#define   UART_IIR_THRI        0x02u            /* THR empty */
#define   UART_IIR_RDI         0x04u            /* received data at the trigger level */
#define   UART_IIR_RLSI        0x06u            /* receiver line status */
#define   UART_IIR_CTI         0x0cu            /* character timeout (FIFO mode) */
#define UART_IIR_FIFO_ON       BITS(7, 6)       /* both set while FCR bit 0 is 1 */
#define UART_FCR_ENABLE        BIT(0)
#define UART_FCR_CLEAR_RX      BIT(1)
#define UART_FCR_TRIGGER       BITS(7, 6)       /* 1, 4, 8, 14 bytes */
#define UART_FCR_ENABLE_CLEAR  0x07u            /* enable, clear RX and TX FIFOs */
#define UART_LCR_8N1           0x03u
#define UART_LCR_DLAB          BIT(7)
#define UART_MCR_DTR           BIT(0)
#define UART_MCR_RTS           BIT(1)
#define UART_MCR_OUT1          BIT(2)
#define UART_MCR_OUT2          BIT(3)
#define UART_MCR_LOOP          BIT(4)
#define UART_MCR_MASK          BITS(4, 0)
#define UART_MCR_DTR_RTS_OUT2  0x0bu
#define UART_LSR_DR            BIT(0)           /* data ready */
#define UART_LSR_OE            BIT(1)           /* overrun error */
#define UART_LSR_THRE          BIT(5)           /* THR empty */
#define UART_LSR_TEMT          BIT(6)           /* transmitter empty */
#define UART_MSR_DCTS          BIT(0)           /* delta bits 3:0 ... */
#define UART_MSR_DDSR          BIT(1)
#define UART_MSR_TERI          BIT(2)           /* RI went from 1 to 0 */
#define UART_MSR_DDCD          BIT(3)
#define UART_MSR_CTS           BIT(4)           /* ... of the lines 7:4 */
#define UART_MSR_DSR           BIT(5)
#define UART_MSR_RI            BIT(6)
#define UART_MSR_DCD           BIT(7)

#endif
