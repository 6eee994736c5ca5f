/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Boot-time log: one text line per traced boot in $PREFETCH_DIR/boottime.log, so that integrators can compare
 * boots without prefetch, with prefetch, and with prefetch and reordering ('prefetchd report').
 *
 * File format (version 1): a first line "# prefetch boottime log, format 1", comment lines starting with '#',
 * then one record per line, fields separated by spaces:
 *
 *   boot_id unix_time boot_s end_source prefetch reorder disk io_ms reads sectors
 *
 *   boot_id     /proc/sys/kernel/random/boot_id ("-" unknown)
 *   unix_time   when the record was written
 *   boot_s      uptime in seconds when the boot finished (see end_source)
 *   end_source  how boot end was known: "systemd" (FinishTimestampMonotonic of the manager, what
 *               systemd-analyze prints), "file" (written by the stop init script or a test), "trace-stop"
 *               (uptime when tracing stopped: nothing better was known)
 *   prefetch    1 when a layout was replayed during this boot
 *   reorder     1 when a reorder was armed at the previous shutdown (and ENABLE_FILE_REORDERING=1)
 *   disk        the whole disk holding the first traced filesystem ("-" unknown, e.g. in a container, or a
 *               btrfs spanning several devices; a single-device btrfs: its device's disk)
 *   io_ms       its "time spent doing I/Os" from /proc/diskstats at trace stop, ms (-1 unknown)
 *   reads       reads completed (-1 unknown)
 *   sectors     sectors read, 512 bytes each (-1 unknown)
 * Appended in 0.1.0 for the self-check (a line that stops before them reads them as unknown):
 *   control     1 when the replay was withheld on purpose (a control boot of the self-check, prefetch=noreplay)
 *   policy      the self-check's decision in force at this boot: replay, narrow or off ("-" unknown)
 *   replay_mib  MiB the replay read (-1 unknown; 0 when nothing was replayed)
 *   used_mib    of the layout's bytes, MiB in files this boot then opened (-1 unknown)
 *   uncovered_mib  MiB the boot read from the disk beyond prefetchd's own reads (-1 unknown)
 *   psi_io_ms   /proc/pressure/io "some" total at boot end, ms (-1: no PSI, e.g. an older kernel)
 *   replay_s    the replay's wall time, s (-1 none)
 *   replay_cpu_s  the replay thread's CPU time, s (-1 none)
 *   replay_files  files the replay read (-1 unknown)
 *   used_files    of the layout's files, those this boot then opened (-1 unknown)
 * Appended in 0.2.0 for 'prefetchd report --by' (the settings that can change a boot's time; missing: unknown):
 *   run         "off": prefetch off by configuration (ENABLE_PREFETCH=0, prefetch=off), nothing traced or
 *               replayed, only the counters read at boot end; "on": traced ("-": a line before 0.2.0, traced)
 *   generation  the reorder run that placed the layout's files: 0 never, 1, 2, ... counting the shutdown runs
 *               that moved blocks; kept until the layout's files move again (-1 unknown)
 *   chunk       CHUNK_SIZE_BLOCKS of that run (-1 unknown or no reorder)
 *   medium      the traced disk's class: rotational, slow-flash, fast-flash, unknown ("-")
 *   kernel      the kernel release (uname -r; "-" unknown)
 *   layout_age  boots recorded since the layout replayed (or on the disk) was last written (-1 unknown)
 * Appended after those, for where the boot still waits on the disk:
 *   late_files  of the layout's files the boot opened, those it opened before the replay had read them (or
 *               that the replay never read): the boot read them itself (-1 unknown, or nothing replayed)
 *   late_mib    their bytes in the layout, MiB (-1 unknown)
 * Unknown trailing fields are ignored, so later versions may append columns. */
#ifndef PREFETCH_BOOT_LOG_H
#define PREFETCH_BOOT_LOG_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define PF_BOOTTIME_HEADER "# prefetch boottime log, format 1"
#define PF_BOOTTIME_LINE_MAX 512

/* The setups 'prefetchd report' compares: what actually ran at a boot.
 *   off             prefetch off by configuration: nothing traced, nothing replayed
 *   trace           traced, nothing replayed (ENABLE_REPLAY=0, a control boot, prefetch=noreplay, no layout yet)
 *   replay          the layout replayed in full (a probe boot of the self-check too)
 *   narrow          the layout's head replayed (the self-check's policy narrow)
 *   replay+reorder  replayed (full or narrowed) on a disk whose layout files a reorder placed */
enum pf_setup { PF_SETUP_OFF = 0, PF_SETUP_TRACE, PF_SETUP_REPLAY, PF_SETUP_NARROW, PF_SETUP_REORDER, PF_SETUP_COUNT };

struct pf_boot_record {
	char boot_id[40];
	int64_t when;
	double boot_s;
	char end_source[16];
	int prefetch, reorder;
	char disk[32];
	int64_t io_ms, reads, sectors;
	int control;
	char policy[8];
	double replay_mib, used_mib, uncovered_mib;
	int64_t psi_io_ms;
	double replay_s, replay_cpu_s;
	int64_t replay_files, used_files;
	int off;              /* run "off" */
	int64_t generation, chunk, layout_age;
	int64_t late_files;
	double late_mib;
	char medium[16];
	char kernel[72];
};

/* A record with every measurement unknown (-1, "-"), as a line of an older version reads. */
void pf_boot_record_init(struct pf_boot_record *r);

/* Display name of a setup: "off", "trace", "replay", "narrow", "replay+reorder"; -> 0 and *s, else -EINVAL. */
int pf_setup_parse(const char *name, enum pf_setup *s);
const char *pf_setup_name(enum pf_setup s);
enum pf_setup pf_boot_record_setup(const struct pf_boot_record *r);

/* One line without the newline.  Returns the length, or -ENOSPC if it does not fit. */
int pf_boot_record_format(const struct pf_boot_record *r, char *buf, size_t len);
/* Parse one record line.  Returns 0 or -EINVAL. */
int pf_boot_record_parse(const char *line, struct pf_boot_record *r);

/* Parse a whole log text.  Returns 0 with a malloc'd array (free it) and the number of unreadable lines in
 * *bad, -EPROTO when the header names another format, -ENOMEM. */
int pf_boottime_parse(const char *text, struct pf_boot_record **recs, size_t *n, size_t *bad);
/* Read a log file (missing file: -ENOENT).  A last line without its newline (cut by a crash) is no record: it
 * counts in *bad. */
int pf_boottime_load(const char *path, struct pf_boot_record **recs, size_t *n, size_t *bad);
/* Append one record (the header first if the file is new or empty), fsync'd: whole or not at all, on a line of
 * its own, to a state file (pf_state_append: a trusted directory, no link followed; a new file is 0600).
 * Returns 0 or a negative pf error. */
int pf_boottime_append(const char *path, const struct pf_boot_record *r);

/* From /proc/diskstats text: the line of device major:minor.  Returns 0 or -ENOENT. */
int pf_diskstats_parse(const char *text, unsigned maj, unsigned min, char *name, size_t namelen, int64_t *reads,
		       int64_t *sectors, int64_t *io_ms);
/* Fill disk/io_ms/reads/sectors for the whole disk holding device dev of a filesystem spanning ndevices devices
 * (as pf_fsid_block_device gives them; a partition is mapped to its disk through sysfs).  Leaves "-" / -1 when
 * unknown (dev 0 or ndevices 0: -ENODEV), and on a filesystem spanning several devices (-EXDEV).  Returns 0 or a
 * negative errno. */
int pf_boot_record_disk(dev_t dev, unsigned ndevices, struct pf_boot_record *r);

#endif
