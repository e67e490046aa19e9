/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * How a guest asks to be reset or powered off, and what tickvisor does
 * then: it ends the guest (it restarts nothing) with GUEST_STATUS_RESET
 * or GUEST_STATUS_POWER_OFF (vmm/vcpu.h). The port numbers and values
 * below are what the guest's ACPI tables (FADT RESET_REG, the hardware-
 * reduced SLEEP_CONTROL_REG/SLEEP_STATUS_REG, the DSDT's \_S5) point at.
 *
 * - Reset control register 0xcf9 (Intel ICH/PCH data sheets, "Reset
 *   Control Register"; PIIX4 "RC"): a write with RST_CPU (bit 2) set
 *   resets, SYS_RST (bit 1) and FULL_RST (bit 3) only choose the kind.
 *   The FADT's RESET_REG is this port with RESET_VALUE 6 (hard reset).
 * - Keyboard controller 0x64: a "pulse output port" command with bit 0
 *   clear (0xfe, the classic one) or an output-port write with bit 0
 *   clear (vmm/dev/dev_kbc.c).
 * - ACPI hardware-reduced sleep registers (ACPI 6.x, "Sleep Control and
 *   Status Registers"): 8-bit SLEEP_CONTROL_REG with SLP_TYP in bits 4:2
 *   and SLP_EN in bit 5; SLEEP_STATUS_REG with WAK_STS in bit 7. SLP_EN
 *   with SLP_TYP 5 is S5, soft off. The layout (control at +0, status
 *   at +1, S5 = 5) is that of QEMU's generic event device, here in I/O
 *   space.
 */
#ifndef VMM_DEV_POWER_H
#define VMM_DEV_POWER_H

#include "vmm/vcpu.h"

#define DEV_RESET_CONTROL_PORT  0xcf9u
#define   DEV_RESET_SYS_RST     BIT(1)
#define   DEV_RESET_RST_CPU     BIT(2)
#define   DEV_RESET_FULL_RST    BIT(3)
#define   DEV_RESET_VALUE       0x06u   /* FADT RESET_VALUE: SYS_RST | RST_CPU */

#define DEV_KBC_DATA_PORT       0x60u   /* 8042 data */
#define DEV_KBC_CMD_PORT        0x64u   /* 8042 status (read), command (write) */

#define DEV_ACPI_SLEEP_CONTROL_PORT  0x600u     /* FADT SLEEP_CONTROL_REG, 8 bits */
#define DEV_ACPI_SLEEP_STATUS_PORT   0x601u     /* FADT SLEEP_STATUS_REG, 8 bits */
#define   DEV_ACPI_SLP_TYP           BITS(4, 2)
#define   DEV_ACPI_SLP_EN            BIT(5)
#define   DEV_ACPI_WAK_STS           BIT(7)
#define   DEV_ACPI_SLP_TYP_S5        5u         /* the DSDT's \_S5 package: { 5, 5 } */

/* Ends v's guest for a reset request (status GUEST_STATUS_RESET), naming
 * the way it asked and the byte `val` written to `port` that did; returns
 * -1 like guest_end(). */
int dev_power_reset(struct vcpu *v, const char *how, uint16_t port, uint8_t val);
/* Ends v's guest for a power-off request (status GUEST_STATUS_POWER_OFF). */
int dev_power_off(struct vcpu *v, const char *how, uint16_t port, uint8_t val);

#endif
