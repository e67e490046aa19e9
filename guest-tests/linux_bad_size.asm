; SPDX-License-Identifier: BSD-2-Clause
;
; lib/linux_boot.inc with a header tickvisor must refuse:
; init_size 1 GiB, more than the guest's RAM.
%define INIT_SIZE 0x40000000
%include "lib/linux_boot.inc"
