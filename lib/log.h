/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Logging for the programs' top levels.  Library code returns errors; only callers near main() log. */
#ifndef PREFETCH_LOG_H
#define PREFETCH_LOG_H

enum pf_log_level { PF_LOG_ERR = 3, PF_LOG_WARNING = 4, PF_LOG_NOTICE = 5, PF_LOG_INFO = 6, PF_LOG_DEBUG = 7 };

/* Program name used as prefix; verbosity threshold (default PF_LOG_NOTICE). */
void pf_log_init(const char *progname, int max_level);
/* The subcommand being run ("boot", "stop"...), set once where it is dispatched; NULL = none.  The strings are
 * not copied: they must live as long as the process logs. */
void pf_log_set_command(const char *command);
const char *pf_log_progname(void);
const char *pf_log_command(void); /* NULL when none was set */
/* Lines go to stderr as "PROG: COMMAND: reason" (no COMMAND when none was set), warnings as
 * "PROG: COMMAND: warning: reason"; errors carry no word of their own (the exit status says it).  Under systemd
 * (JOURNAL_STREAM set) a line is "<N>reason": the journal records the program and the priority itself. */
/* From now on write each line as one record to the kernel log (/dev/kmsg, or the device node at path), for a
 * process started before the journal (prefetchd from the initramfs).  Keeps stderr if it cannot be opened.
 * Returns 0 or -errno. */
int pf_log_to_kmsg(void);
int pf_log_to_kmsg_at(const char *path);
void pf_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define pf_err(...) pf_log(PF_LOG_ERR, __VA_ARGS__)
#define pf_warn(...) pf_log(PF_LOG_WARNING, __VA_ARGS__)
#define pf_notice(...) pf_log(PF_LOG_NOTICE, __VA_ARGS__)
#define pf_info(...) pf_log(PF_LOG_INFO, __VA_ARGS__)
#define pf_debug(...) pf_log(PF_LOG_DEBUG, __VA_ARGS__)

#endif
