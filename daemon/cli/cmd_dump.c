/* SPDX-License-Identifier: GPL-2.0-or-later */
/* prefetchd dump [--files] FILE: a trace or layout as text. */
#include "commands.h"
#include "dump.h"
#include "format.h"
#include "layout_origin.h"
#include "log.h"
#include "usage_error.h"

#include <getopt.h>
#include <stdio.h>

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: prefetchd dump [--files] FILE\n"
		"\n"
		"Print a trace or layout as text: one extent a line, tab-separated:\n"
		"  path  offset  length  order  physical\n"
		"(order = index in the extent array = access order; physical = filesystem block, '-' if unknown),\n"
		"then summary lines starting with '# ': kind, created, boots, flags, filesystems, files, dirs, bytes,\n"
		"extents, estimated seeks (in access order and sorted by physical block), and for a layout that\n"
		"prefetch-image installed (FILE.origin beside it) where it came from.  Files without extents\n"
		"(metadata only) appear in the --files listing only.\n"
		"\n"
		"  --files   list the files instead of the extents: order, flags (d dir, x exec, m metadata only),\n"
		"            size, inode, first touch (ms), boots, fs index, path\n"
		"\n"
		"Exit status: 0, 1 if the file cannot be read or is not a valid trace/layout, 2 on usage errors.\n");
}

int cmd_dump(int argc, char **argv)
{
	static const struct option opts[] = { { "files", no_argument, NULL, 'f' },
					       { "help", no_argument, NULL, 'h' },
					       { NULL, 0, NULL, 0 } };
	int files = 0, c;
	optind = 1;
	opterr = 0; /* one message of our own */
	while ((c = getopt_long(argc, argv, ":fh", opts, NULL)) != -1) {
		switch (c) {
		case 'f': files = 1; break;
		case 'h': usage(stdout); return PF_EXIT_OK;
		default: return pf_usage_bad_option(c, argv);
		}
	}
	if (optind != argc - 1)
		return pf_usage_error(optind == argc ? "no FILE given" : "want exactly one FILE argument");
	const char *path = argv[optind];
	struct pf_image *img;
	int rc = pf_image_load(path, 0, 0, &img);
	if (rc) {
		pf_err("%s: %s", path, pf_strerror(rc));
		return PF_EXIT_FAILURE;
	}
	if (files)
		pf_dump_files(stdout, img);
	else
		pf_dump_extents(stdout, img);
	pf_dump_summary(stdout, img);
	struct pf_layout_origin origin;
	char line[400];
	if (img->kind == PF_KIND_LAYOUT && pf_layout_origin_load(path, &origin) == 0) {
		pf_layout_origin_line(&origin, img->created, line, sizeof(line));
		printf("# origin: %s\n", line);
	}
	pf_image_free(img);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		pf_err("writing the dump failed");
		return PF_EXIT_FAILURE;
	}
	return PF_EXIT_OK;
}
