// SPDX-License-Identifier: BSD-2-Clause
/*
 * boot/config.c: the input up to its first NUL is a tickvisor.cfg, the
 * rest (up to the next NUL) a UEFI load-options line; both are parsed,
 * then resolved. Invariants:
 *  - each parser returns 0 or -1; an error is one NUL-terminated line
 *    "FNAME:LINE: message" within CONFIG_ERR_LEN, its line one the file
 *    has;
 *  - whatever was accepted is in range: at most TV_MAX_GUESTS guests,
 *    names and paths non-empty and terminated, distinct names, 1..64
 *    vCPUs, a cpus= list as long as vcpus with distinct CPUs below 64,
 *    memory 2 MiB..3 GiB in 2 MiB steps, at most 8 modules, options
 *    within their enums and limits (serial=: an I/O port 1..0xfff8, an
 *    MMIO address non-zero, aligned to its registers' span and below
 *    2^52, a baud rate 0 or one serial_baud_valid() takes);
 *  - parsing is deterministic, and a comment line appended changes
 *    nothing.
 */
#include <stdlib.h>

#include "boot/config.h"
#include "tests/fuzz/fuzz.h"

#define FNAME "fuzz.cfg"

static struct tv_config cfg, again;     /* ~80 KiB each: not on the stack */

static bool terminated(const char *s, size_t size)
{
	return memchr(s, 0, size) != NULL;
}

static void check_serial(const struct tv_options *o)
{
	const struct serial_uart *u = &o->serial_uart;

	FUZZ_CHECK(o->serial <= SERIAL_UART);
	if (o->serial != SERIAL_UART)
		return;
	FUZZ_CHECK(!o->serial_baud || serial_baud_valid(o->serial_baud));
	FUZZ_CHECK(u->space <= SERIAL_SPACE_MMIO32);
	if (u->space == SERIAL_SPACE_IO) {
		FUZZ_CHECK(u->base >= 1 && u->base <= 0xfff8);
		return;
	}
	FUZZ_CHECK(u->base && u->base % serial_span(u) == 0);
	FUZZ_CHECK(u->base + serial_span(u) <= SERIAL_MMIO_LIMIT);
}

static void check_options(const struct tv_options *o)
{
	FUZZ_CHECK((unsigned)o->timer < TIMER_SEL_NR);
	FUZZ_CHECK(o->advance <= ADVANCE_AUTO);
	FUZZ_CHECK(o->advance_ns <= ADVANCE_NS_MAX);
	FUZZ_CHECK(o->advance != ADVANCE_FIXED || o->advance_ns > 0);
	FUZZ_CHECK(o->hlt == HLT_EXIT || o->hlt == HLT_GUEST);
	FUZZ_CHECK(o->min_period_us <= 1000000 && o->late_us <= 1000000);
	FUZZ_CHECK(o->housekeeping == HOUSEKEEPING_AUTO ||
		   (o->housekeeping >= 0 && o->housekeeping < (int32_t)TV_MAX_CPUS));
	FUZZ_CHECK(o->end <= END_RESET && o->console <= CONSOLE_BOTH);
	FUZZ_CHECK(!(o->set & ~(uint32_t)BITS(12, 0)));
	check_serial(o);
}

static void check_guest(const struct tv_config *c, uint32_t i, unsigned lines)
{
	const struct guest_spec *g = &c->guests[i];
	uint64_t seen = 0;

	FUZZ_CHECK(terminated(g->name, sizeof(g->name)) && g->name[0]);
	FUZZ_CHECK(terminated(g->path, sizeof(g->path)) && g->path[0]);
	FUZZ_CHECK(terminated(g->cmdline, sizeof(g->cmdline)));
	for (uint32_t j = 0; j < i; j++)
		FUZZ_CHECK(strcmp(c->guests[j].name, g->name));
	FUZZ_CHECK(g->vcpus >= 1 && g->vcpus <= TV_MAX_CPUS);
	FUZZ_CHECK(g->ncpus_listed == 0 || g->ncpus_listed == g->vcpus);
	for (uint32_t j = 0; j < g->ncpus_listed; j++) {
		FUZZ_CHECK(g->cpus[j] < TV_MAX_CPUS && !(seen & BIT(g->cpus[j])));
		seen |= BIT(g->cpus[j]);
	}
	FUZZ_CHECK(g->mem_bytes >= GUEST_MEM_MIN && g->mem_bytes <= GUEST_MEM_MAX);
	FUZZ_CHECK(g->mem_bytes % (2 * MiB) == 0);
	FUZZ_CHECK(g->timeout_s <= GUEST_TIMEOUT_MAX_S);
	FUZZ_CHECK(g->nmodules <= TV_MAX_MODULES);
	for (uint32_t j = 0; j < g->nmodules; j++)
		FUZZ_CHECK(terminated(g->modules[j].path, TV_PATH_LEN) && g->modules[j].path[0]);
	FUZZ_CHECK(g->cfg_line >= 1 && g->cfg_line <= lines);
	check_options(&g->opts);
	FUZZ_CHECK(!(g->opts.set & (OPT_SET_END | OPT_SET_CONSOLE | OPT_SET_SERIAL)));
}

/* Field by field: padding is not part of the result (a compound literal
 * assignment may leave it as anything). */
static bool same_options(const struct tv_options *a, const struct tv_options *b)
{
	return a->timer == b->timer && a->advance == b->advance &&
	       a->advance_ns == b->advance_ns && a->apicv == b->apicv && a->hlt == b->hlt &&
	       a->min_period_us == b->min_period_us && a->late_us == b->late_us &&
	       a->mmio_strict == b->mmio_strict &&
	       a->x2apic == b->x2apic && a->housekeeping == b->housekeeping &&
	       a->if0_quirks == b->if0_quirks && a->end == b->end && a->console == b->console &&
	       a->serial == b->serial && a->serial_uart.space == b->serial_uart.space &&
	       a->serial_uart.base == b->serial_uart.base && a->serial_baud == b->serial_baud &&
	       a->set == b->set;
}

static bool same_guest(const struct guest_spec *a, const struct guest_spec *b)
{
	if (strcmp(a->name, b->name) || strcmp(a->path, b->path) || strcmp(a->cmdline, b->cmdline) ||
	    a->mem_bytes != b->mem_bytes || a->vcpus != b->vcpus ||
	    a->ncpus_listed != b->ncpus_listed || a->timeout_s != b->timeout_s ||
	    a->nmodules != b->nmodules || a->cfg_line != b->cfg_line ||
	    memcmp(a->cpus, b->cpus, a->ncpus_listed) || !same_options(&a->opts, &b->opts))
		return false;
	for (uint32_t i = 0; i < a->nmodules; i++)
		if (strcmp(a->modules[i].path, b->modules[i].path))
			return false;
	return true;
}

static bool same_config(const struct tv_config *a, const struct tv_config *b)
{
	if (!same_options(&a->opts, &b->opts) || a->log_level != b->log_level ||
	    a->trace_mask != b->trace_mask || a->nguests != b->nguests)
		return false;
	for (uint32_t i = 0; i < a->nguests; i++)
		if (!same_guest(&a->guests[i], &b->guests[i]))
			return false;
	return true;
}

/* "FNAME:LINE: message", LINE within 1..lines. */
static void check_error(const char *err, const char *fname, unsigned lines)
{
	size_t n = strlen(fname);
	char *end;
	unsigned long line;

	FUZZ_CHECK(terminated(err, CONFIG_ERR_LEN));
	FUZZ_CHECK(!strncmp(err, fname, n) && err[n] == ':');
	line = strtoul(err + n + 1, &end, 10);
	FUZZ_CHECK(line >= 1 && line <= lines);
	FUZZ_CHECK(end[0] == ':' && end[1] == ' ' && end[2]);
}

static unsigned count_lines(const char *text, size_t len)
{
	unsigned n = 1;

	for (size_t i = 0; i < len; i++)
		n += text[i] == '\n';
	return n;
}

static int parse(struct tv_config *c, const char *text, size_t len, char *err)
{
	int r;

	config_defaults(c);
	memset(err, 0x5a, CONFIG_ERR_LEN);
	r = config_parse(c, text, len, FNAME, err, CONFIG_ERR_LEN);
	FUZZ_CHECK(r == 0 || r == -1);
	return r;
}

static void fuzz_file(const char *text, size_t len)
{
	static const char comment[] = "\n# appended by the fuzzer\n";
	unsigned lines = count_lines(text, len);
	char err[CONFIG_ERR_LEN], err2[CONFIG_ERR_LEN];
	char *more = malloc(len + sizeof(comment));
	int r = parse(&cfg, text, len, err), r2;

	if (r) {
		check_error(err, FNAME, lines);
	} else {
		FUZZ_CHECK(cfg.nguests <= TV_MAX_GUESTS);
		FUZZ_CHECK(cfg.log_level <= LOG_TRACE && !(cfg.trace_mask & ~TRACE_ALL));
		check_options(&cfg.opts);
		for (uint32_t i = 0; i < cfg.nguests; i++)
			check_guest(&cfg, i, lines);
	}
	/* A comment line after the text: the same outcome, to the byte. */
	memcpy(more, text, len);
	memcpy(more + len, comment, sizeof(comment) - 1);
	r2 = parse(&again, more, len + sizeof(comment) - 1, err2);
	free(more);
	FUZZ_CHECK(r2 == r);
	if (r)
		FUZZ_CHECK(!strcmp(err, err2));
	else
		FUZZ_CHECK(same_config(&cfg, &again));
}

static void fuzz_load_options(const char *line)
{
	struct tv_options o = { 0 };
	enum log_level lvl = LOG_INFO;
	uint32_t trace = 0;
	bool lvl_set = false;
	char path[TV_PATH_LEN], err[CONFIG_ERR_LEN];
	int r;

	memset(path, 0x5a, sizeof(path));
	memset(err, 0x5a, sizeof(err));
	r = config_parse_load_options(&o, &lvl, &trace, &lvl_set, line, path, sizeof(path),
				      err, sizeof(err));
	FUZZ_CHECK(r == 0 || r == -1);
	if (r) {
		check_error(err, "load options", 1);
		return;
	}
	FUZZ_CHECK(lvl <= LOG_TRACE && !(trace & ~TRACE_ALL));
	FUZZ_CHECK(!(o.set & ~(uint32_t)OPT_SET_ALL));
	/* the file's globals, overlaid: still in range everywhere */
	config_resolve(&cfg, &o, lvl, trace, lvl_set);
	check_options(&cfg.opts);
	for (uint32_t i = 0; i < cfg.nguests; i++)
		check_options(&cfg.guests[i].opts);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	size_t len = fuzz_strnlen(text, size);

	fuzz_file(text, len);
	if (len < size) {
		size_t n = fuzz_strnlen(text + len + 1, size - len - 1);
		char *line = malloc(n + 1);

		memcpy(line, text + len + 1, n);
		line[n] = 0;
		fuzz_load_options(line);
		free(line);
	}
	return 0;
}
