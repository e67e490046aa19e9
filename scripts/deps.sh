#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#
# Checks the tools tickvisor's build, runners and tests need; installs the
# missing Debian packages when run as root, otherwise prints the exact
# apt-get line and fails. Then makes sure Bochs 3.0 is built (cached).
set -euo pipefail

# package:command-or-file that proves it is there
need=(
	gcc:/usr/bin/gcc
	g++:/usr/bin/g++
	make:/usr/bin/make
	nasm:/usr/bin/nasm
	gnu-efi:/usr/lib/crt0-efi-x86_64.o
	mtools:/usr/bin/mformat
	ovmf:/usr/share/ovmf/OVMF.fd
	qemu-system-x86:/usr/bin/qemu-system-x86_64
	grub-pc-bin:/usr/lib/grub/i386-pc/multiboot.mod
	grub-common:/usr/bin/grub-mkrescue
	xorriso:/usr/bin/xorriso
	libcmocka-dev:/usr/include/cmocka.h
	clang:/usr/bin/clang
	libclang-rt-14-dev:/usr/lib/llvm-14/lib/clang/14.0.6/lib/linux/libclang_rt.fuzzer-x86_64.a
	vgabios:/usr/share/vgabios/vgabios.bin
	bochsbios:/usr/share/bochs/BIOS-bochs-latest
	python3:/usr/bin/python3
	gnuplot-nox:/usr/bin/gnuplot
	xz-utils:/usr/bin/xz
	binutils:/usr/bin/objcopy
	patch:/usr/bin/patch
	acpica-tools:/usr/bin/iasl
	console-setup-linux:/usr/share/consolefonts/Lat15-Terminus16.psf.gz
)

missing=()
for item in "${need[@]}"; do
	pkg=${item%%:*}
	path=${item#*:}
	[ -e "$path" ] || missing+=("$pkg")
done

if [ ${#missing[@]} -gt 0 ]; then
	line="apt-get install -y ${missing[*]}"
	if [ "$(id -u)" -ne 0 ]; then
		echo "tickvisor: missing tools; run as root:" >&2
		echo "  apt-get update && $line" >&2
		exit 1
	fi
	echo "tickvisor: installing ${missing[*]}" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >&2
	apt-get install -y -qq "${missing[@]}" >&2
fi

# Bochs 3.0 (our VMX test bed) is built once into a cache; if that is
# impossible, Debian's 2.7 is the slow fallback (scripts/emu.py says so too).
here=$(dirname "$0")
if ! "$here/build-bochs.sh" >/dev/null; then
	echo "tickvisor: NOTICE: Bochs 3.0 could not be built; falling back to Debian's Bochs 2.7 (slower, no posted interrupts)" >&2
	if [ ! -x /usr/bin/bochs ]; then
		if [ "$(id -u)" -ne 0 ]; then
			echo "  apt-get install -y bochs bochs-x" >&2
			exit 1
		fi
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bochs bochs-x >&2
	fi
fi
