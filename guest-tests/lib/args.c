// SPDX-License-Identifier: BSD-2-Clause
/* Command line → argv, and key=value lookup. */
#include "lib/setup.h"
#include "lib/string.h"

static char cmdline_copy[CMDLINE_MAX];
static char *argv_buf[ARGS_MAX + 1];    /* NULL-terminated, as C wants */

int guest_argc;
char **guest_argv = argv_buf;

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* Splits a private copy in place; words past ARGS_MAX are dropped. */
void args_init(const char *cmdline)
{
	size_t n = strnlen(cmdline, CMDLINE_MAX - 1);
	char *p = cmdline_copy;

	memcpy(cmdline_copy, cmdline, n);
	cmdline_copy[n] = '\0';
	guest_argc = 0;
	while (guest_argc < (int)ARGS_MAX) {
		while (is_blank(*p))
			*p++ = '\0';
		if (!*p)
			break;
		argv_buf[guest_argc++] = p;
		while (*p && !is_blank(*p))
			p++;
	}
	argv_buf[guest_argc] = NULL;
}

/* The last occurrence wins, so appended words override earlier ones. */
const char *arg_get(const char *key)
{
	size_t len = strlen(key);
	const char *val = NULL;

	for (int i = 0; i < guest_argc; i++)
		if (!strncmp(guest_argv[i], key, len) && guest_argv[i][len] == '=')
			val = guest_argv[i] + len + 1;
	return val;
}

unsigned long arg_get_ulong(const char *key, unsigned long def)
{
	const char *v = arg_get(key);

	return v ? strtoul(v, NULL, 0) : def;
}
