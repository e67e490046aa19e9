/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The last rung of the error ladder: a broken host invariant. Prints the
 * CPU, the reason and where, states the final status on serial and stops
 * the machine. Guest mistakes never come here.
 */
#ifndef VMM_HOST_PANIC_H
#define VMM_HOST_PANIC_H

#include "drivers/base.h"

#define PANIC_STATUS 70         /* final status after a panic */

struct irq_frame;

__noreturn void panic(const char *fmt, ...) __printf(1, 2);
/* Where the image was loaded, to print addresses as image offsets. */
void panic_set_image_base(uint64_t base);
/* Register dump of an exception frame (used by panic paths). */
void panic_dump_frame(const struct irq_frame *f);
__noreturn void panic_frame(const struct irq_frame *f, const char *fmt, ...) __printf(2, 3);
/* Some CPU has panicked (the host NMI handler then stops this one). */
bool panic_active(void);

#endif
