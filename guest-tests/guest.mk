# SPDX-License-Identifier: BSD-2-Clause
# Guest test images (Multiboot ELF), filled in by the guest runtime.
GUEST_ELFS :=
