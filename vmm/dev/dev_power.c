// SPDX-License-Identifier: BSD-2-Clause
/*
 * Reset and power-off requests (vmm/dev/dev_power.h): the reset control
 * register 0xcf9 and the ACPI hardware-reduced sleep registers. Both are
 * byte registers; the port table splits wider accesses (dev_ports.c).
 */
#include "vmm/dev/dev_ports.h"
#include "vmm/dev/dev_power.h"
#include "vmm/guest.h"
#include "vmm/host/log.h"

/* The line names the device and the very write that asked: a request
 * honoured for the wrong value (SLP_TYP 5 without SLP_EN, a pulse command
 * that pulses no reset line) ends the guest with the same status, so the
 * suite tells them apart by this line alone. */
int dev_power_reset(struct vcpu *v, const char *how, uint16_t port, uint8_t val)
{
	return guest_end(v->guest, GUEST_STATUS_RESET, "vcpu%u: reset by %s: 0x%02x written to "
			 "port %#x; the guest ends (status %d)", v->id, how, val, port,
			 GUEST_STATUS_RESET);
}

int dev_power_off(struct vcpu *v, const char *how, uint16_t port, uint8_t val)
{
	return guest_end(v->guest, GUEST_STATUS_POWER_OFF, "vcpu%u: power-off by %s: 0x%02x "
			 "written to port %#x; the guest ends (status %d)", v->id, how, val, port,
			 GUEST_STATUS_POWER_OFF);
}

/*
 * 0xcf9: SYS_RST and FULL_RST are kept and read back; RST_CPU going to 1
 * starts the reset (ICH/PCH data sheets: "RST_CPU: when this bit
 * transitions from 0 to 1, the reset type selected by SYS_RST and
 * FULL_RST is initiated"; it reads 0 because the reset never ends here).
 * Linux's reboot=pci writes the kind first (cf9|2), then the same with
 * RST_CPU; QEMU's PIIX and Bochs's PCI-to-ISA bridge reset on any write
 * with bit 2 set, which is the same since the bit never reads 1.
 */
int io_reset_control(struct vcpu *v, struct io_req *r)
{
	struct guest_devices *d = &v->guest->dev;
	uint8_t kind = (uint8_t)(r->val & (DEV_RESET_SYS_RST | DEV_RESET_FULL_RST));

	if (r->size != 1)
		return dev_ports_bytewise(v, r);
	if (r->in) {
		r->val = READ_ONCE(d->reset_control);
		return 0;
	}
	if (r->val & DEV_RESET_RST_CPU)
		return dev_power_reset(v, kind ? "the reset control register 0xcf9 (hard reset)"
					       : "the reset control register 0xcf9 (soft reset)",
				       r->port, (uint8_t)r->val);
	WRITE_ONCE(d->reset_control, kind);
	return 0;
}

/*
 * SLEEP_CONTROL_REG: SLP_EN with the \_S5 type powers off. Another type
 * is a sleeping state tickvisor does not offer (the DSDT names none): the
 * request is refused the way a platform that wakes at once would answer
 * it, with WAK_STS set, so Linux's acpi_hw_extended_sleep(), which polls
 * WAK_STS after SLP_EN, returns instead of spinning. SLEEP_STATUS_REG:
 * WAK_STS reads back and is cleared by writing 1 to it.
 */
int io_acpi_sleep(struct vcpu *v, struct io_req *r)
{
	struct guest_devices *d = &v->guest->dev;
	uint8_t val = (uint8_t)r->val;

	if (r->size != 1)
		return dev_ports_bytewise(v, r);
	if (r->port == DEV_ACPI_SLEEP_STATUS_PORT) {
		spin_lock(&d->lock);
		if (r->in)
			r->val = d->acpi_sleep_status;
		else if (val & DEV_ACPI_WAK_STS)
			d->acpi_sleep_status &= (uint8_t)~DEV_ACPI_WAK_STS;
		spin_unlock(&d->lock);
		return 0;
	}
	if (r->in) {
		r->val = 0;             /* SLP_EN is write-only, SLP_TYP reads 0 */
		return 0;
	}
	if (!(val & DEV_ACPI_SLP_EN))
		return 0;
	if (FIELD_GET(DEV_ACPI_SLP_TYP, val) == DEV_ACPI_SLP_TYP_S5)
		return dev_power_off(v, "ACPI sleep control (S5, soft off)", r->port, val);
	spin_lock(&d->lock);
	d->acpi_sleep_status |= DEV_ACPI_WAK_STS;
	spin_unlock(&d->lock);
	if (v->notices++ < 4)
		pr_info("guest %s: vcpu%u: ACPI sleep type %lu requested: not offered, woken at once",
			v->guest->spec->name, v->id,
			(unsigned long)FIELD_GET(DEV_ACPI_SLP_TYP, val));
	return 0;
}
