; SPDX-License-Identifier: BSD-2-Clause
;
; linux_boot.asm with a header tickvisor must refuse: init_size 1 GiB,
; more than the guest's RAM.
%define INIT_SIZE 0x40000000
%include "linux_boot.asm"
