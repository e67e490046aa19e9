// SPDX-License-Identifier: BSD-2-Clause
#include "drivers/fwcfg.h"
#include "drivers/io.h"

bool fwcfg_present(void)
{
	static const char sig[4] = { 'Q', 'E', 'M', 'U' };

	outw(FWCFG_PORT_SEL, FWCFG_SIGNATURE);
	for (unsigned i = 0; i < sizeof(sig); i++)
		if (inb(FWCFG_PORT_DATA) != (uint8_t)sig[i])
			return false;
	return true;
}
