; SPDX-License-Identifier: BSD-2-Clause
;
; linux_boot: a bzImage whose 32-bit entry checks the state and zero page
; the Linux boot protocol promises (the code: lib/linux_boot.inc).
%include "lib/linux_boot.inc"
