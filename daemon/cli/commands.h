/* SPDX-License-Identifier: GPL-2.0-or-later */
/* prefetchd subcommands: main.c dispatches, each cmd_*.c parses its own options and does one job. */
#ifndef PREFETCH_COMMANDS_H
#define PREFETCH_COMMANDS_H

/* Exit codes shared by all subcommands. */
#define PF_EXIT_OK 0
#define PF_EXIT_FAILURE 1   /* the job could not be done (message says why) */
#define PF_EXIT_USAGE 2     /* bad command line: pf_usage_error() (usage_error.h) says what is wrong */
/* Not an exit status (those are >= 0): what a step that could end the command returns to let it go on. */
#define PF_EXIT_GO_ON (-1)

/* argv[0] is the subcommand name; main.c has set it as the log's command (log.h), so messages do not repeat it.
 * --help prints the full usage on stdout (exit 0); a bad command line one line and a hint (exit 2). */
int cmd_trace(int argc, char **argv);
int cmd_aggregate(int argc, char **argv);
int cmd_replay(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_boot(int argc, char **argv);
int cmd_stop(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_config(int argc, char **argv);
int cmd_status(int argc, char **argv);

#endif
