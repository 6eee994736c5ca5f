/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The kernel's I/O accounting of a task (/proc/PID/io): read_bytes counts what the task's reads brought from
 * storage, charged when a read is submitted to the block layer to the task that submits it (pages already
 * cached count nothing).  The boot record takes the process's; a replay step the thread's own, which other
 * threads and processes reading meanwhile do not change. */
#ifndef PREFETCH_PROC_IO_H
#define PREFETCH_PROC_IO_H

#include <stdint.h>

/* "read_bytes: N" of /proc/PID/io text.  0, or PF_ECORRUPT when the text does not say. */
int pf_proc_io_read_bytes(const char *text, int64_t *bytes);

/* This process's read_bytes so far (/proc/self/io).  0, or a negative pf error. */
int pf_self_read_bytes(int64_t *bytes);

/* The calling thread's read_bytes so far (/proc/thread-self/io; started from the initramfs, whose /proc moves
 * into the root, proc/thread-self/io under the working directory after that).  0, or a negative pf error
 * (-ENOENT: no procfs there, or a kernel without task I/O accounting). */
int pf_thread_read_bytes(int64_t *bytes);

#endif
