; SPDX-License-Identifier: BSD-2-Clause
;
; lib/linux_boot.inc with a header tickvisor must refuse:
; loadflags without LOADED_HIGH: a zImage.
%define LOADFLAGS 0x00
%include "lib/linux_boot.inc"
