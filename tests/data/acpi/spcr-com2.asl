/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * An SPCR table (Microsoft's Serial Port Console Redirection Table) naming
 * COM2, an I/O-port 16550 at 0x2f8, 115200 baud: what a server whose
 * console is COM2 publishes. Suite tcg-spcr adds it to QEMU's tables
 * (-acpitable) with nothing at 0x3f8; tickvisor's serial=auto must take
 * it. Made from `iasl -T SPCR`; compiled by the harness with iasl.
 */
[0004]                          Signature : "SPCR"    [Serial Port Console Redirection table]
[0004]                       Table Length : 00000050
[0001]                           Revision : 01
[0001]                           Checksum : E3
[0006]                             Oem ID : "TICKVI"
[0008]                       Oem Table ID : "SPCRCOM2"
[0004]                       Oem Revision : 00000000
[0004]                    Asl Compiler ID : "INTL"
[0004]              Asl Compiler Revision : 20100528

[0001]                     Interface Type : 00
[0003]                           Reserved : 000000

[0012]               Serial Port Register : [Generic Address Structure]
[0001]                           Space ID : 01 [SystemIO]
[0001]                          Bit Width : 08
[0001]                         Bit Offset : 00
[0001]               Encoded Access Width : 00 [Undefined/Legacy]
[0008]                            Address : 00000000000002F8

[0001]                     Interrupt Type : 01
[0001]                PCAT-compatible IRQ : 03
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
