#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#
# Build Bochs 3.0 once from Debian trixie's source package into a cache
# outside the tracked tree (see shared/PLATFORM.md) and print the path of the
# binary. Debian 12 only ships Bochs 2.7, which is 3-4x slower and has no
# posted interrupts; 3.0 is our VMX test bed.
#
# scripts/bochs-patches/*.patch are applied to the source first (each says
# which Bochs bug it fixes). The build records their SHA-256 in
# $prefix/tickvisor-patches; a build whose record differs (a patch added
# or changed since) counts as not built and is made again.
#
# Usage: scripts/build-bochs.sh            -> prints path of bochs binary
#        scripts/build-bochs.sh --find     -> the same if already built, else
#                                             fails without building
#        scripts/build-bochs.sh --trace [--find]
#                                          -> a second build, in
#                                             bochs-3.0-trace, with
#                                             scripts/bochs-debug/ applied
#                                             too: the event trace of
#                                             scripts/bochs-trace.py
# Env:   TICKVISOR_CACHE (default ~/.cache/tickvisor)
set -euo pipefail

cache=${TICKVISOR_CACHE:-${HOME:-/root}/.cache/tickvisor}
variant=bochs-3.0
patchdirs=("$(cd "$(dirname "$0")/bochs-patches" && pwd)")
if [ "${1:-}" = --trace ]; then
	shift
	variant=bochs-3.0-trace
	patchdirs+=("$(cd "$(dirname "$0")/bochs-debug" && pwd)")
fi
prefix=$cache/$variant
bin=$prefix/bin/bochs
stamp=$prefix/tickvisor-patches
want=$(for d in "${patchdirs[@]}"; do (cd "$d" && sha256sum -- *.patch); done)

built() { [ -x "$bin" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$want" ]; }
if built; then
	echo "$bin"
	exit 0
fi
[ "${1:-}" != --find ] || exit 1
# Two runs at once (two checkouts' make test, make test beside make bench,
# the trace build) take turns: the second waits here and then finds the
# first one's build (both variants unpack into the same source directory).
mkdir -p "$cache"
exec 9>"$cache/bochs-3.0.lock"
if ! flock -n 9; then
	echo "tickvisor: waiting for another build of Bochs 3.0 in $cache" >&2
	flock 9
fi
if built; then
	echo "$bin"
	exit 0
fi
[ ! -x "$bin" ] || echo "tickvisor: Bochs 3.0 in $prefix lacks this tree's patches: building it again" >&2

work=$cache/bochs-3.0-src
mkdir -p "$work/etc" "$work/lists/partial"
log=$cache/$variant-build.log
: >"$log"
echo "tickvisor: building Bochs 3.0 into $prefix (once; log in $log)" >&2

echo "deb-src http://deb.debian.org/debian trixie main" >"$work/etc/sources.list"
aptopts=(-o "Dir::Etc::SourceList=$work/etc/sources.list" -o "Dir::Etc::SourceParts=/dev/null"
	-o "Dir::State::Lists=$work/lists" -o "APT::Sandbox::User=root")
tarball=$work/bochs_3.0+dfsg.orig.tar.xz
if [ ! -s "$tarball" ]; then
	apt-get "${aptopts[@]}" update >>"$log" 2>&1 || true
	# The .dsc is missing on the mirror, so apt-get exits 100 even though
	# the orig tarball arrived (verified against the index hash by apt):
	# test for the tarball, not the exit status.
	(cd "$work" && apt-get "${aptopts[@]}" source --download-only bochs >>"$log" 2>&1) || true
fi
if [ ! -s "$tarball" ]; then
	echo "tickvisor: could not download $tarball (see $log)" >&2
	exit 1
fi

src=$work/bochs-3.0
rm -rf "$src"
tar -C "$work" -xf "$tarball"
[ -d "$src" ] || src=$(find "$work" -maxdepth 1 -type d -name 'bochs-3*' | head -n1)
(
	cd "$src"
	for d in "${patchdirs[@]}"; do
		for p in "$d"/*.patch; do
			echo "tickvisor: applying $p"
			patch -p1 --forward <"$p"
		done
	done
	./configure --prefix="$prefix" --enable-x86-64 --enable-smp --enable-cpu-level=6 \
		--enable-vmx=2 --enable-avx --enable-evex --enable-all-optimizations \
		--enable-long-phy-address --enable-configurable-msrs --enable-pci \
		--with-nogui --disable-plugins
	make -j"$(nproc)"
	make install
) >>"$log" 2>&1 || {
	echo "tickvisor: Bochs 3.0 build failed; last lines of $log:" >&2
	tail -n 20 "$log" >&2
	exit 1
}
echo "$want" >"$stamp"
rm -rf "$src"
echo "$bin"
