/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Boot options: what tickvisor.cfg and the UEFI load options can set,
 * globally or per guest. Plain data, shared by boot/ (which parses it)
 * and vmm/ (which obeys it).
 */
#ifndef VMM_HOST_OPTIONS_H
#define VMM_HOST_OPTIONS_H

#include "drivers/base.h"
#include "drivers/serial.h"         /* struct serial_uart */
#include "timer/timer_opts.h"       /* enum timer_backend_sel, advance_mode */

#define TV_MAX_GUESTS   128u
#define TV_MAX_MODULES  8u
#define TV_NAME_LEN     32u
#define TV_PATH_LEN     128u
#define TV_CMDLINE_LEN  512u

enum hlt_policy {
	HLT_EXIT,               /* HLT exits; the CPU sleeps on a host timer */
	HLT_GUEST,              /* HLT stays in non-root mode, preemption timer armed */
};

/* How a run ends (end=): after the last guest, and after an error that
 * stops tickvisor before any guest runs. */
enum end_mode {
	END_AUTO,               /* poweroff in an emulator or VM, wait on a real PC */
	END_POWEROFF,           /* power off at once */
	END_HALT,               /* stop with the summary on the consoles */
	END_WAIT,               /* show the summary, power off after a key */
	END_RESET,              /* reset the machine (drivers/reset.h's order) */
};

/* Where the log goes after ExitBootServices (console=); before it, the
 * firmware's console shows it too. */
enum console_sel {
	CONSOLE_AUTO,           /* every console found: the serial port and the screen */
	CONSOLE_SERIAL,         /* the serial port only */
	CONSOLE_SCREEN,         /* the screen only */
	CONSOLE_BOTH,           /* both, and say so where one is missing */
};

/* Which UART the log and the guests' COM1 bytes go to (serial=). */
enum serial_sel {
	SERIAL_AUTO,            /* ACPI SPCR's 16550, else COM1 if a UART answers, else none */
	SERIAL_NONE,            /* no serial output after the configuration is read */
	SERIAL_UART,            /* the 16550 serial_uart names (I/O port or MMIO) */
};

enum log_level {
	LOG_ERROR,
	LOG_WARN,
	LOG_INFO,
	LOG_DEBUG,
	LOG_TRACE,
};

/* Trace points by subsystem, bits of tv_config.trace_mask: log=trace
 * enables them all, log=trace:timer,ipi,exit,late the ones named. */
enum trace_subsys {
	TRACE_TIMER,            /* guest timer armed, expired, injected */
	TRACE_IPI,              /* IPIs sent and delivered */
	TRACE_EXIT,             /* every VM exit */
	TRACE_LATE,             /* a guest timer expiry later than late_us */
	TRACE_NR,
};

#define TRACE_ALL ((uint32_t)BIT(TRACE_NR) - 1)

/* "timer", "ipi", "exit", "late": the spelling in log=trace:..., indexed by enum
 * trace_subsys (vmm/host/options.c). */
extern const char *const trace_names[TRACE_NR];

/* Options that a guest line may override; `set` marks which were given. */
struct tv_options {
	enum timer_backend_sel timer;
	enum advance_mode advance;
	uint32_t advance_ns;            /* for ADVANCE_FIXED; start value for AUTO */
	bool apicv;                     /* use APIC virtualization when present */
	enum hlt_policy hlt;
	uint32_t min_period_us;         /* minimum periodic LAPIC timer period */
	bool mmio_strict;               /* unassigned memory ends the guest (252) */
	bool x2apic;                    /* offer x2APIC mode (CPUID.1:ECX[21]) */
	int32_t housekeeping;           /* CPU posting timer expiries, HOUSEKEEPING_AUTO */
	bool if0_quirks;                /* IF=0 window and stop poll on every CPU, not only where probed */
	uint32_t late_us;               /* log=trace:late names expiries later than this */
	enum end_mode end;              /* global only: how the run ends */
	enum console_sel console;       /* global only: where the log goes */
	enum serial_sel serial;         /* global only: which serial port */
	struct serial_uart serial_uart; /* SERIAL_UART's 16550 */
	uint32_t serial_baud;           /* SERIAL_UART's baud rate; 0: as the firmware set it */
	uint32_t set;                   /* OPT_SET_* bits */
};

#define OPT_SET_TIMER       BIT(0)
#define OPT_SET_ADVANCE     BIT(1)
#define OPT_SET_APICV       BIT(2)
#define OPT_SET_HLT         BIT(3)
#define OPT_SET_MIN_PERIOD  BIT(4)
#define OPT_SET_MMIO        BIT(5)
#define OPT_SET_X2APIC      BIT(6)
#define OPT_SET_HOUSEKEEPING BIT(7)
#define OPT_SET_IF0_QUIRKS  BIT(8)
#define OPT_SET_END         BIT(9)
#define OPT_SET_CONSOLE     BIT(10)
#define OPT_SET_SERIAL      BIT(11)
#define OPT_SET_LATE        BIT(12)
#define OPT_SET_ALL         BITS(12, 0)     /* every bit above (fuzz_config's invariant) */

/* housekeeping=auto: the lowest CPU that runs none of the guest's vCPUs. */
#define HOUSEKEEPING_AUTO   (-1)

struct guest_module {
	char path[TV_PATH_LEN];         /* as written in the config */
	const void *data;               /* loaded by boot/ */
	uint64_t size;
};

struct guest_spec {
	char name[TV_NAME_LEN];
	char path[TV_PATH_LEN];         /* kernel image, as written in the config */
	char cmdline[TV_CMDLINE_LEN];
	uint64_t mem_bytes;
	uint32_t vcpus;
	uint32_t ncpus_listed;          /* cpus=LIST given: = vcpus; 0: vCPU n on CPU n */
	uint8_t cpus[TV_MAX_CPUS];      /* cpus=LIST: the physical CPU of each vCPU */
	uint32_t timeout_s;             /* guest-time limit in seconds, 0: none */
	uint32_t nmodules;
	struct guest_module modules[TV_MAX_MODULES];
	const void *image;              /* loaded by boot/ */
	uint64_t image_size;
	struct tv_options opts;         /* effective options once resolved */
	unsigned cfg_line;              /* where it was defined, for messages */
};

/*
 * inject= (global; for tickvisor's own tests, docs/usage.md): a fault a
 * firmware or chipset may leave, put in place before tickvisor looks, so
 * that the code that must notice it runs on an emulator that has none.
 */
struct tv_inject {
	bool hpet_stuck;                /* HPET main counter left halted */
	bool hpet_strays;               /* the HPET vector without its comparator's status */
	bool hlt_vintr_erratum;         /* probe 5 answers "erratum" on every CPU */
	int32_t adjust_cpu;             /* IA32_TSC_ADJUST = adjust there first; -1: none */
	int64_t adjust;
	int32_t warp_cpu;               /* ... after tickvisor's check; -1: none */
	int64_t warp;
	int32_t slow_cpu;               /* waits slow_ms before its warp-test turns; -1: none */
	uint32_t slow_ms;
	uint8_t reset_from;             /* enum reset_method end=reset starts with */
};

struct tv_config {
	struct tv_options opts;         /* global options */
	struct tv_inject inject;
	enum log_level log_level;
	uint32_t trace_mask;            /* BIT(TRACE_*) traced, with LOG_TRACE only */
	uint32_t nguests;
	struct guest_spec guests[TV_MAX_GUESTS];
};

#define GUEST_MEM_DEFAULT   (128ull << 20)
#define GUEST_MEM_MIN       (2ull << 20)
#define GUEST_MEM_MAX       (3ull << 30)
#define MIN_PERIOD_US_DEFAULT 200u
#define LATE_US_DEFAULT     100u
#define ADVANCE_NS_MAX      1000000u
#define GUEST_TIMEOUT_MAX_S 86400u

#endif
