#include "fsid.h"

#include <blkid.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = tolower(c);
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

int pf_uuid_parse(const char *s, uint8_t out[16])
{
	int n = 0;
	for (const char *p = s; *p; p++) {
		if (*p == '-')
			continue;
		int hi = hexval(p[0]), lo = p[1] ? hexval(p[1]) : -1;
		if (hi < 0 || lo < 0 || n >= 16)
			return -EINVAL;
		out[n++] = (uint8_t)(hi << 4 | lo);
		p++;
	}
	return n == 16 ? 0 : -EINVAL;
}

void pf_uuid_format(const uint8_t u[16], char out[37])
{
	snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1], u[2],
		 u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
}

int pf_fsid_from_name(const char *name, struct pf_fsid *out)
{
	memset(out, 0, sizeof(*out));
	snprintf(out->devname, sizeof(out->devname), "%s", name);
	struct stat st;
	if (stat(name, &st) < 0)
		return -errno;
	if (S_ISBLK(st.st_mode))
		out->devno = st.st_rdev;

	/* A direct probe, not the blkid cache: the cache can be stale for a device made a moment ago. */
	blkid_probe pr = blkid_new_probe_from_filename(name);
	if (!pr)
		return errno ? -errno : -EIO;
	blkid_probe_enable_superblocks(pr, 1);
	blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_UUID | BLKID_SUBLKS_TYPE);
	int rc = -ENODATA;
	const char *val;
	if (blkid_do_safeprobe(pr) == 0) {
		if (blkid_probe_lookup_value(pr, "TYPE", &val, NULL) == 0)
			snprintf(out->type, sizeof(out->type), "%s", val);
		if (blkid_probe_lookup_value(pr, "UUID", &val, NULL) == 0 && pf_uuid_parse(val, out->uuid) == 0)
			rc = 0;
	}
	blkid_free_probe(pr);
	return rc;
}

int pf_fsid_from_devno(dev_t devno, struct pf_fsid *out)
{
	char *name = blkid_devno_to_devname(devno);
	if (!name) {
		memset(out, 0, sizeof(*out));
		out->devno = devno;
		return -ENODEV; /* not a block device: tmpfs, overlay, nfs, ... */
	}
	int rc = pf_fsid_from_name(name, out);
	out->devno = devno;
	free(name);
	return rc;
}
