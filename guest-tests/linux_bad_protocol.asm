; SPDX-License-Identifier: BSD-2-Clause
;
; linux_boot.asm with a header tickvisor must refuse: boot protocol 2.09: no pref_address, init_size.
%define PROTOCOL 0x0209
%include "linux_boot.asm"
