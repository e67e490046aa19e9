/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tickvisor.cfg and load-option parsing. Pure C (no GNU-EFI), unit-tested
 * on the host. Grammar, one statement per line, `#` starts a comment:
 *
 *   KEY=VALUE ...                          global options
 *   guest NAME PATH [KEY=VALUE ...]        a guest, run in file order
 *
 * Global keys: timer=auto|preempt|lapic|hpet|posted  advance=off|auto|<ns>
 *   apicv=on|off  hlt=exit|guest  min_period_us=<us>  housekeeping=auto|<cpu>
 *   if0_quirks=auto|on  log=error|warn|info|debug|trace|trace:timer,ipi,exit,late
 *   late_us=<us>
 *   end=auto|poweroff|halt|wait  console=auto|serial|screen|both
 *   serial=auto|none|PORT[,BAUD]|mmio:0xADDR[,BAUD]|mmio32:0xADDR[,BAUD]
 *   (end=, console=, serial= global only)
 * Guest keys: mem=<n>[K|M|G]  vcpus=<n>  cpus=<cpu>[,<cpu>...]  timeout=<s>  cmdline="..."
 *   module=PATH (repeatable) and timer= advance= apicv= hlt= min_period_us=
 *   housekeeping= if0_quirks= late_us= to override the globals.
 * Values containing spaces are double-quoted.
 */
#ifndef BOOT_CONFIG_H
#define BOOT_CONFIG_H

#include "vmm/host/options.h"

#define CONFIG_ERR_LEN 160u

void config_defaults(struct tv_config *c);

/* Parses a whole config file. On error returns -1 and writes
 * "FNAME:LINE: message" to err; c is then partially filled. */
int config_parse(struct tv_config *c, const char *text, size_t len,
		 const char *fname, char *err, size_t errlen);

/* Parses load options: whitespace-separated KEY=VALUE global options plus
 * config=PATH (copied to cfg_path). A first word without '=' is the image
 * path the shell passes and is skipped. Options go to *o with o->set; a
 * log= option to *lvl and *trace (the trace mask), with *lvl_set. */
int config_parse_load_options(struct tv_options *o, enum log_level *lvl, uint32_t *trace,
			      bool *lvl_set, const char *line, char *cfg_path,
			      size_t cfg_path_len, char *err, size_t errlen);

/* Applies load options over the file's globals, then resolves each
 * guest's effective options (guest line > load options > file > default). */
void config_resolve(struct tv_config *c, const struct tv_options *load_opts,
		    enum log_level lvl, uint32_t trace, bool lvl_set);

/* Human-readable names, for the boot log (timer= names: timer_sel_name()
 * in timer/timer_opts.h). */
const char *config_log_level_name(enum log_level l);

#endif
