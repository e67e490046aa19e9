; SPDX-License-Identifier: BSD-2-Clause
;
; linux_boot.asm with a header tickvisor must refuse: loadflags without LOADED_HIGH: a zImage.
%define LOADFLAGS 0x00
%include "linux_boot.asm"
