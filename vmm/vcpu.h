/* SPDX-License-Identifier: BSD-2-Clause */
/* Guests and their vCPUs. vCPU n of a guest runs on physical CPU n, or
 * on the n-th CPU of its cpus= list. */
#ifndef VMM_VCPU_H
#define VMM_VCPU_H

#include "vmm/host/options.h"
#include "lapic/vlapic.h"
#include "timer/advance.h"
#include "timer/host.h"
#include "vmm/host/spinlock.h"
#include "vmm/dev/dev_rtc.h"
#include "vmm/dev/dev_uart.h"
#include "vmx/ept.h"
#include "vmx/vmx_exit.h"
#include "vmx/regs.h"

/* Statuses tickvisor gives a guest it ends (a guest's own debug-exit
 * status is whatever it wrote to port 0xf4). */
enum guest_status {
	GUEST_STATUS_POWER_OFF    = 0,    /* the guest powered itself off (vmm/dev/dev_power.h) */
	GUEST_STATUS_RESET        = 249,  /* the guest asked for a reset: nothing restarts it */
	GUEST_STATUS_KILLED       = 250,  /* unhandled exit, bad state, bad request */
	GUEST_STATUS_TRIPLE_FAULT = 251,
	GUEST_STATUS_BAD_ACCESS   = 252,  /* access outside RAM and devices */
	GUEST_STATUS_ENTRY_FAIL   = 253,  /* VM entry failed */
	GUEST_STATUS_HUNG         = 254,  /* halted forever, or over its time limit */
	GUEST_STATUS_LOAD_FAIL    = 255,  /* could not be loaded or created */
};

struct guest;
struct housekeeper;

struct vcpu_stats {
	uint64_t exits[VMX_EXIT_NR];
	uint64_t io_unhandled;          /* port accesses nobody emulates */
	uint64_t unassigned_reads;      /* loads from unassigned memory (all ones) */
	uint64_t unassigned_writes;     /* stores to it (dropped) */
};

struct vcpu {
	struct guest_regs regs;         /* saved by vmx/entry.asm */
	struct guest *guest;
	uint32_t id;                    /* vCPU index = initial APIC ID */
	uint32_t cpu;                   /* index of the physical CPU that runs it */
	void *vmcs;                     /* 4 KiB VMCS region */
	struct vlapic *lapic;
	struct vmx_exit exit;           /* information of the current exit */
	uint64_t cached_intr_state;     /* guest interruptibility, when intr_state_valid */
	bool intr_state_valid;          /* ... read (or written) since the last exit */
	/* The four flags each of which sends the exit fast path's entry the
	 * slow way (vmm/exit/exit_fast.c), read there as one word. */
	union {
		struct {
			bool kicked;            /* vcpu_kick() since the last pre-entry work */
			bool timer_dirty;       /* timer target moved: re-arm the backend */
			bool injecting;         /* VM-entry interruption info set since the exit */
			bool hlt_managed;       /* hlt_guest where HLT exiting follows what is pending */
		};
		uint32_t entry_slow;
	};
	uint8_t *msr_bitmap;            /* per vCPU: its APIC mode shapes the x2APIC range */
	uint64_t apic_mapped_base;      /* xAPIC base published to the shared EPT, ~0: none */
	uint32_t ept_gen_seen;          /* guest's ept_gen at this vCPU's last INVEPT */
	bool apic_mode_dirty;           /* APIC mode/base changed: vapic_mode_sync() */
	enum timer_kind timer_kind;     /* backend serving this vCPU's APIC timer */
	/* vcpu_timer_before_entry()'s variant for that backend and the
	 * trace mask, chosen once (vmm/apic/vcpu_timer.c) */
	void (*timer_before_entry)(struct vcpu *v);
	/* The paths that reach an expiry differ in cost, so each has its
	 * own advance: `advance` for a running vCPU (backend fires, VM exit),
	 * one per timer mode (a periodic expiry re-arms its backend, a
	 * one-shot or TSC-deadline one does not, and the first tick of a
	 * periodic timer went out with the advance the other modes had
	 * taught: issue 24.3); `advance_halt` for one halted in root mode
	 * (host timer wakes it). */
	struct timer_advance advance[VTIMER_MODES];
	struct timer_advance advance_halt;
	struct timer_advance *advance_seen;     /* the one the pending entry wait tunes */
	bool halt_wake;                 /* vcpu_timer_block returned for the timer */
	bool timer_exit;                /* the last exit was the backend firing */
	uint64_t entry_tsc;             /* measured: end of the entry wait -> guest */
	uint64_t exit_tsc;              /* measured: guest instruction -> the stub's exit TSC */
	uint64_t spin_target;           /* the entry wait to observe for auto advance */
	uint64_t observe_start;         /* TSC as vcpu_timer_spin_observe() began, 0: none */
	uint64_t observe_cost;          /* from there to the stub's wait, the last time */
	uint64_t preempt_at;            /* host TSC the preemption timer is armed for */
	uint32_t notices;               /* rate limit for guest-caused notices */
	bool wait_sipi;                 /* after INIT: waiting for a SIPI, not entered */
	uint64_t init_cd_nw;            /* CR0.CD/NW an INIT keeps (power-up: both set) */
	bool intr_dirty;                /* IRR/ISR changed by tickvisor: resync RVI/SVI */
	struct pi_desc *pi;             /* posted-interrupt descriptor, or NULL */
	bool pi_on;                     /* posted-interrupt processing enabled now */
	bool pi_notified;               /* a notification arrived in root mode */
	uint64_t cr0_mask, cr4_mask;    /* guest/host masks written to the VMCS */
	uint32_t cached_pin_ctls;       /* pin-based controls (vcpu_set_ctl) */
	uint32_t cached_entry_ctls;     /* VM-entry controls (IA-32e mode bit) */
	uint32_t cached_proc_ctls;      /* primary processor-based controls */
	bool lma_by_hw;                 /* VM exits save EFER.LMA in IA-32e mode guest */
	uint64_t tsc_offset;            /* guest TSC = host TSC + tsc_offset (VMCS copy) */
	uint64_t tsc_adjust;            /* IA32_TSC_ADJUST as the guest sees it */
	uint64_t misc_enable;           /* IA32_MISC_ENABLE as the guest sees it */
	uint64_t xcr0;                  /* guest XCR0, loaded only while it runs */
	struct vcpu_stats stats;
	bool cached_x2apic;             /* opts.x2apic, read on every APIC MSR access */
	bool stop_poll_armed;           /* the last slow entry armed the stop poll (set: vcpu_timer.c, read: exit_fast.c) */
	bool cached_vid_guard;          /* the erratum, and other vCPUs or a host-interrupt backend (vapic.h) */
	bool cached_if0_check;          /* an entry asks RFLAGS.IF: the guard or the stop poll (exit_fast.c) */
	bool vid_if0_erratum;           /* this CPU delivers virtual interrupts with IF=0 (vcpu_calib.c) */
	bool kick_if0_erratum;          /* entered with IF=0, this CPU ignores a kick (vcpu_calib.c) */
	bool hlt_if0_erratum;           /* halted in the guest with IF=0, this CPU ignores a kick (vcpu_calib.c) */
	bool pi_empty_erratum;          /* a notification with PIR empty delivers vector 0xff (vcpu_calib.c) */
	bool hlt_vintr_erratum;         /* a pending virtual interrupt does not end a guest HLT (vcpu_calib.c) */
	bool hlt_guest;                 /* HLT stays in non-root mode: hlt=guest, unless posted timers need it out */
	bool cached_stop_poll;          /* IF=0 entries arm the stop poll (vcpu_timer.c) */
	bool cached_stop_poll_any_if;   /* and IF=1 entries too: hlt=guest on a CPU with hlt_if0_erratum */
};

/* Port-I/O device state of a guest (the models in vmm/dev/). */
struct guest_devices {
	struct dev_uart uart;           /* COM1 */
	struct dev_rtc rtc;             /* CMOS clock and RAM (0x70/0x71) */
	uint32_t pci_addr;              /* last value written to 0xcf8 */
	uint8_t reset_control;          /* 0xcf9: SYS_RST, FULL_RST */
	uint8_t acpi_sleep_status;      /* SLEEP_STATUS_REG: WAK_STS */
	uint8_t kbc_pending;            /* 8042: command awaiting its data byte, 0: none */
	bool kbc_last_data;             /* 8042: the last write went to 0x60, not 0x64 */
	uint16_t fwcfg_key;             /* fw_cfg selector */
	uint32_t fwcfg_off;             /* read offset within the item */
	struct spinlock lock;           /* vCPUs share these devices */
};

struct guest {
	const struct guest_spec *spec;
	uint8_t *ram;                   /* host address of guest-physical 0 */
	uint64_t ram_size;
	struct ept ept;
	uint64_t eptp;
	uint32_t nvcpus;
	struct vcpu *vcpus[TV_MAX_CPUS];
	struct vlapic_group lapics;     /* IPI routing between the vCPUs */
	bool apicv;                     /* APIC virtualization in use */
	void *apic_access_page;         /* APICv: what EPT maps at the APIC base */
	struct guest_devices dev;
	struct spinlock lock;           /* guards ended/status */
	struct spinlock ept_lock;       /* EPT changes after start (APIC page) */
	uint64_t apic_access_gpa;       /* APICv: where EPT maps apic_access_page, ~0: nowhere */
	uint32_t ept_gen;               /* bumped by every EPT change after start */
	uint32_t ept_pages_ram;         /* EPT table pages once RAM was mapped */
	uint32_t entry, mbi;            /* Multiboot entry point and boot info */
	bool boot_linux;                /* a bzImage: entry is startup_32, mbi boot_params */
	uint32_t linux_gdt;             /* ... and the GDT the loader wrote for it */
	bool ended;
	int status;
	uint64_t deadline_tsc;          /* time limit, 0: none */
	struct housekeeper *hk;         /* timer=posted: posts its vCPUs' expiries, or NULL */
	enum hlt_policy hlt;            /* hlt= as it applies (housekeeper_plan) */
	uint32_t unassigned_logged;     /* unassigned accesses logged (rate limit) */
};

#endif
