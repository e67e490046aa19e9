// SPDX-License-Identifier: BSD-2-Clause
/*
 * exit_status: exits with the status given as status=N (default 0), so
 * the harness can check that a guest's status reaches it through the
 * debug-exit port.
 */
#include "lib/guest.h"

int main(int argc, char **argv)
{
	const char *arg = arg_get("status");
	int status = arg ? atoi(arg) : 0;

	(void)argc;
	(void)argv;
	report_prefix_push("exit_status");
	/* The harness checks the status; the guest, that status=N reached it. */
	report(arg != NULL, "status=%s on the command line: exiting with %d", arg ? arg : "(none)",
	       status);
	exit(status);
}
