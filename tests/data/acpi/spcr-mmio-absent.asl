/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * An SPCR table naming an MMIO 16550 with 32-bit registers (interface
 * type 0x12, GAS: system memory, 32 bits, dword access), as an Intel
 * LPSS UART's firmware publishes it, at 0xfe030000, where nothing
 * decodes on QEMU's q35 (no emulator here has an MMIO 16550 on x86).
 * Suite tcg-spcr-mmio-absent: serial=auto must probe it, find no UART
 * and keep the log on COM1. Made from `iasl -T SPCR`.
 */
[0004]                          Signature : "SPCR"    [Serial Port Console Redirection table]
[0004]                       Table Length : 00000050
[0001]                           Revision : 02
[0001]                           Checksum : E3
[0006]                             Oem ID : "TICKVI"
[0008]                       Oem Table ID : "SPCRMMIO"
[0004]                       Oem Revision : 00000000
[0004]                    Asl Compiler ID : "INTL"
[0004]              Asl Compiler Revision : 20100528

[0001]                     Interface Type : 12
[0003]                           Reserved : 000000

[0012]               Serial Port Register : [Generic Address Structure]
[0001]                           Space ID : 00 [SystemMemory]
[0001]                          Bit Width : 20
[0001]                         Bit Offset : 00
[0001]               Encoded Access Width : 03 [DWord Access:32]
[0008]                            Address : 00000000FE030000

[0001]                     Interrupt Type : 00
[0001]                PCAT-compatible IRQ : 00
[0004]                          Interrupt : 00000000
[0001]                          Baud Rate : 07
[0001]                             Parity : 00
[0001]                          Stop Bits : 00
[0001]                       Flow Control : 00
[0001]                      Terminal Type : 00
[0001]                           Reserved : 00
[0002]                      PCI Device ID : 0000
[0002]                      PCI Vendor ID : 0000
[0001]                            PCI Bus : 00
[0001]                         PCI Device : 00
[0001]                       PCI Function : 00
[0004]                          PCI Flags : 00000000
[0001]                        PCI Segment : 00
[0004]                           Reserved : 00000000
