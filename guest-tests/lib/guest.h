/* SPDX-License-Identifier: BSD-2-Clause */
/* Everything a guest test usually needs, in one include. */
#ifndef GUEST_GUEST_H
#define GUEST_GUEST_H

#include "lib/apic.h"
#include "lib/bits.h"
#include "lib/desc.h"
#include "lib/fwcfg.h"
#include "lib/io.h"
#include "lib/multiboot.h"
#include "lib/percpu.h"
#include "lib/printf.h"
#include "lib/processor.h"
#include "lib/report.h"
#include "lib/serial.h"
#include "lib/setup.h"
#include "lib/spinlock.h"
#include "lib/string.h"
#include "lib/tickvisor.h"

#endif
