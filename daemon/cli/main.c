/* SPDX-License-Identifier: GPL-2.0-or-later */
/* prefetchd: trace a boot, aggregate traces into a layout, replay a layout into the page cache. */
#include "commands.h"
#include "log.h"
#include "usage_error.h"

#include <stdio.h>
#include <string.h>

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: prefetchd COMMAND [OPTIONS]\n"
		"\n"
		"Boot-time file prefetcher.\n"
		"\n"
		"Commands:\n"
		"  trace --output FILE [--mount DIR]... [--timeout SEC] [--pid-file FILE]\n"
		"                          trace file accesses until SIGTERM/SIGINT, --timeout or 'prefetchd stop'\n"
		"  aggregate --output LAYOUT TRACE...\n"
		"                          merge traces (oldest first) into a layout\n"
		"  replay LAYOUT           prefetch a layout into the page cache and exit\n"
		"  dump FILE               print a trace or layout as text with a summary\n"
		"  boot [--config FILE]    boot mode: replay the layout, trace this boot, store the trace and\n"
		"                          re-aggregate the next layout when tracing stops\n"
		"  stop [--pid-file FILE]  tell a running tracer to finish and wait for it\n"
		"  report [--config FILE]  boot-time table of the recorded boots\n"
		"  status [--config FILE]  is prefetch on, what the last boot got, the self-check's decision\n"
		"  config [--get KEY | --check [FILE]] [--config FILE]\n"
		"                          print the effective settings (shell-evaluable), one of them, or check a\n"
		"                          configuration file\n"
		"\n"
		"Options: --help, --version.  'prefetchd COMMAND --help' describes a command.\n"
		"Configuration: " "/etc/default/prefetch" " (see prefetch(5)).\n");
}

int main(int argc, char **argv)
{
	pf_log_init("prefetchd", PF_LOG_NOTICE);
	if (argc < 2)
		return pf_usage_error("no command given");
	const char *cmd = argv[1];
	if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
		usage(stdout);
		return PF_EXIT_OK;
	}
	if (!strcmp(cmd, "--version") || !strcmp(cmd, "-V")) {
		printf("prefetchd %s\n", PREFETCH_VERSION);
		return PF_EXIT_OK;
	}
	static const struct {
		const char *name;
		int (*fn)(int, char **);
	} cmds[] = {
		{ "trace", cmd_trace }, { "aggregate", cmd_aggregate }, { "replay", cmd_replay }, { "dump", cmd_dump },
		{ "boot", cmd_boot },   { "stop", cmd_stop },           { "report", cmd_report },
		{ "config", cmd_config }, { "status", cmd_status },
	};
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(cmd, cmds[i].name)) {
			/* every message from here on names the subcommand: "prefetchd: stop: ..." */
			pf_log_set_command(cmds[i].name);
			return cmds[i].fn(argc - 1, argv + 1);
		}
	return pf_usage_error("unknown command '%s'", cmd);
}
