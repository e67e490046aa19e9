// SPDX-License-Identifier: BSD-2-Clause
/*
 * The screen for the console after ExitBootServices: the GOP's current
 * mode, saved while the protocol can still be asked (UEFI spec, "Graphics
 * Output Protocol"). Only a linear 32 bpp framebuffer in one of the two
 * byte orders is drawn on; anything else is reported and left alone.
 */
#include "boot/efi.h"

static EFI_GUID gop_guid = EFI_GRAPHICS_OUTPUT_PROTOCOL_GUID;

/* The 32-bit masks of PixelBitMask that are the two fixed orders. */
static uint32_t bitmask_format(const EFI_PIXEL_BITMASK *m)
{
	if (m->RedMask == 0xff0000u && m->GreenMask == 0xff00u && m->BlueMask == 0xffu)
		return FB_BGRX8888;
	if (m->RedMask == 0xffu && m->GreenMask == 0xff00u && m->BlueMask == 0xff0000u)
		return FB_RGBX8888;
	return FB_NONE;
}

const char *efi_gop_screen(struct fb_info *fb)
{
	EFI_GRAPHICS_OUTPUT_PROTOCOL *gop;
	EFI_GRAPHICS_OUTPUT_MODE_INFORMATION *info;

	*fb = (struct fb_info){ .format = FB_NONE };
	if (EFI_ERROR(BS->LocateProtocol(&gop_guid, NULL, (void **)&gop)) || !gop->Mode ||
	    !gop->Mode->Info)
		return "no graphics output (GOP)";
	info = gop->Mode->Info;
	switch (info->PixelFormat) {
	case PixelBlueGreenRedReserved8BitPerColor:
		fb->format = FB_BGRX8888;
		break;
	case PixelRedGreenBlueReserved8BitPerColor:
		fb->format = FB_RGBX8888;
		break;
	case PixelBitMask:
		fb->format = bitmask_format(&info->PixelInformation);
		if (fb->format == FB_NONE)
			return "the GOP mode's pixels are not 32 bpp RGB or BGR";
		break;
	default:
		return "the GOP mode has no framebuffer (BltOnly)";
	}
	fb->base = gop->Mode->FrameBufferBase;
	fb->size = gop->Mode->FrameBufferSize;
	fb->width = info->HorizontalResolution;
	fb->height = info->VerticalResolution;
	fb->stride = info->PixelsPerScanLine;
	if (!fb->base) {
		fb->format = FB_NONE;
		return "the GOP mode has no framebuffer address";
	}
	return NULL;
}
