; SPDX-License-Identifier: BSD-2-Clause
;
; lib/linux_boot.inc with a header tickvisor must refuse:
; boot protocol 2.09: no pref_address, init_size.
%define PROTOCOL 0x0209
%include "lib/linux_boot.inc"
