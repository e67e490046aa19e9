// SPDX-License-Identifier: BSD-2-Clause
/*
 * UEFI entry: gather what only the firmware can tell (files on the ESP,
 * load options, CPUs, ACPI RSDP, memory map), leave boot services and
 * hand a struct boot_info to vmm_main() on a stack of our own.
 */
#include <stdarg.h>
#include "boot/config.h"
#include "boot/efi.h"
#include "drivers/fmt.h"
#include "drivers/string.h"
#include "vmm/host/log.h"
#include "vmm/host/power.h"
#include "vmx/caps.h"
#include "version.h"        /* generated: TV_GIT_REV */

#define DEFAULT_CFG_PATH   "\\EFI\\tickvisor\\tickvisor.cfg"
#define BSP_STACK_PAGES    16u
#define MMAP_SLACK_DESCS   16u
#define FAIL_WAIT_100NS    (60ull * 10 * 1000 * 1000)     /* 60 s */

EFI_SYSTEM_TABLE *ST;
EFI_BOOT_SERVICES *BS;
EFI_RUNTIME_SERVICES *RT;
EFI_GUID efi_loaded_image_guid = EFI_LOADED_IMAGE_PROTOCOL_GUID;

static void console_write(const char *s, size_t n)
{
	CHAR16 buf[128];
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		if (s[i] == '\n')
			buf[k++] = L'\r';
		buf[k++] = (CHAR16)(unsigned char)s[i];
		if (k >= ARRAY_SIZE(buf) - 2 || i == n - 1) {
			buf[k] = 0;
			ST->ConOut->OutputString(ST->ConOut, buf);
			k = 0;
		}
	}
}

const char *efi_status_str(EFI_STATUS st)
{
	switch (st) {
	case EFI_SUCCESS:           return "success";
	case EFI_NOT_FOUND:         return "file not found";
	case EFI_INVALID_PARAMETER: return "invalid parameter";
	case EFI_OUT_OF_RESOURCES:  return "out of memory";
	case EFI_DEVICE_ERROR:      return "device error";
	case EFI_VOLUME_CORRUPTED:  return "volume corrupted";
	case EFI_ACCESS_DENIED:     return "access denied";
	case EFI_UNSUPPORTED:       return "unsupported";
	case EFI_END_OF_FILE:       return "short read";
	default:                    return "EFI error";
	}
}

void efi_shutdown(int status)
{
	RT->ResetSystem(EfiResetShutdown, status ? EFI_ABORTED : EFI_SUCCESS, 0, NULL);
}

void efi_reset(void)
{
	RT->ResetSystem(EfiResetCold, EFI_SUCCESS, 0, NULL);
}

/* end= as far as it is known (load options, then the config file). */
static enum end_mode efi_end = END_AUTO;

/* A key on the firmware's console, or 60 s: the reader of an error on a
 * real machine's screen gets the time to read it. */
static void efi_wait_key(void)
{
	EFI_EVENT ev[2] = { ST->ConIn ? ST->ConIn->WaitForKey : NULL, NULL };
	EFI_INPUT_KEY key;
	UINTN which;

	pr_info("press a key to power off (or wait 60 s)");
	if (EFI_ERROR(BS->CreateEvent(EVT_TIMER, 0, NULL, NULL, &ev[1])) ||
	    EFI_ERROR(BS->SetTimer(ev[1], TimerRelative, FAIL_WAIT_100NS)))
		return;
	if (ev[0])
		BS->WaitForEvent(2, ev, &which);
	else
		BS->WaitForEvent(1, &ev[1], &which);
	if (ev[0])
		(void)ST->ConIn->ReadKeyStroke(ST->ConIn, &key);
	BS->CloseEvent(ev[1]);
}

/* Before ExitBootServices every refusal ends here, while the firmware's
 * console still shows it. */
static __noreturn void efi_end_run(int status)
{
	const char *why;
	enum end_mode m = power_end_mode(efi_end, &why);

	pr_err("final status %d", status);
	if (m == END_HALT) {
		pr_info("end=halt: stopped; reset the machine by hand");
		for (;;)
			__asm__ volatile("cli; hlt");
	}
	if (m == END_WAIT)
		efi_wait_key();
	if (m == END_RESET)
		efi_reset();
	efi_shutdown(status);
	for (;;)
		__asm__ volatile("cli; hlt");
}

__noreturn void efi_fail(const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	fmt_vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	pr_err("error: %s", msg);
	efi_end_run(1);
}

/*
 * VMX usable at all (CPUID, IA32_FEATURE_CONTROL, EPT, unrestricted guest)?
 * Asked here, before ExitBootServices, so that a PC with VT-x off in its
 * firmware says so on its screen. A machine that will wait for a key
 * (end=auto on a real PC, end=wait) stops here; one that powers off
 * (an emulator) goes on to discover and report the platform and refuses
 * after it (vmm/host/platform.c), so those paths run under QEMU TCG too.
 */
static void efi_check_vmx(struct boot_info *bi)
{
	struct vmx_caps c;
	const char *why;

	if (vmx_probe(&c)) {
		bi->feature_control_locked = c.locked_by_us;
		return;
	}
	pr_err("error: VMX unavailable: %s", c.unusable);
	if (power_end_mode(efi_end, &why) == END_WAIT)
		efi_end_run(1);
	bi->vmx_unusable = c.unusable;
}

bool efi_load_options(EFI_HANDLE image, char *buf, size_t len, size_t *raw_size)
{
	EFI_LOADED_IMAGE *li;
	const CHAR16 *w;
	size_t n, i;

	buf[0] = 0;
	*raw_size = 0;
	if (EFI_ERROR(BS->HandleProtocol(image, &efi_loaded_image_guid, (void **)&li)) ||
	    !li->LoadOptions || !li->LoadOptionsSize)
		return false;
	*raw_size = li->LoadOptionsSize;
	if (li->LoadOptionsSize % 2)
		return false;
	w = li->LoadOptions;
	n = li->LoadOptionsSize / 2;
	for (i = 0; i < n && w[i]; i++) {
		if (i == len - 1 || w[i] > 0x7e || (w[i] < 0x20 && w[i] != '\t'))
			return false;
		buf[i] = (char)w[i];
	}
	buf[i] = 0;
	return true;
}

static void read_config(EFI_HANDLE image, struct boot_info *bi)
{
	struct tv_options load_opts = { 0 };
	enum log_level lvl = LOG_INFO;
	uint32_t trace = 0;
	bool lvl_set = false;
	char opts[1024], err[CONFIG_ERR_LEN];
	size_t raw;
	void *text;
	UINT64 size;
	EFI_STATUS st;

	config_defaults(&bi->cfg);
	strlcpy(bi->cfg_path, DEFAULT_CFG_PATH, sizeof(bi->cfg_path));
	if (efi_load_options(image, opts, sizeof(opts), &raw)) {
		if (opts[0])
			pr_info("load options: %s", opts);
		if (config_parse_load_options(&load_opts, &lvl, &trace, &lvl_set, opts,
					      bi->cfg_path, sizeof(bi->cfg_path), err, sizeof(err)))
			efi_fail("%s", err);
		efi_end = load_opts.end;
	} else if (raw) {
		pr_info("ignoring %zu bytes of non-text load options", raw);
	}
	st = efi_read_file(image, bi->cfg_path, &text, &size);
	if (EFI_ERROR(st))
		efi_fail("cannot read config file %s: %s", bi->cfg_path, efi_status_str(st));
	if (config_parse(&bi->cfg, text, size, bi->cfg_path, err, sizeof(err)))
		efi_fail("%s", err);
	config_resolve(&bi->cfg, &load_opts, lvl, trace, lvl_set);
	efi_end = bi->cfg.opts.end;
	log_level = bi->cfg.log_level;
	trace_mask = bi->cfg.trace_mask;
}

/* Guest paths are relative to the config file's folder unless absolute;
 * the result uses '\' throughout, as UEFI does. */
static void resolve_path(const struct boot_info *bi, const char *p, char *out, size_t n)
{
	const char *dir_end = bi->cfg_path;

	for (const char *c = bi->cfg_path; *c; c++)
		if (*c == '/' || *c == '\\')
			dir_end = c + 1;
	if (p[0] == '/' || p[0] == '\\')
		dir_end = bi->cfg_path;
	fmt_snprintf(out, n, "%.*s%s", (int)(dir_end - bi->cfg_path), bi->cfg_path, p);
	for (char *c = out; *c; c++)
		if (*c == '/')
			*c = '\\';
}

static void load_one(EFI_HANDLE image, const struct boot_info *bi, const struct guest_spec *g,
		     const char *p, const void **data, uint64_t *size)
{
	char path[2 * TV_PATH_LEN];
	EFI_STATUS st;
	void *d;
	UINT64 sz;

	resolve_path(bi, p, path, sizeof(path));
	st = efi_read_file(image, path, &d, &sz);
	if (EFI_ERROR(st))
		efi_fail("%s:%u: guest %s: cannot read %s: %s", bi->cfg_path, g->cfg_line,
			 g->name, path, efi_status_str(st));
	*data = d;
	*size = sz;
}

static void load_guests(EFI_HANDLE image, struct boot_info *bi)
{
	for (uint32_t i = 0; i < bi->cfg.nguests; i++) {
		struct guest_spec *g = &bi->cfg.guests[i];

		load_one(image, bi, g, g->path, &g->image, &g->image_size);
		for (uint32_t m = 0; m < g->nmodules; m++)
			load_one(image, bi, g, g->modules[m].path, &g->modules[m].data,
				 &g->modules[m].size);
		if (g->vcpus > bi->ncpus)
			efi_fail("%s:%u: guest %s wants vcpus=%u but this machine has %u CPU%s",
				 bi->cfg_path, g->cfg_line, g->name, g->vcpus, bi->ncpus,
				 bi->ncpus == 1 ? "" : "s");
	}
}

static enum mem_type efi_mem_type(UINT32 t)
{
	switch (t) {
	case EfiConventionalMemory:     return MEM_USABLE;
	case EfiBootServicesCode:
	case EfiBootServicesData:       return MEM_BOOT_SERVICES;
	case EfiLoaderCode:
	case EfiLoaderData:             return MEM_LOADER;
	case EfiRuntimeServicesCode:
	case EfiRuntimeServicesData:    return MEM_RUNTIME;
	case EfiACPIReclaimMemory:
	case EfiACPIMemoryNVS:          return MEM_ACPI;
	case EfiMemoryMappedIO:
	case EfiMemoryMappedIOPortSpace: return MEM_MMIO;
	default:                        return MEM_RESERVED;
	}
}

bool efi_range_is_ram(uint64_t base, uint64_t size)
{
	UINTN msize = 0, key, dsize = 0;
	UINT32 ver;
	void *map = NULL;
	bool ram = false;

	BS->GetMemoryMap(&msize, NULL, &key, &dsize, &ver);
	msize += MMAP_SLACK_DESCS * dsize;
	if (!dsize || EFI_ERROR(BS->AllocatePool(EfiLoaderData, msize, &map)))
		efi_fail("cannot read the UEFI memory map");
	if (EFI_ERROR(BS->GetMemoryMap(&msize, map, &key, &dsize, &ver)))
		efi_fail("cannot read the UEFI memory map");
	for (UINTN off = 0; off < msize; off += dsize) {
		const EFI_MEMORY_DESCRIPTOR *d = (const void *)((char *)map + off);
		uint64_t end = d->PhysicalStart + d->NumberOfPages * EFI_PAGE_SIZE;

		if (mem_type_is_ram(efi_mem_type(d->Type)) && d->PhysicalStart < base + size &&
		    base < end)
			ram = true;
	}
	BS->FreePool(map);
	return ram;
}

/* After EBS: rewrite the descriptors in place as struct mem_range (no
 * allocation is possible any more; mem_range is smaller than a descriptor). */
static void convert_map(struct boot_info *bi, void *map, UINTN map_size, UINTN desc_size)
{
	struct mem_range *out = map;
	uint32_t n = 0;

	for (UINTN off = 0; off < map_size; off += desc_size) {
		EFI_MEMORY_DESCRIPTOR d = *(EFI_MEMORY_DESCRIPTOR *)((char *)map + off);
		out[n++] = (struct mem_range){ d.PhysicalStart, d.NumberOfPages * EFI_PAGE_SIZE,
					      efi_mem_type(d.Type) };
	}
	bi->mem = out;
	bi->nmem = n;
}

static void exit_boot_services(EFI_HANDLE image, struct boot_info *bi)
{
	UINTN size = 0, key, desc_size, cap;
	UINT32 desc_ver;
	void *map = NULL;
	EFI_STATUS st;

	st = BS->GetMemoryMap(&size, NULL, &key, &desc_size, &desc_ver);
	cap = size + MMAP_SLACK_DESCS * desc_size;
	if (EFI_ERROR(BS->AllocatePool(EfiLoaderData, cap, &map)))
		efi_fail("cannot allocate memory map buffer");
	log_set_console(NULL);  /* ConOut is gone after a successful EBS */
	log_set_serial(true);
	for (int tries = 0; tries < 8; tries++) {
		size = cap;
		st = BS->GetMemoryMap(&size, map, &key, &desc_size, &desc_ver);
		if (EFI_ERROR(st))
			break;
		/* A stale key (the map changed under us) is the one expected
		 * failure: take the map again and retry. */
		st = BS->ExitBootServices(image, key);
		if (st == EFI_SUCCESS) {
			convert_map(bi, map, size, desc_size);
			return;
		}
	}
	efi_fail("ExitBootServices failed: %s", efi_status_str(st));
}

/* Switches to a stack we own (the firmware's lives in boot-services RAM
 * that vmm/ reuses) and never returns. */
static __noreturn void handoff(struct boot_info *bi, uint64_t stack_top)
{
	__asm__ volatile("mov %0, %%rsp\n\t"
			 "xor %%ebp, %%ebp\n\t"
			 "call vmm_main\n\t"
			 "ud2" : : "r"(stack_top), "D"(bi) : "memory");
	__builtin_unreachable();
}

static uint64_t alloc_pages(UINTN pages)
{
	EFI_PHYSICAL_ADDRESS a;

	if (EFI_ERROR(BS->AllocatePages(AllocateAnyPages, EfiLoaderData, pages, &a)))
		efi_fail("out of memory allocating %lu pages", (unsigned long)pages);
	return a;
}

static void record_image(EFI_HANDLE image, struct boot_info *bi)
{
	EFI_LOADED_IMAGE *li;

	if (!EFI_ERROR(BS->HandleProtocol(image, &efi_loaded_image_guid, (void **)&li))) {
		bi->image_base = (uint64_t)li->ImageBase;
		bi->image_size = li->ImageSize;
	}
}

EFI_STATUS efi_main(EFI_HANDLE image, EFI_SYSTEM_TABLE *systab)
{
	struct boot_info *bi;
	uint64_t stack;

	ST = systab;
	BS = systab->BootServices;
	RT = systab->RuntimeServices;
	/* COM1 until the configuration names another port; where nothing
	 * answers at 0x3f8 (most laptops) the log is on the screen alone. */
	efi_serial_early();
	log_set_console(console_write);
	log_set_serial(!efi_serial_fw_writes());
	BS->SetWatchdogTimer(0, 0, 0, NULL);
	pr_info("tickvisor %s (git %s), BSD-2-Clause", TV_VERSION, TV_GIT_REV);

	bi = (struct boot_info *)alloc_pages(EFI_SIZE_TO_PAGES(sizeof(*bi)));
	memset(bi, 0, sizeof(*bi));
	bi->efi_shutdown = efi_shutdown;
	bi->efi_reset = efi_reset;
	record_image(image, bi);
	/* Offsets from it name tickvisor's code: addr2line -e
	 * build/tickvisor.so, scripts/bochs-trace.py --host-base. */
	pr_info("image at %#lx, %lu KiB", (unsigned long)bi->image_base,
		(unsigned long)(bi->image_size >> 10));
	efi_enum_cpus(bi);
	read_config(image, bi);
	bi->rsdp = efi_find_rsdp();
	efi_serial_apply(&bi->cfg.opts, bi->rsdp);
	load_guests(image, bi);
	efi_check_vmx(bi);
	bi->screen_none = efi_gop_screen(&bi->screen);
	stack = alloc_pages(BSP_STACK_PAGES);
	exit_boot_services(image, bi);
	handoff(bi, stack + BSP_STACK_PAGES * EFI_PAGE_SIZE);
}
