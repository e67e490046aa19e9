// SPDX-License-Identifier: BSD-2-Clause
/* File loading from the ESP tickvisor itself was loaded from. */
#include "boot/efi.h"
#include "drivers/string.h"

#define EFI_PATH_MAX 256

static EFI_GUID fs_guid = EFI_SIMPLE_FILE_SYSTEM_PROTOCOL_GUID;
static EFI_GUID file_info_guid = EFI_FILE_INFO_ID;
static EFI_FILE_HANDLE efi_root;

static EFI_STATUS open_root(EFI_HANDLE image)
{
	EFI_LOADED_IMAGE *li;
	EFI_FILE_IO_INTERFACE *fs;
	EFI_STATUS st;

	if (efi_root)
		return EFI_SUCCESS;
	st = BS->HandleProtocol(image, &efi_loaded_image_guid, (void **)&li);
	if (EFI_ERROR(st))
		return st;
	st = BS->HandleProtocol(li->DeviceHandle, &fs_guid, (void **)&fs);
	if (EFI_ERROR(st))
		return st;
	return fs->OpenVolume(fs, &efi_root);
}

static void to_efi_path(const char *path, CHAR16 *out, size_t n)
{
	size_t i = 0;

	for (; path[i] && i < n - 1; i++)
		out[i] = path[i] == '/' ? L'\\' : (CHAR16)path[i];
	out[i] = 0;
}

static EFI_STATUS file_size(EFI_FILE_HANDLE fh, UINT64 *size)
{
	UINT8 buf[sizeof(EFI_FILE_INFO) + EFI_PATH_MAX * sizeof(CHAR16)] __aligned(8);
	UINTN len = sizeof(buf);
	EFI_STATUS st = fh->GetInfo(fh, &file_info_guid, &len, buf);

	if (!EFI_ERROR(st)) {
		EFI_FILE_INFO *fi = (EFI_FILE_INFO *)buf;
		if (fi->Attribute & EFI_FILE_DIRECTORY)
			return EFI_NOT_FOUND;
		*size = fi->FileSize;
	}
	return st;
}

EFI_STATUS efi_read_file(EFI_HANDLE image, const char *path, void **data, UINT64 *size)
{
	CHAR16 wpath[EFI_PATH_MAX];
	EFI_FILE_HANDLE fh;
	EFI_PHYSICAL_ADDRESS pages;
	EFI_STATUS st;
	UINTN len;

	if ((st = open_root(image)) != EFI_SUCCESS)
		return st;
	to_efi_path(path, wpath, EFI_PATH_MAX);
	st = efi_root->Open(efi_root, &fh, wpath, EFI_FILE_MODE_READ, 0);
	if (EFI_ERROR(st))
		return st;
	st = file_size(fh, size);
	if (!EFI_ERROR(st))
		st = BS->AllocatePages(AllocateAnyPages, EfiLoaderData,
				       EFI_SIZE_TO_PAGES(*size + 1), &pages);
	if (!EFI_ERROR(st)) {
		len = *size;
		st = fh->Read(fh, &len, (void *)pages);
		if (!EFI_ERROR(st) && len != *size)
			st = EFI_END_OF_FILE;
		((char *)pages)[*size] = 0;     /* text files end in NUL */
		*data = (void *)pages;
	}
	fh->Close(fh);
	return st;
}
