/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Bad command lines, said the same way by every program and subcommand: one line naming what is wrong
 * ("PROG: COMMAND: reason", through log.h, so with the program and subcommand set there), then
 * "Try 'PROG COMMAND --help'." - never the whole usage text. */
#ifndef PREFETCH_USAGE_ERROR_H
#define PREFETCH_USAGE_ERROR_H

/* The exit status of a bad command line, for every program. */
#define PF_USAGE_EXIT 2

/* Print the reason and the hint on stderr.  Returns PF_USAGE_EXIT. */
int pf_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* getopt_long() returned c, '?' (unknown option) or ':' (missing value; the optstring must start with ':'),
 * for argv: name the option.  Returns PF_USAGE_EXIT. */
int pf_usage_bad_option(int c, char **argv);

#endif
