// SPDX-License-Identifier: BSD-2-Clause
/*
 * The 8042 keyboard controller (data 0x60, status/command 0x64), as far
 * as resetting the machine through it goes - the oldest reboot path on a
 * PC and Linux's fallback after the ACPI reset register (reboot=kbd:
 * kb_wait() for the input buffer, then command 0xfe). No keyboard or
 * mouse is attached: the output buffer never fills, so a driver probing
 * the controller finds nothing to read and gives up.
 *
 * The 8042's output port bit 0 is the CPU reset line, active low. It is
 * pulled low by
 *   - a "pulse output port" command 0xf0-0xff whose bit 0 is clear (the
 *     command's low nibble selects the lines pulsed by a 0; 0xfe is the
 *     usual one), and
 *   - command 0xd1 "write output port" followed by a data byte with bit 0
 *     clear.
 * QEMU's pckbd resets on both; Bochs's keyboard.cc on 0xfe and 0xd1 (it
 * treats the other pulse commands as no-ops).
 *
 * Status register: SYS (bit 2) set as after the firmware's self test,
 * CMD (bit 3) says whether the last write went to 0x64, bit 4 (keyboard
 * not inhibited) set; OBF and IBF (bits 0, 1) stay clear: the controller
 * takes every byte at once.
 */
#include "vmm/dev/dev_ports.h"
#include "vmm/dev/dev_power.h"

#define KBC_STATUS_SYS      BIT(2)
#define KBC_STATUS_CMD      BIT(3)
#define KBC_STATUS_UNLOCKED BIT(4)
#define KBC_CMD_WRITE_OUTPORT  0xd1u
#define KBC_CMD_PULSE_FIRST    0xf0u   /* 0xf0-0xff: pulse lines 3:0 that are 0 */
#define KBC_OUTPORT_RESET      BIT(0)  /* active low */

static uint32_t kbc_status(const struct guest_devices *d)
{
	return KBC_STATUS_SYS | KBC_STATUS_UNLOCKED | (d->kbc_last_data ? 0 : KBC_STATUS_CMD);
}

/* A byte to 0x60: the output port after command 0xd1, else keyboard
 * data, which goes nowhere. True when it pulls the reset line. */
static bool kbc_data_write(struct guest_devices *d, uint8_t val)
{
	bool outport = d->kbc_pending == KBC_CMD_WRITE_OUTPORT;

	d->kbc_pending = 0;
	d->kbc_last_data = true;
	return outport && !(val & KBC_OUTPORT_RESET);
}

/* A command to 0x64; true when it pulls the reset line. */
static bool kbc_command(struct guest_devices *d, uint8_t cmd)
{
	d->kbc_last_data = false;
	d->kbc_pending = cmd == KBC_CMD_WRITE_OUTPORT ? cmd : 0;
	return cmd >= KBC_CMD_PULSE_FIRST && !(cmd & KBC_OUTPORT_RESET);
}

int io_kbc(struct vcpu *v, struct io_req *r)
{
	struct guest_devices *d = &v->guest->dev;
	uint8_t val = (uint8_t)r->val;
	bool reset;

	if (r->size != 1)
		return dev_ports_bytewise(v, r);
	spin_lock(&d->lock);
	if (r->in) {
		r->val = r->port == DEV_KBC_DATA_PORT ? 0 : kbc_status(d);
		spin_unlock(&d->lock);
		return 0;
	}
	reset = r->port == DEV_KBC_DATA_PORT ? kbc_data_write(d, val) : kbc_command(d, val);
	spin_unlock(&d->lock);
	if (!reset)
		return 0;
	return dev_power_reset(v, r->port == DEV_KBC_DATA_PORT ?
			       "the keyboard controller (output port bit 0 cleared)" :
			       "the keyboard controller (reset pulse command)", r->port, val);
}
