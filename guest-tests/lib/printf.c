// SPDX-License-Identifier: BSD-2-Clause
/* printf family over one formatter with pluggable output. */
#include "lib/printf.h"
#include "lib/percpu.h"
#include "lib/serial.h"
#include "lib/spinlock.h"
#include "lib/string.h"

struct fmt_out {
	void (*put)(struct fmt_out *o, char c);
	char *buf;                      /* vsnprintf: destination */
	size_t size;
	size_t count;                   /* characters produced so far */
};

struct fmt_spec {
	bool left, zero, alt, plus, space;
	int width;
	int prec;                       /* -1: none */
	int len;                        /* -2 hh, -1 h, 0 int, 1 long, 2 long long */
};

static void emit(struct fmt_out *o, char c)
{
	o->put(o, c);
	o->count++;
}

static void emit_repeat(struct fmt_out *o, char c, int n)
{
	while (n-- > 0)
		emit(o, c);
}

static void emit_str(struct fmt_out *o, const char *s, const struct fmt_spec *sp)
{
	int n;

	if (!s)
		s = "(null)";
	n = (int)strnlen(s, sp->prec < 0 ? (size_t)-1 : (size_t)sp->prec);
	if (!sp->left)
		emit_repeat(o, ' ', sp->width - n);
	for (int i = 0; i < n; i++)
		emit(o, s[i]);
	if (sp->left)
		emit_repeat(o, ' ', sp->width - n);
}

/* Lays out [sign/0x][zeros][digits] in the field, padded left or right. */
static void emit_num(struct fmt_out *o, uint64_t v, bool neg, unsigned base, bool upper,
		     const char *prefix, const struct fmt_spec *sp)
{
	const char *digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
	char tmp[24];
	int n = 0, zeros, plen, pad;

	do {
		tmp[n++] = digits[v % base];
		v /= base;
	} while (v);
	if (sp->prec == 0 && n == 1 && tmp[0] == '0')
		n = 0;
	if (neg)
		prefix = "-";
	plen = (int)strlen(prefix);
	zeros = sp->prec > n ? sp->prec - n : 0;
	if (sp->zero && !sp->left && sp->prec < 0 && sp->width > plen + n)
		zeros = sp->width - plen - n;
	pad = sp->width - plen - zeros - n;
	if (!sp->left)
		emit_repeat(o, ' ', pad);
	for (int i = 0; i < plen; i++)
		emit(o, prefix[i]);
	emit_repeat(o, '0', zeros);
	while (n)
		emit(o, tmp[--n]);
	if (sp->left)
		emit_repeat(o, ' ', pad);
}

static const char *parse_spec(const char *f, struct fmt_spec *sp, va_list *ap)
{
	*sp = (struct fmt_spec){ .prec = -1 };
	for (;; f++) {
		if (*f == '-')
			sp->left = true;
		else if (*f == '0')
			sp->zero = true;
		else if (*f == '#')
			sp->alt = true;
		else if (*f == '+')
			sp->plus = true;
		else if (*f == ' ')
			sp->space = true;
		else
			break;
	}
	if (*f == '*') {
		sp->width = va_arg(*ap, int);
		if (sp->width < 0) {
			sp->left = true;
			sp->width = -sp->width;
		}
		f++;
	}
	for (; *f >= '0' && *f <= '9'; f++)
		sp->width = sp->width * 10 + (*f - '0');
	if (*f == '.') {
		sp->prec = 0;
		if (*++f == '*') {
			sp->prec = va_arg(*ap, int);
			f++;
		}
		for (; *f >= '0' && *f <= '9'; f++)
			sp->prec = sp->prec * 10 + (*f - '0');
	}
	for (;; f++) {
		if (*f == 'h')
			sp->len--;
		else if (*f == 'l')
			sp->len++;
		else if (*f == 'z' || *f == 't' || *f == 'j')
			sp->len = 1;
		else
			return f;
	}
}

static uint64_t arg_unsigned(const struct fmt_spec *sp, va_list *ap)
{
	if (sp->len >= 1)
		return va_arg(*ap, unsigned long long);
	if (sp->len == -1)
		return (unsigned short)va_arg(*ap, unsigned int);
	if (sp->len <= -2)
		return (unsigned char)va_arg(*ap, unsigned int);
	return va_arg(*ap, unsigned int);
}

static int64_t arg_signed(const struct fmt_spec *sp, va_list *ap)
{
	if (sp->len >= 1)
		return va_arg(*ap, long long);
	if (sp->len == -1)
		return (short)va_arg(*ap, int);
	if (sp->len <= -2)
		return (signed char)va_arg(*ap, int);
	return va_arg(*ap, int);
}

static void emit_conv(struct fmt_out *o, char conv, const struct fmt_spec *sp, va_list *ap)
{
	struct fmt_spec cs;
	int64_t sv;
	uint64_t uv;
	char c;

	switch (conv) {
	case 'd':
	case 'i':
		sv = arg_signed(sp, ap);
		uv = sv < 0 ? -(uint64_t)sv : (uint64_t)sv;
		emit_num(o, uv, sv < 0, 10, false, sp->plus ? "+" : sp->space ? " " : "", sp);
		break;
	case 'u':
		emit_num(o, arg_unsigned(sp, ap), false, 10, false, "", sp);
		break;
	case 'o':
		emit_num(o, arg_unsigned(sp, ap), false, 8, false, sp->alt ? "0" : "", sp);
		break;
	case 'x':
	case 'X':
		uv = arg_unsigned(sp, ap);
		emit_num(o, uv, false, 16, conv == 'X', sp->alt && uv ? (conv == 'X' ? "0X" : "0x") : "", sp);
		break;
	case 'p':
		emit_num(o, (uintptr_t)va_arg(*ap, void *), false, 16, false, "0x", sp);
		break;
	case 's':
		emit_str(o, va_arg(*ap, const char *), sp);
		break;
	case 'c':
		c = (char)va_arg(*ap, int);
		cs = (struct fmt_spec){ .left = sp->left, .width = sp->width, .prec = 1 };
		emit_str(o, (char[2]){ c, '\0' }, &cs);
		break;
	default:                        /* %% and unknown conversions print as is */
		emit(o, conv);
		break;
	}
}

static int vformat(struct fmt_out *o, const char *fmt, va_list ap)
{
	struct fmt_spec sp;
	va_list aq;

	va_copy(aq, ap);
	for (; *fmt; fmt++) {
		if (*fmt != '%') {
			emit(o, *fmt);
			continue;
		}
		fmt = parse_spec(fmt + 1, &sp, &aq);
		if (!*fmt)
			break;
		emit_conv(o, *fmt, &sp, &aq);
	}
	va_end(aq);
	return (int)o->count;
}

static void put_buf(struct fmt_out *o, char c)
{
	if (o->count + 1 < o->size)
		o->buf[o->count] = c;
}

int vsnprintf(char *buf, size_t size, const char *fmt, va_list ap)
{
	struct fmt_out o = { .put = put_buf, .buf = buf, .size = size };
	int n = vformat(&o, fmt, ap);

	if (size)
		buf[o.count < size ? o.count : size - 1] = '\0';
	return n;
}

int snprintf(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	return n;
}

/* --- console ---------------------------------------------------------- */

static struct spinlock console_lk;
static int console_owner = -1;          /* APIC ID of the holder */
static unsigned console_depth;          /* times the holder took it */

void console_lock(void)
{
	int me = (int)smp_id();

	if (READ_ONCE(console_owner) == me) {
		console_depth++;
		return;
	}
	spin_lock(&console_lk);
	WRITE_ONCE(console_owner, me);
	console_depth = 1;
}

void console_unlock(void)
{
	if (--console_depth)
		return;
	WRITE_ONCE(console_owner, -1);
	spin_unlock(&console_lk);
}

static void put_console(struct fmt_out *o, char c)
{
	(void)o;
	serial_putc(c);
}

int vprintf(const char *fmt, va_list ap)
{
	struct fmt_out o = { .put = put_console };
	int n;

	console_lock();
	n = vformat(&o, fmt, ap);
	console_unlock();
	return n;
}

int printf(const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vprintf(fmt, ap);
	va_end(ap);
	return n;
}

int putchar(int c)
{
	console_lock();
	serial_putc((char)c);
	console_unlock();
	return (unsigned char)c;
}

int puts(const char *s)
{
	console_lock();
	while (*s)
		serial_putc(*s++);
	serial_putc('\n');
	console_unlock();
	return 0;
}
