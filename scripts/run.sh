#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# make run: boot an ESP image in an emulator (see scripts/emu.py).
exec python3 "$(dirname "$0")/emu.py" "$@"
