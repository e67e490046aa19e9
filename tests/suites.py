# SPDX-License-Identifier: BSD-2-Clause
"""Integration suites: one emulator boot each, many guests per boot.

A suite gives tickvisor.cfg for the boot, the emulator and CPU count, the
final status tickvisor must end with, regexes the serial log must contain,
and (guest, expected exit status) pairs. Bochs boots are budgeted by VM
exits (~4 us of wall time each), so guests are batched into few boots.
"""


class Suite:
    def __init__(self, name, config, emu="bochs", cpus=1, status=0, expect=(), guests=(),
                 timeout=300, megs=1024, remove=()):
        self.name = name
        self.config = config
        self.emu = emu
        self.cpus = cpus
        self.status = status
        self.expect = list(expect)
        self.guests = list(guests)
        self.timeout = timeout
        self.megs = megs
        self.remove = list(remove)


SUITES = [
    # Issue 2: the boot skeleton.
    Suite("boot-bochs", "log=info\n",
          expect=[r"^tickvisor: tickvisor \d+\.\d+\.\d+ \(git \S+\)",
                  r"^tickvisor: VMX: preemption timer yes \(rate \d+",
                  r"^tickvisor: VMX: EPT yes .* unrestricted guest yes",
                  r"^tickvisor: TSC: 50000000 Hz from HPET",
                  r"^tickvisor: HPET: 0xfed00000 \(probe at 0xfed00000\), 100000000 Hz",
                  r"^tickvisor: done: 0 guests, 0 failed"]),
    Suite("boot-tcg-novmx", "log=info\n", emu="tcg", status=1,
          expect=[r"^tickvisor: error: VMX unavailable: this CPU has no VMX",
                  r"^tickvisor: ACPI: RSDP rev 2 .*MADT.*HPET.*FADT",
                  r"^tickvisor: TSC: \d+ Hz from HPET"]),
    Suite("config-error", "timer=auto\nguest ok x.elf\nbogus=1\n", status=1,
          expect=[r"^tickvisor: error: \\EFI\\tickvisor\\tickvisor.cfg:3: unknown option 'bogus'"]),
    Suite("guest-missing", "guest lost guests/does-not-exist.elf mem=16M\n", status=1,
          expect=[r"^tickvisor: error: \\EFI\\tickvisor\\tickvisor.cfg:1: guest lost: cannot "
                  r"read \\EFI\\tickvisor\\guests\\does-not-exist.elf: file not found"]),
]
