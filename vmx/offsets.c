// SPDX-License-Identifier: BSD-2-Clause
/* Struct offsets for NASM (see Makefile: offsets.inc). Never compiled into
 * the image: it is compiled to assembly and the markers are extracted. */
#define OFFSET(name, type, member) \
	__asm__ volatile("\n->" #name " %0" : : "i"(__builtin_offsetof(type, member)))

void offsets(void);
void offsets(void)
{
}
