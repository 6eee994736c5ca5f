/* SPDX-License-Identifier: GPL-2.0-or-later */
/* prefetchd config: the settings as prefetchd reads them, for the shell scripts and units (one parser for
 * everyone, lib/config.h), one of them, or a check of a configuration file. */
#include "commands.h"
#include "config.h"
#include "error.h"
#include "log.h"
#include "note.h"
#include "usage_error.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

/* Room for the longest value: TRACE_MOUNTS with every path at its longest. */
#define VALUE_MAX (PF_CONFIG_MAX_MOUNTS * 256)

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: prefetchd config [--config FILE]\n"
		"       prefetchd config --get KEY [--config FILE]\n"
		"       prefetchd config --check [FILE]\n"
		"\n"
		"Print the effective settings (the defaults, overridden by the configuration file) as prefetchd and\n"
		"prefetch-reorder read them: one KEY=value line per setting, quoted so that a POSIX shell can\n"
		"  eval \"$(prefetchd config)\"\n"
		"Numbers are decimal, booleans 0 or 1, PREFETCH_MEDIUM auto|rotational|slow-flash|fast-flash,\n"
		"TRACE_MOUNTS the paths separated by spaces (empty: every local filesystem).  Bad lines of the file\n"
		"are warned about on stderr and ignored (see prefetch(5) for the syntax).\n"
		"\n"
		"  --config FILE   configuration (default " PF_DEFAULT_CONFIG "; a missing default file = defaults)\n"
		"  --get KEY       print only the value of KEY, unquoted, on one line\n"
		"  --check [FILE]  check FILE (default the --config file, else " PF_DEFAULT_CONFIG "): print each\n"
		"                  bad line as FILE:LINE: reason, and a warning for each reorder-only key changed\n"
		"                  while ENABLE_FILE_REORDERING=0 (it has no effect), then a summary line\n"
		"\n"
		"Exit status: 0; with --check 0 when the file is clean, 1 when a line is bad; 1 when the file cannot be\n"
		"read (a missing default file is not an error, except for --check); 2 on usage errors or an unknown\n"
		"KEY.\n");
}

/* A value as one sh word that evaluates to exactly it: bare when it holds only characters no shell treats
 * specially, else in single quotes (a ' inside written as '\''). */
static void print_shell_word(const char *v)
{
	if (*v && strspn(v, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_/.,:+=@%-") == strlen(v)) {
		fputs(v, stdout);
		return;
	}
	putchar('\'');
	for (; *v; v++) {
		if (*v == '\'')
			fputs("'\\''", stdout);
		else
			putchar(*v);
	}
	putchar('\'');
}

/* The keys only prefetch-reorder reads: without ENABLE_FILE_REORDERING=1 nothing reads them. */
static const char *const reorder_only[] = { "CHUNK_SIZE_BLOCKS", "REORDER_TIME_BUDGET", "REORDER_FREE_RESERVE_PERCENT",
					    "REORDER_MIN_GAIN_PERCENT", "REORDER_ERASE_BLOCK_KB", "REORDER_WRITE_BUDGET_MB",
					    "REORDER_MAKE_ROOM" };

/* One warning per reorder-only key changed from its default while reordering is off; returns how many. */
static int warn_reorder_only(const char *path, const struct pf_config *cfg)
{
	if (cfg->enable_reordering)
		return 0;
	struct pf_config def;
	pf_config_defaults(&def);
	int n = 0;
	for (size_t i = 0; i < sizeof(reorder_only) / sizeof(reorder_only[0]); i++) {
		char v[64], d[64];
		if (pf_config_get(cfg, reorder_only[i], v, sizeof(v)) || pf_config_get(&def, reorder_only[i], d, sizeof(d)) ||
		    !strcmp(v, d))
			continue;
		printf("%s: warning: %s=%s has no effect: it acts only with ENABLE_FILE_REORDERING=1 (now 0)\n", path,
		       reorder_only[i], v);
		n++;
	}
	return n;
}

static int check(const char *path)
{
	struct pf_config cfg;
	char kept[PF_CONFIG_WARNINGS_SIZE];
	struct pf_note warnings = pf_note_into(kept, sizeof(kept));
	pf_config_defaults(&cfg);
	int rc = pf_config_load(&cfg, path, &warnings);
	if (rc) {
		pf_err("cannot read %s: %s", path, pf_strerror(rc));
		return PF_EXIT_FAILURE;
	}
	if (warnings.kept)
		printf("%s\n", kept);
	if (warnings.lines > warnings.kept)
		printf("%s: %u more problems not shown\n", path, warnings.lines - warnings.kept);
	int warned = warn_reorder_only(path, &cfg);
	if (warnings.lines)
		printf("%s: %u bad line%s\n", path, warnings.lines, warnings.lines == 1 ? "" : "s");
	else
		printf("%s: OK%s\n", path, warned ? " (but for the warnings above)" : "");
	return warnings.lines ? PF_EXIT_FAILURE : PF_EXIT_OK;
}

int cmd_config(int argc, char **argv)
{
	static const struct option opts[] = { { "config", required_argument, NULL, 'c' },
					       { "get", required_argument, NULL, 'g' },
					       { "check", no_argument, NULL, 'C' },
					       { "help", no_argument, NULL, 'h' },
					       { NULL, 0, NULL, 0 } };
	const char *config = NULL, *get = NULL;
	int checking = 0, c;
	optind = 1;
	opterr = 0; /* one message of our own */
	while ((c = getopt_long(argc, argv, ":c:h", opts, NULL)) != -1) {
		switch (c) {
		case 'c': config = optarg; break;
		case 'g': get = optarg; break;
		case 'C': checking = 1; break;
		case 'h': usage(stdout); return PF_EXIT_OK;
		default: return pf_usage_bad_option(c, argv);
		}
	}
	if (checking && get)
		return pf_usage_error("--check and --get do not go together");
	if (checking && optind < argc) {
		if (config || optind + 1 < argc)
			return pf_usage_error("--check takes one FILE");
		config = argv[optind++];
	}
	if (optind != argc)
		return pf_usage_error("unexpected argument '%s'", argv[optind]);
	if (checking)
		return check(config ? config : pf_config_default_path());

	static char value[VALUE_MAX];
	struct pf_config cfg;
	if (get && pf_config_get(&cfg, get, value, sizeof(value)) == -ENOENT) {
		pf_err("unknown key '%s'", get);
		return PF_EXIT_USAGE;
	}
	int rc = pf_config_read(&cfg, config);
	if (rc) {
		pf_err("cannot read %s: %s", config ? config : pf_config_default_path(), pf_strerror(rc));
		return PF_EXIT_FAILURE;
	}
	if (get) {
		pf_config_get(&cfg, get, value, sizeof(value));
		printf("%s\n", value);
	} else {
		const char *key;
		for (size_t i = 0; (key = pf_config_key_name(i)); i++) {
			pf_config_get(&cfg, key, value, sizeof(value));
			printf("%s=", key);
			print_shell_word(value);
			putchar('\n');
		}
	}
	if (fflush(stdout) != 0 || ferror(stdout)) {
		pf_err("writing the settings failed");
		return PF_EXIT_FAILURE;
	}
	return PF_EXIT_OK;
}
