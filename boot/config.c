// SPDX-License-Identifier: BSD-2-Clause
#include "boot/config.h"
#include "drivers/fmt.h"
#include "drivers/string.h"

#define CONFIG_MAX_TOKENS 32u
#define CONFIG_LINE_MAX   1024u

struct cfg_ctx {
	const char *fname;
	unsigned line;
	char *err;
	size_t errlen;
};

static int cfg_error(struct cfg_ctx *x, const char *msg, const char *arg)
{
	fmt_snprintf(x->err, x->errlen, "%s:%u: %s%s%s%s", x->fname, x->line, msg,
		     arg ? " '" : "", arg ? arg : "", arg ? "'" : "");
	return -1;
}

static const char *const level_names[] = {
	[LOG_ERROR] = "error", [LOG_WARN] = "warn", [LOG_INFO] = "info",
	[LOG_DEBUG] = "debug", [LOG_TRACE] = "trace",
};

const char *config_log_level_name(enum log_level l)
{
	return (unsigned)l < ARRAY_SIZE(level_names) ? level_names[l] : "?";
}

static const char *const end_names[] = {
	[END_AUTO] = "auto", [END_POWEROFF] = "poweroff", [END_HALT] = "halt",
	[END_WAIT] = "wait", [END_RESET] = "reset",
};

static const char *const console_names[] = {
	[CONSOLE_AUTO] = "auto", [CONSOLE_SERIAL] = "serial", [CONSOLE_SCREEN] = "screen",
	[CONSOLE_BOTH] = "both",
};

static int lookup(const char *const *names, size_t n, const char *v)
{
	for (size_t i = 0; i < n; i++)
		if (names[i] && !strcmp(names[i], v))
			return (int)i;
	return -1;
}

/* Decimal number with an optional K/M/G suffix (binary units). */
static bool parse_u64(const char *s, uint64_t *out, bool suffix)
{
	uint64_t v = 0, mul = 1;

	if (!*s)
		return false;
	for (; *s >= '0' && *s <= '9'; s++) {
		if (v > (UINT64_MAX - 9) / 10)
			return false;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	if (suffix && *s) {
		switch (*s++) {
		case 'K': case 'k': mul = KiB; break;
		case 'M': case 'm': mul = MiB; break;
		case 'G': case 'g': mul = GiB; break;
		default: return false;
		}
	}
	if (*s || (v && mul > UINT64_MAX / v))
		return false;
	*out = v * mul;
	return true;
}

/* 0xHEX up to max, digits only after the prefix. */
static bool parse_hex(const char *s, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;

	if (s[0] != '0' || (s[1] != 'x' && s[1] != 'X') || !s[2])
		return false;
	for (s += 2; *s; s++) {
		unsigned d = *s >= '0' && *s <= '9' ? (unsigned)(*s - '0') :
			     *s >= 'a' && *s <= 'f' ? (unsigned)(*s - 'a' + 10) :
			     *s >= 'A' && *s <= 'F' ? (unsigned)(*s - 'A' + 10) : 16u;

		if (d > 15 || v > max)
			return false;
		v = v * 16 + d;
	}
	if (v > max)
		return false;
	*out = v;
	return true;
}

/* An I/O port for a 16550: 0xHEX or decimal, 1 to 0xfff8 (its eight
 * registers inside the 64 KiB I/O space). */
static bool parse_port(const char *s, uint16_t *port)
{
	bool hex = s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
	uint64_t v;

	if (hex ? !parse_hex(s, 0xffff, &v) : !parse_u64(s, &v, false))
		return false;
	if (!v || v > 0xfff8)
		return false;
	*port = (uint16_t)v;
	return true;
}

#define SERIAL_FORMS "auto, none, an I/O port (0x3f8, 0x2f8...), mmio:0xADDR or mmio32:0xADDR, " \
		     "each with an optional ,BAUD"

/* An MMIO 16550's base: hex, not 0, aligned to the span of its eight
 * registers (8 or 32 bytes: no real UART's block is less aligned, and
 * the block then never crosses a page), inside physical address space. */
static int parse_serial_mmio(struct cfg_ctx *x, struct serial_uart *u, const char *a,
			     const char *val)
{
	uint64_t span = serial_span(u);

	if (!parse_hex(a, UINT64_MAX >> 4, &u->base))
		return cfg_error(x, "serial=mmio: the address must be hexadecimal (0xfe032000), not",
				 val);
	if (!u->base)
		return cfg_error(x, "serial=mmio: the address must not be 0:", val);
	if (u->base % span)
		return cfg_error(x, span == 32 ? "serial=mmio32: the address must be a multiple of 32 "
				 "(eight 32-bit registers), not" : "serial=mmio: the address must be "
				 "a multiple of 8 (eight byte registers), not", val);
	if (u->base > SERIAL_MMIO_LIMIT - span)
		return cfg_error(x, "serial=mmio: the address is beyond 52-bit physical address "
				 "space:", val);
	return 0;
}

/* serial=PORT[,BAUD] | mmio:ADDR[,BAUD] | mmio32:ADDR[,BAUD]. Without a
 * baud rate (serial_baud 0) an I/O-port UART runs at 115200, an MMIO one
 * keeps what the firmware set: its clock need not be the PC's 1.8432 MHz
 * (boot/efi_serial.c). */
static int parse_serial_uart(struct cfg_ctx *x, struct tv_options *o, const char *val)
{
	struct serial_uart u = { SERIAL_SPACE_IO, 0 };
	const char *a = val, *comma = strchr(val, ',');
	uint64_t baud = 0;
	char addr[32];
	uint16_t port;

	if (!strncmp(val, "mmio:", 5)) {
		u.space = SERIAL_SPACE_MMIO8;
		a += 5;
	} else if (!strncmp(val, "mmio32:", 7)) {
		u.space = SERIAL_SPACE_MMIO32;
		a += 7;
	}
	if (strlcpy(addr, a, sizeof(addr)) >= sizeof(addr) ||
	    (comma && comma - a >= (ptrdiff_t)sizeof(addr)))
		return cfg_error(x, "serial must be " SERIAL_FORMS ", not", val);
	if (comma) {
		addr[comma - a] = 0;
		if (!parse_u64(comma + 1, &baud, false) || baud > UINT32_MAX ||
		    !serial_baud_valid((uint32_t)baud))
			return cfg_error(x, "serial: the baud rate must be 9600, 19200, 38400, "
					 "57600 or 115200, not", val);
	}
	if (u.space != SERIAL_SPACE_IO) {
		if (parse_serial_mmio(x, &u, addr, val))
			return -1;
	} else if (parse_port(addr, &port)) {
		u.base = port;
	} else {
		return cfg_error(x, "serial must be " SERIAL_FORMS ", not", val);
	}
	o->serial = SERIAL_UART;
	o->serial_uart = u;
	o->serial_baud = (uint32_t)baud;
	return 0;
}

static void options_default(struct tv_options *o)
{
	*o = (struct tv_options){
		.timer = TIMER_SEL_AUTO, .advance = ADVANCE_OFF, .apicv = true,
		.hlt = HLT_EXIT, .min_period_us = MIN_PERIOD_US_DEFAULT, .x2apic = true,
		.housekeeping = HOUSEKEEPING_AUTO, .late_us = LATE_US_DEFAULT,
	};
}

void config_defaults(struct tv_config *c)
{
	memset(c, 0, sizeof(*c));
	options_default(&c->opts);
	c->log_level = LOG_INFO;
	c->inject.adjust_cpu = c->inject.warp_cpu = c->inject.slow_cpu = -1;
}

static int set_bool(bool *b, const char *v)
{
	if (!strcmp(v, "on") || !strcmp(v, "1") || !strcmp(v, "yes"))
		*b = true;
	else if (!strcmp(v, "off") || !strcmp(v, "0") || !strcmp(v, "no"))
		*b = false;
	else
		return -1;
	return 0;
}

/* An option shared by the global and guest scopes. Returns 1 if key is
 * not such an option, 0 on success, -1 (with err set) on a bad value. */
static int parse_option(struct cfg_ctx *x, struct tv_options *o,
			const char *key, const char *val)
{
	uint64_t n;
	int i;

	if (!strcmp(key, "timer")) {
		if ((i = lookup(timer_sel_names, ARRAY_SIZE(timer_sel_names), val)) < 0)
			return cfg_error(x, "timer must be auto, preempt, lapic, hpet or posted, not",
					 val);
		o->timer = (enum timer_backend_sel)i;
		o->set |= OPT_SET_TIMER;
	} else if (!strcmp(key, "advance")) {
		if (!strcmp(val, "off")) {
			o->advance = ADVANCE_OFF;
		} else if (!strcmp(val, "auto")) {
			o->advance = ADVANCE_AUTO;
		} else if (parse_u64(val, &n, false) && n <= ADVANCE_NS_MAX) {
			o->advance = n ? ADVANCE_FIXED : ADVANCE_OFF;
			o->advance_ns = (uint32_t)n;
		} else {
			return cfg_error(x, "advance must be off, auto or nanoseconds <= 1000000, not", val);
		}
		o->set |= OPT_SET_ADVANCE;
	} else if (!strcmp(key, "apicv")) {
		if (set_bool(&o->apicv, val))
			return cfg_error(x, "apicv must be on or off, not", val);
		o->set |= OPT_SET_APICV;
	} else if (!strcmp(key, "x2apic")) {
		if (set_bool(&o->x2apic, val))
			return cfg_error(x, "x2apic must be on or off, not", val);
		o->set |= OPT_SET_X2APIC;
	} else if (!strcmp(key, "hlt")) {
		if (!strcmp(val, "exit"))
			o->hlt = HLT_EXIT;
		else if (!strcmp(val, "guest"))
			o->hlt = HLT_GUEST;
		else
			return cfg_error(x, "hlt must be exit or guest, not", val);
		o->set |= OPT_SET_HLT;
	} else if (!strcmp(key, "min_period_us")) {
		if (!parse_u64(val, &n, false) || n > 1000000)
			return cfg_error(x, "min_period_us must be 0..1000000, not", val);
		o->min_period_us = (uint32_t)n;
		o->set |= OPT_SET_MIN_PERIOD;
	} else if (!strcmp(key, "late_us")) {
		if (!parse_u64(val, &n, false) || n > 1000000)
			return cfg_error(x, "late_us must be 0..1000000, not", val);
		o->late_us = (uint32_t)n;
		o->set |= OPT_SET_LATE;
	} else if (!strcmp(key, "mmio")) {
		if (!strcmp(val, "pc"))
			o->mmio_strict = false;
		else if (!strcmp(val, "strict"))
			o->mmio_strict = true;
		else
			return cfg_error(x, "mmio must be pc or strict, not", val);
		o->set |= OPT_SET_MMIO;
	} else if (!strcmp(key, "housekeeping")) {
		if (!strcmp(val, "auto"))
			o->housekeeping = HOUSEKEEPING_AUTO;
		else if (parse_u64(val, &n, false) && n < TV_MAX_CPUS)
			o->housekeeping = (int32_t)n;
		else
			return cfg_error(x, "housekeeping must be auto or a CPU 0..63, not", val);
		o->set |= OPT_SET_HOUSEKEEPING;
	} else if (!strcmp(key, "if0_quirks")) {
		if (!strcmp(val, "auto"))
			o->if0_quirks = false;
		else if (!strcmp(val, "on"))
			o->if0_quirks = true;
		else
			return cfg_error(x, "if0_quirks must be auto or on, not", val);
		o->set |= OPT_SET_IF0_QUIRKS;
	} else if (!strcmp(key, "end")) {
		if ((i = lookup(end_names, ARRAY_SIZE(end_names), val)) < 0)
			return cfg_error(x, "end must be auto, poweroff, halt, wait or reset, not", val);
		o->end = (enum end_mode)i;
		o->set |= OPT_SET_END;
	} else if (!strcmp(key, "serial")) {
		if (!strcmp(val, "auto")) {
			o->serial = SERIAL_AUTO;
		} else if (!strcmp(val, "none")) {
			o->serial = SERIAL_NONE;
		} else if (parse_serial_uart(x, o, val)) {
			return -1;
		}
		o->set |= OPT_SET_SERIAL;
	} else if (!strcmp(key, "console")) {
		if ((i = lookup(console_names, ARRAY_SIZE(console_names), val)) < 0)
			return cfg_error(x, "console must be auto, serial, screen or both, not", val);
		o->console = (enum console_sel)i;
		o->set |= OPT_SET_CONSOLE;
	} else {
		return 1;
	}
	return 0;
}

/* The trace points of log=trace:NAME,NAME,... (split in place): each
 * name once or more, none empty. */
static int parse_trace_list(struct cfg_ctx *x, uint32_t *mask, char *list)
{
	char *comma;
	int i;

	*mask = 0;
	for (;;) {
		comma = strchr(list, ',');
		if (comma)
			*comma = 0;
		if ((i = lookup(trace_names, ARRAY_SIZE(trace_names), list)) < 0)
			return cfg_error(x, "log=trace: trace points are timer, ipi, exit and late, not",
					 list);
		*mask |= (uint32_t)BIT(i);
		if (!comma)
			return 0;
		list = comma + 1;
	}
}

/* log=LEVEL, or log=trace:LIST for the trace level with only the trace
 * points named (log=trace alone traces them all). */
static int parse_log(struct cfg_ctx *x, enum log_level *lvl, uint32_t *trace, char *val)
{
	static const char trace_prefix[] = "trace:";
	int i;

	if (!strncmp(val, trace_prefix, sizeof(trace_prefix) - 1)) {
		if (parse_trace_list(x, trace, val + sizeof(trace_prefix) - 1))
			return -1;
		*lvl = LOG_TRACE;
		return 0;
	}
	if ((i = lookup(level_names, ARRAY_SIZE(level_names), val)) < 0)
		return cfg_error(x, "log must be error, warn, info, debug, trace or "
				 "trace:timer,ipi,exit,late, not", val);
	*lvl = (enum log_level)i;
	*trace = *lvl == LOG_TRACE ? TRACE_ALL : 0;
	return 0;
}

/* Splits a line in place into tokens; quotes group, # starts a comment. */
static int tokenize(struct cfg_ctx *x, char *s, char **tok, unsigned *ntok)
{
	char *w;

	*ntok = 0;
	for (;;) {
		while (*s == ' ' || *s == '\t' || *s == '\r')
			s++;
		if (!*s || *s == '#')
			return 0;
		if (*ntok == CONFIG_MAX_TOKENS)
			return cfg_error(x, "too many words on one line", NULL);
		tok[(*ntok)++] = w = s;
		while (*s && *s != ' ' && *s != '\t' && *s != '\r') {
			if (*s == '"') {
				char *end = strchr(s + 1, '"');
				if (!end)
					return cfg_error(x, "unterminated quote", NULL);
				memmove(w, s + 1, (size_t)(end - s - 1));
				w += end - s - 1;
				s = end + 1;
			} else {
				*w++ = *s++;
			}
		}
		if (*s)
			s++;
		*w = 0;
	}
}

static int copy_field(struct cfg_ctx *x, char *dst, size_t size, const char *src,
		      const char *what)
{
	if (strlcpy(dst, src, size) >= size)
		return cfg_error(x, what, src);
	return 0;
}

/* Names and paths may not be empty ("" would name nothing). */
static int copy_nonempty(struct cfg_ctx *x, char *dst, size_t size, const char *src,
			 const char *what, const char *empty)
{
	if (!*src)
		return cfg_error(x, empty, NULL);
	return copy_field(x, dst, size, src, what);
}

static int split_kv(struct cfg_ctx *x, char *tok, char **val)
{
	char *eq = strchr(tok, '=');

	if (!eq || eq == tok)
		return cfg_error(x, "expected KEY=VALUE, got", tok);
	*eq = 0;
	*val = eq + 1;
	return 0;
}

/* cpus=LIST: comma-separated CPU indices, one per vCPU in order; a CPU
 * listed twice would run two vCPUs at once, which tickvisor never does. */
static int parse_cpus(struct cfg_ctx *x, struct guest_spec *g, char *val)
{
	char *item = val, *comma;
	uint64_t seen = 0, n;

	_Static_assert(TV_MAX_CPUS <= 64, "seen holds a bit per CPU");
	g->ncpus_listed = 0;
	for (;;) {
		comma = strchr(item, ',');
		if (comma)
			*comma = 0;
		if (!parse_u64(item, &n, false) || n >= TV_MAX_CPUS)
			return cfg_error(x, "cpus must list CPUs 0..63 separated by commas, not", item);
		if (seen & BIT(n))
			return cfg_error(x, "cpus lists a CPU twice:", item);
		seen |= BIT(n);
		g->cpus[g->ncpus_listed++] = (uint8_t)n;
		if (!comma)
			return 0;
		item = comma + 1;
	}
}

static int guest_kv(struct cfg_ctx *x, struct guest_spec *g, char *tok)
{
	char *key, *val;
	uint64_t n;
	int r;

	if (split_kv(x, tok, &val))
		return -1;
	key = tok;
	if (!strcmp(key, "end"))
		return cfg_error(x, "end= ends the whole run: a global option, not a guest's:", tok);
	if (!strcmp(key, "console"))
		return cfg_error(x, "console= is tickvisor's: a global option, not a guest's:", tok);
	if (!strcmp(key, "serial"))
		return cfg_error(x, "serial= is tickvisor's: a global option, not a guest's:", tok);
	if (!strcmp(key, "inject"))
		return cfg_error(x, "inject= is tickvisor's: a global option, not a guest's:", tok);
	if ((r = parse_option(x, &g->opts, key, val)) <= 0)
		return r;
	if (!strcmp(key, "mem")) {
		if (!parse_u64(val, &n, true) || n < GUEST_MEM_MIN || n > GUEST_MEM_MAX)
			return cfg_error(x, "mem must be between 2M and 3G, not", val);
		g->mem_bytes = ALIGN_UP(n, 2 * MiB);
	} else if (!strcmp(key, "vcpus")) {
		if (!parse_u64(val, &n, false) || n < 1 || n > TV_MAX_CPUS)
			return cfg_error(x, "vcpus must be between 1 and 64, not", val);
		g->vcpus = (uint32_t)n;
	} else if (!strcmp(key, "cpus")) {
		return parse_cpus(x, g, val);
	} else if (!strcmp(key, "timeout")) {
		if (!parse_u64(val, &n, false) || n > GUEST_TIMEOUT_MAX_S)
			return cfg_error(x, "timeout must be 0..86400 seconds, not", val);
		g->timeout_s = (uint32_t)n;
	} else if (!strcmp(key, "cmdline")) {
		return copy_field(x, g->cmdline, sizeof(g->cmdline), val, "cmdline too long:");
	} else if (!strcmp(key, "module") || !strcmp(key, "initrd")) {
		/* initrd= names the same list: a Linux guest's initrd files */
		if (g->nmodules == TV_MAX_MODULES)
			return cfg_error(x, "too many modules (at most 8) at", val);
		return copy_nonempty(x, g->modules[g->nmodules++].path, TV_PATH_LEN, val,
				     "path too long:", "empty module path");
	} else {
		return cfg_error(x, "unknown guest option", key);
	}
	return 0;
}

/* vcpus= (0 while not given) and cpus=LIST in either order: the list,
 * when given, says how many vCPUs there are, and vcpus= must agree. */
static int guest_vcpus_settle(struct cfg_ctx *x, struct guest_spec *g)
{
	char msg[64];

	if (!g->ncpus_listed) {
		g->vcpus = g->vcpus ? g->vcpus : 1;
		return 0;
	}
	if (g->vcpus && g->vcpus != g->ncpus_listed) {
		fmt_snprintf(msg, sizeof(msg), "cpus lists %u CPU%s but vcpus=%u", g->ncpus_listed,
			     g->ncpus_listed == 1 ? "" : "s", g->vcpus);
		return cfg_error(x, msg, NULL);
	}
	g->vcpus = g->ncpus_listed;
	return 0;
}

static int parse_guest(struct cfg_ctx *x, struct tv_config *c, char **tok, unsigned ntok)
{
	struct guest_spec *g;

	if (ntok < 3)
		return cfg_error(x, "usage: guest NAME PATH [KEY=VALUE ...]", NULL);
	if (c->nguests == TV_MAX_GUESTS) {
		char msg[48];

		fmt_snprintf(msg, sizeof(msg), "too many guests (at most %u)", TV_MAX_GUESTS);
		return cfg_error(x, msg, NULL);
	}
	if (strchr(tok[1], '=') || strchr(tok[2], '='))
		return cfg_error(x, "usage: guest NAME PATH [KEY=VALUE ...], got", tok[1]);
	for (uint32_t i = 0; i < c->nguests; i++)
		if (!strcmp(c->guests[i].name, tok[1]))
			return cfg_error(x, "duplicate guest name", tok[1]);
	g = &c->guests[c->nguests];
	memset(g, 0, sizeof(*g));
	g->mem_bytes = GUEST_MEM_DEFAULT;
	g->cfg_line = x->line;
	if (copy_nonempty(x, g->name, sizeof(g->name), tok[1], "guest name too long:",
			  "empty guest name") ||
	    copy_nonempty(x, g->path, sizeof(g->path), tok[2], "path too long:", "empty guest path"))
		return -1;
	for (unsigned i = 3; i < ntok; i++)
		if (guest_kv(x, g, tok[i]))
			return -1;
	if (guest_vcpus_settle(x, g))
		return -1;
	c->nguests++;
	return 0;
}

/* The CPU of inject=KEY:CPU:...: an AP, 1..63; *rest what follows its
 * colon. `form` names the key's argument in the error. */
static int parse_inject_ap(struct cfg_ctx *x, char *arg, const char *form, int32_t *cpu,
			   char **rest)
{
	char *colon = strchr(arg, ':');
	uint64_t n;

	if (!colon)
		return cfg_error(x, form, arg);
	*colon = 0;
	if (!parse_u64(arg, &n, false) || n == 0 || n >= TV_MAX_CPUS)
		return cfg_error(x, "inject: the CPU must be an AP, 1..63, not", arg);
	*cpu = (int32_t)n;
	*rest = colon + 1;
	return 0;
}

/* CPU:CYCLES of inject=tsc-adjust: and tsc-warp: (CYCLES may be negative). */
static int parse_inject_tsc(struct cfg_ctx *x, char *arg, int32_t *cpu, int64_t *cycles)
{
	char *num;
	int32_t n;
	uint64_t c;

	if (parse_inject_ap(x, arg, "inject=tsc-adjust and tsc-warp take CPU:CYCLES, not", &n,
			    &num))
		return -1;
	if (!parse_u64(num + (*num == '-'), &c, false) || !c || c > (1ull << 62))
		return cfg_error(x, "inject: CYCLES must be a non-zero count of TSC cycles, not", num);
	*cpu = n;
	*cycles = *num == '-' ? -(int64_t)c : (int64_t)c;
	return 0;
}

/* CPU:MS of inject=tsc-slow:, MS from 1 to 10000. */
static int parse_inject_slow(struct cfg_ctx *x, char *arg, struct tv_inject *in)
{
	char *num;
	int32_t n;
	uint64_t ms;

	if (parse_inject_ap(x, arg, "inject=tsc-slow takes CPU:MS, not", &n, &num))
		return -1;
	if (!parse_u64(num, &ms, false) || !ms || ms > 10000)
		return cfg_error(x, "inject=tsc-slow: MS must be 1 to 10000 milliseconds, not", num);
	in->slow_cpu = n;
	in->slow_ms = (uint32_t)ms;
	return 0;
}

/* inject=hpet-stuck|hpet-strays|hlt-vintr-erratum|tsc-adjust:CPU:CYCLES|tsc-warp:CPU:CYCLES|
 * tsc-slow:CPU:MS|reset-from:fadt|cf9|kbc|efi (struct tv_inject). */
static int parse_inject(struct cfg_ctx *x, struct tv_inject *in, char *val)
{
	static const char *const reset_from[] = { "fadt", "cf9", "kbc", "efi" };

	if (!strncmp(val, "reset-from:", 11)) {
		int i = lookup(reset_from, ARRAY_SIZE(reset_from), val + 11);

		if (i < 0)
			return cfg_error(x, "inject=reset-from: takes fadt, cf9, kbc or efi, not",
					 val + 11);
		in->reset_from = (uint8_t)i;
		return 0;
	}
	if (!strcmp(val, "hpet-stuck")) {
		in->hpet_stuck = true;
		return 0;
	}
	if (!strcmp(val, "hpet-strays")) {
		in->hpet_strays = true;
		return 0;
	}
	if (!strcmp(val, "hlt-vintr-erratum")) {
		in->hlt_vintr_erratum = true;
		return 0;
	}
	if (!strncmp(val, "tsc-adjust:", 11))
		return parse_inject_tsc(x, val + 11, &in->adjust_cpu, &in->adjust);
	if (!strncmp(val, "tsc-warp:", 9))
		return parse_inject_tsc(x, val + 9, &in->warp_cpu, &in->warp);
	if (!strncmp(val, "tsc-slow:", 9))
		return parse_inject_slow(x, val + 9, in);
	return cfg_error(x, "inject must be hpet-stuck, hpet-strays, hlt-vintr-erratum, "
			 "tsc-adjust:CPU:CYCLES, tsc-warp:CPU:CYCLES, tsc-slow:CPU:MS or "
			 "reset-from:METHOD, not", val);
}

static int parse_global(struct cfg_ctx *x, struct tv_config *c, char *tok)
{
	char *val;
	int r;

	if (split_kv(x, tok, &val))
		return -1;
	if (!strcmp(tok, "log"))
		return parse_log(x, &c->log_level, &c->trace_mask, val);
	if (!strcmp(tok, "inject"))
		return parse_inject(x, &c->inject, val);
	if ((r = parse_option(x, &c->opts, tok, val)) <= 0)
		return r;
	return cfg_error(x, "unknown option", tok);
}

static int parse_line(struct cfg_ctx *x, struct tv_config *c, char *line)
{
	char *tok[CONFIG_MAX_TOKENS];
	unsigned ntok;

	if (tokenize(x, line, tok, &ntok))
		return -1;
	if (!ntok)
		return 0;
	if (!strcmp(tok[0], "guest"))
		return parse_guest(x, c, tok, ntok);
	for (unsigned i = 0; i < ntok; i++)
		if (parse_global(x, c, tok[i]))
			return -1;
	return 0;
}

int config_parse(struct tv_config *c, const char *text, size_t len,
		 const char *fname, char *err, size_t errlen)
{
	struct cfg_ctx x = { .fname = fname, .err = err, .errlen = errlen };
	char line[CONFIG_LINE_MAX];
	size_t pos = 0;

	while (pos < len) {
		size_t n = 0;

		x.line++;
		while (pos < len && text[pos] != '\n') {
			if (!text[pos])
				return cfg_error(&x, "NUL byte in config file", NULL);
			if (text[pos] == '\r' && (pos + 1 == len || text[pos + 1] == '\n')) {
				pos++;          /* CRLF: the CR is not part of the line */
				continue;
			}
			if (n == sizeof(line) - 1)
				return cfg_error(&x, "line longer than 1023 characters", NULL);
			line[n++] = text[pos++];
		}
		pos++;
		line[n] = 0;
		if (parse_line(&x, c, line))
			return -1;
	}
	return 0;
}

int config_parse_load_options(struct tv_options *o, enum log_level *lvl, uint32_t *trace,
			      bool *lvl_set, const char *line, char *cfg_path,
			      size_t cfg_path_len, char *err, size_t errlen)
{
	struct cfg_ctx x = { .fname = "load options", .line = 1, .err = err, .errlen = errlen };
	char buf[CONFIG_LINE_MAX], *tok[CONFIG_MAX_TOKENS], *val;
	unsigned ntok;
	int r;

	if (strlcpy(buf, line, sizeof(buf)) >= sizeof(buf))
		return cfg_error(&x, "load options longer than 1023 characters", NULL);
	if (tokenize(&x, buf, tok, &ntok))
		return -1;
	for (unsigned i = 0; i < ntok; i++) {
		if (i == 0 && !strchr(tok[i], '='))
			continue;           /* the image path passed by the shell */
		if (split_kv(&x, tok[i], &val))
			return -1;
		if (!strcmp(tok[i], "config")) {
			if (copy_nonempty(&x, cfg_path, cfg_path_len, val, "path too long:",
					  "empty config path"))
				return -1;
		} else if (!strcmp(tok[i], "log")) {
			if (parse_log(&x, lvl, trace, val))
				return -1;
			*lvl_set = true;
		} else if ((r = parse_option(&x, o, tok[i], val)) != 0) {
			return r < 0 ? -1 : cfg_error(&x, "unknown option", tok[i]);
		}
	}
	return 0;
}

static void options_overlay(struct tv_options *dst, const struct tv_options *src)
{
	if (src->set & OPT_SET_TIMER)
		dst->timer = src->timer;
	if (src->set & OPT_SET_ADVANCE) {
		dst->advance = src->advance;
		dst->advance_ns = src->advance_ns;
	}
	if (src->set & OPT_SET_APICV)
		dst->apicv = src->apicv;
	if (src->set & OPT_SET_HLT)
		dst->hlt = src->hlt;
	if (src->set & OPT_SET_MIN_PERIOD)
		dst->min_period_us = src->min_period_us;
	if (src->set & OPT_SET_LATE)
		dst->late_us = src->late_us;
	if (src->set & OPT_SET_MMIO)
		dst->mmio_strict = src->mmio_strict;
	if (src->set & OPT_SET_X2APIC)
		dst->x2apic = src->x2apic;
	if (src->set & OPT_SET_HOUSEKEEPING)
		dst->housekeeping = src->housekeeping;
	if (src->set & OPT_SET_IF0_QUIRKS)
		dst->if0_quirks = src->if0_quirks;
	if (src->set & OPT_SET_END)
		dst->end = src->end;
	if (src->set & OPT_SET_CONSOLE)
		dst->console = src->console;
	if (src->set & OPT_SET_SERIAL) {
		dst->serial = src->serial;
		dst->serial_uart = src->serial_uart;
		dst->serial_baud = src->serial_baud;
	}
	dst->set |= src->set;
}

void config_resolve(struct tv_config *c, const struct tv_options *load_opts,
		    enum log_level lvl, uint32_t trace, bool lvl_set)
{
	if (load_opts)
		options_overlay(&c->opts, load_opts);
	if (lvl_set) {
		c->log_level = lvl;
		c->trace_mask = trace;
	}
	for (uint32_t i = 0; i < c->nguests; i++) {
		struct tv_options guest = c->guests[i].opts;

		c->guests[i].opts = c->opts;
		options_overlay(&c->guests[i].opts, &guest);
	}
}
