// SPDX-License-Identifier: BSD-2-Clause
#include "drivers/fmt.h"

struct fmt_out {
	char *buf;
	size_t size;
	size_t len;     /* characters produced so far, written or not */
};

struct fmt_spec {
	bool left, zero, alt, plus, space;
	bool ptr;       /* %p: "0x" even for a null pointer */
	int width;
	int prec;       /* -1: none */
	int lenmod;     /* 0 int, 1 long, 2 long long, -1 short, -2 char, 3 size_t */
};

static void out_c(struct fmt_out *o, char c)
{
	if (o->len + 1 < o->size)
		o->buf[o->len] = c;
	o->len++;
}

static void out_pad(struct fmt_out *o, char c, int n)
{
	while (n-- > 0)
		out_c(o, c);
}

static void out_str(struct fmt_out *o, const struct fmt_spec *s, const char *str)
{
	int n = 0;

	if (!str)
		str = "(null)";
	while (str[n] && (s->prec < 0 || n < s->prec))
		n++;
	if (!s->left)
		out_pad(o, ' ', s->width - n);
	for (int i = 0; i < n; i++)
		out_c(o, str[i]);
	if (s->left)
		out_pad(o, ' ', s->width - n);
}

static void out_num(struct fmt_out *o, const struct fmt_spec *s, uint64_t v,
		    bool neg, unsigned base, bool upper)
{
	const char *digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
	char tmp[24];
	const char *prefix = "";
	bool is_zero = !v;
	int n = 0, plen, zeros, pad;

	if (v || s->prec != 0) {        /* C99: 0 at precision 0 has no digits */
		do {
			tmp[n++] = digits[v % base];
			v /= base;
		} while (v);
	}
	if (neg)
		prefix = "-";
	else if (s->plus)
		prefix = "+";
	else if (s->space)
		prefix = " ";
	else if (s->alt && base == 16 && (!is_zero || s->ptr))
		prefix = upper ? "0X" : "0x";
	else if (s->alt && base == 8 && s->prec <= n && (!n || tmp[n - 1] != '0'))
		prefix = "0";           /* only if no other leading zero */
	plen = (int)__builtin_strlen(prefix);
	zeros = s->prec > n ? s->prec - n : 0;
	if (s->zero && !s->left && s->prec < 0 && s->width > plen + n)
		zeros = s->width - plen - n;
	pad = s->width - plen - zeros - n;
	if (!s->left)
		out_pad(o, ' ', pad);
	while (*prefix)
		out_c(o, *prefix++);
	out_pad(o, '0', zeros);
	for (int i = n; i > 0; i--)
		out_c(o, tmp[i - 1]);
	if (s->left)
		out_pad(o, ' ', pad);
}

static const char *parse_spec(const char *f, struct fmt_spec *s, va_list *ap)
{
	*s = (struct fmt_spec){ .prec = -1 };
	for (;; f++) {
		if (*f == '-') s->left = true;
		else if (*f == '0') s->zero = true;
		else if (*f == '#') s->alt = true;
		else if (*f == '+') s->plus = true;
		else if (*f == ' ') s->space = true;
		else break;
	}
	if (*f == '*') {
		s->width = va_arg(*ap, int);
		if (s->width < 0) {
			s->left = true;
			s->width = -s->width;
		}
		f++;
	}
	while (*f >= '0' && *f <= '9')
		s->width = s->width * 10 + (*f++ - '0');
	if (*f == '.') {
		f++;
		s->prec = 0;
		if (*f == '*') {
			s->prec = va_arg(*ap, int);
			f++;
		}
		while (*f >= '0' && *f <= '9')
			s->prec = s->prec * 10 + (*f++ - '0');
	}
	for (;; f++) {
		if (*f == 'l') s->lenmod = s->lenmod == 1 ? 2 : 1;
		else if (*f == 'h') s->lenmod = s->lenmod == -1 ? -2 : -1;
		else if (*f == 'z') s->lenmod = 3;
		else break;
	}
	return f;
}

static uint64_t arg_unsigned(const struct fmt_spec *s, va_list *ap)
{
	switch (s->lenmod) {
	case 1: return va_arg(*ap, unsigned long);
	case 2: return va_arg(*ap, unsigned long long);
	case 3: return va_arg(*ap, size_t);
	case -1: return (unsigned short)va_arg(*ap, unsigned int);
	case -2: return (unsigned char)va_arg(*ap, unsigned int);
	default: return va_arg(*ap, unsigned int);
	}
}

static int64_t arg_signed(const struct fmt_spec *s, va_list *ap)
{
	switch (s->lenmod) {
	case 1: return va_arg(*ap, long);
	case 2: return va_arg(*ap, long long);
	case 3: return (int64_t)va_arg(*ap, size_t);
	case -1: return (short)va_arg(*ap, int);
	case -2: return (signed char)va_arg(*ap, int);
	default: return va_arg(*ap, int);
	}
}

static void convert(struct fmt_out *o, struct fmt_spec *s, char conv, va_list *ap)
{
	int64_t sv;

	if (conv != 'd' && conv != 'i')
		s->plus = s->space = false;     /* they apply to signed conversions */
	switch (conv) {
	case 'd':
	case 'i':
		sv = arg_signed(s, ap);
		out_num(o, s, sv < 0 ? -(uint64_t)sv : (uint64_t)sv, sv < 0, 10, false);
		break;
	case 'u': out_num(o, s, arg_unsigned(s, ap), false, 10, false); break;
	case 'x': out_num(o, s, arg_unsigned(s, ap), false, 16, false); break;
	case 'X': out_num(o, s, arg_unsigned(s, ap), false, 16, true); break;
	case 'o': out_num(o, s, arg_unsigned(s, ap), false, 8, false); break;
	case 'p':
		s->alt = s->ptr = true;
		out_num(o, s, (uintptr_t)va_arg(*ap, void *), false, 16, false);
		break;
	case 's': out_str(o, s, va_arg(*ap, const char *)); break;
	case 'c':
		out_pad(o, ' ', s->left ? 0 : s->width - 1);
		out_c(o, (char)va_arg(*ap, int));
		out_pad(o, ' ', s->left ? s->width - 1 : 0);
		break;
	case '%': out_c(o, '%'); break;
	default:  /* unknown conversion: print it verbatim */
		out_c(o, '%');
		out_c(o, conv);
		break;
	}
}

int fmt_vsnprintf(char *buf, size_t size, const char *fmt, va_list ap)
{
	struct fmt_out o = { .buf = buf, .size = size };
	struct fmt_spec s;
	va_list aq;

	va_copy(aq, ap);
	while (*fmt) {
		if (*fmt != '%') {
			out_c(&o, *fmt++);
			continue;
		}
		fmt = parse_spec(fmt + 1, &s, &aq);
		if (!*fmt)
			break;
		convert(&o, &s, *fmt++, &aq);
	}
	va_end(aq);
	if (size)
		buf[o.len < size ? o.len : size - 1] = 0;
	return (int)o.len;
}

int fmt_snprintf(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = fmt_vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	return n;
}

int fmt_err(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fmt_vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	return -1;
}
