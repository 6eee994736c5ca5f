/* SPDX-License-Identifier: GPL-2.0-or-later */
/* /etc/default/prefetch: KEY=value settings shared by prefetchd and prefetch-reorder, and by the shell scripts
 * and units through 'prefetchd config' (which prints what this parser took): one reader for everyone.
 *
 * The syntax is the part of sh's that means the same to sh, to this parser and to systemd's EnvironmentFile;
 * anything else is a bad line, never read differently:
 *   - blank lines, and comments: '#' first on a line (after blanks), or after a blank following the value;
 *   - [export ]KEY=VALUE, KEY of letters, digits and '_'; no blanks around '=' ("KEY = 5" is a bad line: sh
 *     would run a command KEY);
 *   - VALUE: bare text, '...' (literal), "..." (in which \" \\ \$ \` stand for the character), or these
 *     run together; it ends at a blank, after which only a comment may follow (sh would run a command);
 *   - not supported, a bad line: $ expansion ("$HOME/x", also inside "..."), ` substitution, ~ expansion, a
 *     backslash outside quotes, an unquoted ; & | < > ( ), an unterminated quote, a carriage return;
 *   - numbers are whole decimal numbers in the key's range: "30s" or "0x10" are bad lines (the warning states
 *     the range); booleans 0/1, yes/no, true/false, on/off, y/n (any case); PREFETCH_MEDIUM auto, rotational
 *     (or hdd), slow-flash or fast-flash (or ssd, solid, nonrotational: the names from before flash classes); TRACE_MOUNTS absolute paths separated by blanks or commas;
 *   - a key set twice: the last line counts (as in sh).
 * The historical keys of the 2007 prefetch project keep their meaning (PREFETCH_DIR, LOGIN_TRACING_DELAY,
 * TRACE_AGGREGATION_COUNT, ENABLE_FILE_REORDERING, CHUNK_SIZE_BLOCKS).  A bad line never stops anything: it is
 * ignored as a whole (the value stays the default, or what an earlier line set) with a warning
 * "FILE:LINE: reason; line ignored", one line noted to the caller's sink (lib/note.h) - the same text
 * 'prefetchd config --check' prints and the commands log.
 * ENABLE_APP_PREFETCHING (2007: application prefetching) is accepted and has no effect.
 */
#ifndef PREFETCH_CONFIG_H
#define PREFETCH_CONFIG_H

#include <stddef.h>

struct pf_note;

#ifndef SYSCONFDIR
#define SYSCONFDIR "/etc"
#endif
#define PF_DEFAULT_CONFIG SYSCONFDIR "/default/prefetch"

#define PF_CONFIG_MAX_MOUNTS 32
/* A buffer for the warnings worth showing (pf_note_into; dozens of lines, the rest only counted). */
#define PF_CONFIG_WARNINGS_SIZE 8192

enum pf_medium_override {
	PF_MEDIUM_AUTO = 0,
	PF_MEDIUM_FORCE_ROTATIONAL = 1,
	PF_MEDIUM_FORCE_FAST_FLASH = 2,
	PF_MEDIUM_FORCE_SOLID = PF_MEDIUM_FORCE_FAST_FLASH, /* its older name */
	PF_MEDIUM_FORCE_SLOW_FLASH = 3,
	PF_MEDIUM_FORCE_MAX = PF_MEDIUM_FORCE_SLOW_FLASH,
};

struct pf_config {
	int enable_prefetch;         /* ENABLE_PREFETCH (1): replay and trace at boot */
	char state_dir[256];         /* PREFETCH_DIR (/var/lib/prefetch): traces, layout, boot log */
	char runtime_dir[256];       /* PREFETCH_RUNTIME_DIR (/run/prefetch): pid file, early buffer */
	int login_tracing_delay;     /* LOGIN_TRACING_DELAY (60 s): tracing goes on this long after boot end */
	int trace_timeout;           /* TRACE_TIMEOUT (300 s): hard stop for tracing */
	int aggregation_count;       /* TRACE_AGGREGATION_COUNT (3): traces merged into a layout */
	int enable_reordering;       /* ENABLE_FILE_REORDERING (0) */
	long chunk_size_blocks;      /* CHUNK_SIZE_BLOCKS (2000) */
	int reorder_time_budget;     /* REORDER_TIME_BUDGET (20 s) */
	int reorder_reserve_percent; /* REORDER_FREE_RESERVE_PERCENT (5): free space reorder never uses */
	int max_prefetch_mb;         /* MAX_PREFETCH_MB (256) */
	int max_prefetch_files;      /* MAX_PREFETCH_FILES (20000) */
	int replay_timeout;          /* REPLAY_TIMEOUT (60 s): replay gives up after this long */
	int replay_threads;          /* REPLAY_THREADS (4): readers on solid-state media */
	int replay_idle_io;          /* REPLAY_IDLE_IO (0): after init's files, the replay's reads in the idle I/O class */
	int medium;                  /* PREFETCH_MEDIUM (auto|rotational|slow-flash|fast-flash) */
	int nmounts;                 /* TRACE_MOUNTS ("" = every local filesystem) */
	char mounts[PF_CONFIG_MAX_MOUNTS][256];
	int start_from_initramfs;    /* START_FROM_INITRAMFS (1): the initramfs starts 'prefetchd boot' as soon as the
				      * root is mounted, before systemd; 0 = only prefetch.service / the init script */
	int enable_replay;           /* ENABLE_REPLAY (1): 0 = trace and measure boots without replaying (baseline) */
	int reorder_min_gain_percent; /* REORDER_MIN_GAIN_PERCENT (10): move only when the predicted next replay is
				       * this much faster (lib/replay_cost.h) */
	int reorder_erase_block_kb;  /* REORDER_ERASE_BLOCK_KB (0 = auto: sysfs, the filesystem's RAID stride): on slow
				      * flash a reorder writes whole erase blocks of this size */
	int reorder_write_budget_mb; /* REORDER_WRITE_BUDGET_MB (0 = none): a reorder stops after copying this much */
	int reorder_make_room;       /* REORDER_MAKE_ROOM (1): on a spinning disk whose free space is too scattered
				      * for the layout, a reorder may first move other files out of one stretch */
	int self_check_interval;     /* SELF_CHECK_INTERVAL (8): one boot in this many is a control (or probe) boot of
				      * the self-check (daemon/boot/selfcheck.h); 0 = never */
};

void pf_config_defaults(struct pf_config *cfg);

/* Parse a file over the current values.  Returns 0, or a negative pf error (lib/error.h) if the file cannot be
 * read, e.g. -ENOENT (the caller decides whether a missing file matters; cfg keeps its values).  Each bad line
 * is one line noted to warnings (lib/note.h; may be NULL): their count is warnings->lines. */
int pf_config_load(struct pf_config *cfg, const char *path, struct pf_note *warnings);

/* The configuration file read when no --config is given: $PREFETCH_CONFIG where set and not empty (tests; a
 * second instance beside the system's), else PF_DEFAULT_CONFIG. */
const char *pf_config_default_path(void);

/* For the commands: defaults, then the file at path (NULL = pf_config_default_path()), each parse warning logged
 * (file:line).  Returns 0, also when the default file is missing; otherwise the error of pf_config_load (cfg
 * then holds what could be read over the defaults), for the caller to report as its command sees fit. */
int pf_config_read(struct pf_config *cfg, const char *path);

/* pf_config_read for the commands that go on without their file: an unreadable one is one warning ("cannot read
 * PATH: reason; using defaults") and cfg holds the defaults with what could be read. */
void pf_config_read_or_defaults(struct pf_config *cfg, const char *path);

/* The settings' names, in struct order, for i = 0, 1, ... until NULL (ENABLE_APP_PREFETCHING is not one). */
const char *pf_config_key_name(size_t i);

/* The value of setting key in cfg as text, as 'prefetchd config --get' prints it: numbers in decimal,
 * booleans 0 or 1, PREFETCH_MEDIUM auto|rotational|slow-flash|fast-flash, TRACE_MOUNTS the paths separated by one space, paths as
 * they are.  Returns 0, -ENOENT when key names no setting, -ENOSPC when len is too small (buf truncated). */
int pf_config_get(const struct pf_config *cfg, const char *key, char *buf, size_t len);

/* A PREFETCH_MEDIUM value (also --medium's): its enum pf_medium_override, or -EINVAL when it names none. */
int pf_medium_override_parse(const char *val);

/* Parse text (for tests and for the loader); warnings as pf_config_load's. */
void pf_config_parse(struct pf_config *cfg, const char *text, const char *origin, struct pf_note *warnings);

#endif
