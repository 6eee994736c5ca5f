/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Internals shared by the tracer's files (trace_fanotify.c, trace_fid.c, trace_mounts.c, trace_handle.c,
 * trace_unmount.c, trace_residency.c, trace_init.c, trace_build.c, trace_record.c, trace_dirindex.c, trace_fhindex.c,
 * trace_snapshot.c). */
#ifndef PREFETCH_TRACE_INTERNAL_H
#define PREFETCH_TRACE_INTERNAL_H

#include "trace.h"
#include "trace_devino.h"

#include "note.h"

#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/fanotify.h>
#include <sys/stat.h>
#include <sys/types.h>

#ifndef FAN_MARK_IGNORE
#define FAN_MARK_IGNORE 0x00000400 /* 6.0+; older headers lack it */
#endif

/* trace_page_table.c: the byte spans [start, end) each (dev, ino) was asked for. */
struct pf_page_span {
	uint64_t start, end;
};
struct pf_page_file {
	dev_t dev;
	ino_t ino;
	struct pf_page_span *v;
	size_t n, cap;
	size_t tidy;               /* n when last sorted and merged */
};
struct pf_page_table {
	struct pf_page_file *files;
	size_t n, cap;
	struct pf_devino_index index; /* (dev, ino) -> position in files */
};
/* Add a span (merged with what it touches).  Returns 0 or -ENOMEM. */
int pf_page_table_add(struct pf_page_table *t, dev_t dev, ino_t ino, uint64_t start, uint64_t end);
/* The file's spans sorted and disjoint (valid until the next add), NULL and *n = 0 if it has none. */
const struct pf_page_span *pf_page_table_spans(struct pf_page_table *t, dev_t dev, ino_t ino, size_t *n);
void pf_page_table_free(struct pf_page_table *t);

/* trace_page_holes.c: the spans s (sorted, disjoint) with each hole before a span filled where resident(ctx,
 * start, end) says every page of [start, end) is in the page cache (1); the hole runs back to the previous
 * span's end or to 0.  The kernel emits no event for the pages at the start of a read() whose batch met a folio
 * still being read (see the file): those holes.  *out is malloc'd (NULL when ns is 0); *filled grows by the
 * bytes added.  Returns 0 or -ENOMEM.  The _fd form asks mincore on a mapping of the open file. */
int pf_page_spans_fill(const struct pf_page_span *s, size_t ns, int (*resident)(void *ctx, uint64_t start,
		       uint64_t end), void *ctx, struct pf_page_span **out, size_t *nout, uint64_t *filled);
int pf_page_spans_fill_fd(int fd, const struct pf_page_span *s, size_t ns, struct pf_page_span **out,
			  size_t *nout, uint64_t *filled);

/* trace_page_line.c: one line of trace_pipe. */
struct pf_page_event {
	int pid;                   /* the task that asked (a thread id), -1 if the line does not say */
	char comm[16];             /* its name as the trace prints it ("<...>" when not cached), "" if unreadable */
	unsigned major, minor;     /* the filesystem's device */
	uint64_t ino;
	uint64_t start, end;       /* bytes, page aligned: [start, end) */
};
enum { PF_PAGE_LINE_OTHER = 0, PF_PAGE_LINE_EVENT = 1, PF_PAGE_LINE_LOST = 2, PF_PAGE_LINE_BAD = -1 };
/* Parse a NUL-terminated line (page: the page size).  Returns PF_PAGE_LINE_EVENT with *ev filled for
 * mm_filemap_get_pages / map_pages / fault, PF_PAGE_LINE_LOST for the ring buffer's "[LOST n EVENTS]", OTHER
 * for any other line, BAD for one of our events that does not parse (a format this reader does not know). */
int pf_page_line_parse(const char *line, uint64_t page, struct pf_page_event *ev);

/* trace_page_raw.c: the same events from trace_pipe_raw's buffer pages.  One event's record layout (from its
 * format file): 0, or -EINVAL for one this reader does not know.  A page's header (from events/header_page):
 * the commit word's size and where the events start; 0 or -EINVAL.  Parse one page read (len bytes): take() is
 * called for each event of the given formats (pid from the record, comm empty); *missed says the page follows
 * lost events.  Returns the number of events taken, or -EBADMSG (a page that does not parse). */
struct pf_page_raw_format {
	int id;                    /* the record's common_type */
	int range;                 /* has last_index (get_pages, map_pages); else one page (fault) */
	unsigned pid_off, ino_off, ino_size, dev_off, dev_size, index_off, index_size, last_off, last_size;
	unsigned rec_size;         /* bytes the fields need */
};
int pf_page_raw_format(const char *text, struct pf_page_raw_format *f);
int pf_page_raw_header(const char *text, unsigned *commit_size, unsigned *data_off);
int pf_page_raw_parse(const unsigned char *buf, size_t len, unsigned commit_size, unsigned data_off,
		      const struct pf_page_raw_format *fmts, size_t nfmts, uint64_t page,
		      void (*take)(void *ctx, const struct pf_page_event *ev), void *ctx, int *missed);

/* trace_tracefs.c: the page-cache events of the traced filesystems, in a trace instance of our own. */
enum pf_pages_state {
	PF_PAGES_OFF = 0,          /* not collected (why says why): every file's ranges from mincore */
	PF_PAGES_ON,               /* collecting */
	PF_PAGES_DONE,             /* collected completely: ranges from the events */
	PF_PAGES_LOST,             /* collected, but events were lost: ranges from mincore */
};
struct pf_page_trace {
	int state;                 /* enum pf_pages_state */
	char why[128];             /* OFF: the reason, one line (noted by pf_trace_pages_start) */
	int inst_fd;               /* tracefs instances/ directory, -1 = none */
	int dir_fd;                /* our instance's directory, -1 = none */
	int pipe_fd;               /* its trace_pipe, non-blocking, -1 = none (or raw) */
	int raw;                   /* read from the per-CPU trace_pipe_raw (trace_page_raw.c), not trace_pipe */
	int *cpu_fd;               /* raw: [ncpu] per_cpu/cpuN/trace_pipe_raw, non-blocking */
	int ncpu;
	unsigned char *raw_buf;    /* raw: one sub-buffer (a page) per read */
	size_t raw_len;
	unsigned commit_size, data_off;
	struct pf_page_raw_format fmt[3];
	char name[32];             /* prefetch-PID */
	char comm[16];             /* our own task name: events of our threads are ignored */
	int comm_in_filter;        /* the kernel drops those events itself (every event's filter has the comm) */
	uint64_t page;
	char carry[512];           /* a line cut by the end of a read */
	size_t ncarry;
	unsigned long *fs_events;  /* events kept, per traced filesystem */
	struct pf_page_table table;
};

struct pf_trace_entry;

/* trace_dirindex.c: the recorded directories (entries with a path) by path.  Zero-initialised: empty. */
struct pf_dir_index {
	struct pf_devino_index ix; /* keyed by the path's hash: positions in the tracer's entries */
};
/* The recorded directory with this path: 1 with its position in *pos, or 0 when there is none. */
int pf_dir_index_get(const struct pf_dir_index *x, const struct pf_trace_entry *ents, const char *path, size_t *pos);
/* Index ents[pos] (a directory; one without a path is left out).  Returns 0 or -ENOMEM (index unchanged). */
int pf_dir_index_put(struct pf_dir_index *x, const struct pf_trace_entry *ents, size_t pos);
void pf_dir_index_free(struct pf_dir_index *x);

/* trace_fhindex.c: entries by file handle (FID mode's events name files so), per traced filesystem.  Zero-
 * initialised: empty. */
struct pf_fh_index {
	struct pf_devino_index ix; /* keyed by (fs, the handle's hash): positions in the tracer's entries */
};
/* The entry of filesystem fs with this handle, or NULL. */
struct pf_trace_entry *pf_fh_index_get(const struct pf_fh_index *x, struct pf_trace_entry *ents, uint32_t fs,
				       const struct file_handle *fh);
/* Index ents[pos] (one without a handle is left out).  Returns 0 or -ENOMEM (index unchanged). */
int pf_fh_index_put(struct pf_fh_index *x, const struct pf_trace_entry *ents, size_t pos);
void pf_fh_index_free(struct pf_fh_index *x);

/* One traced filesystem. */
struct pf_trace_fs {
	dev_t dev;
	dev_t page_dev;            /* the device the page-cache events and /proc/PID/maps name its files by: the
				    * superblock's, as mountinfo shows it; on btrfs not st_dev, and one for all the
				    * filesystem's subvolumes */
	uint8_t uuid[16];
	uint32_t block_size;
	int medium;                /* enum pf_medium */
	int subvol;                /* a btrfs subvolume: one of possibly several entries with this UUID */
	int skipped;               /* not traced (no UUID): only listed in the trace (PF_FS_SKIPPED) */
	char *mountpoint;
	int gone;                  /* unmounted during tracing (trace_unmount.c) or not found at the end */
	int wd;                    /* inotify watch on its root (IN_UNMOUNT), -1 = none */
	int mount_fd;              /* a directory of it, opened only for the residency pass (and in FID mode for
				    * the length of one read of the event queue, trace_fid.c); -1 otherwise */
	int32_t fsid[2];           /* statfs's f_fsid: how FID mode's events name it */
};

/* One file or directory, in first-touch order. */
struct pf_trace_entry {
	dev_t dev;
	ino_t ino;
	struct file_handle *fh;    /* reopened by handle at the end (no fd is held while tracing); NULL: by path */
	uint32_t fs;               /* index into pf_tracer.fs */
	uint32_t flags;            /* PF_FILE_* */
	uint32_t generation;
	uint64_t first_ns;
	char *path;
	/* the first open's snapshot (trace_snapshot.c), if snap: identity, and nx extents at xmap[xfirst] */
	int snap;
	uint32_t nx;
	size_t xfirst;
	uint64_t size;
	int64_t mtime_ns, ctime_ns;
	uint32_t mode;             /* with a snapshot: st_mode */
	/* FID mode (trace_fid.c): a file recorded from its event alone is pending (ino, generation, mode and
	 * snapshot unknown) until the end of tracing resolves it (then verified: e->path led to it there); dead:
	 * not a file to record after all (a device node, fifo, or a second name of an inode already recorded);
	 * marked: its ignore mark was tried (on its second event) */
	uint8_t pending, verified, dead, marked;
	uint32_t parent;           /* FID mode: its directory's position + 1 (0: not known) */
	uint8_t path_ok;           /* FID mode, resolved by path alone (its ranges from mincore: opened again at the
				    * end anyway): e->path led to ino when resolved; generation read then */
};

struct pf_tracer {
	int fan_fd;
	int ino_fd;                /* inotify: IN_UNMOUNT of the traced filesystems (trace_unmount.c), -1 = none */
	int proc_fd;               /* /proc/self/fd (O_PATH): an fd's path by readlinkat of one name, -1 = none */
	pid_t self;
	struct pf_trace_fs *fs;    /* [nfs] traced, then [nskipped] listed only (fs[nfs + i].skipped) */
	int nfs, nskipped;
	struct pf_trace_entry *ents;
	size_t nents, cap_ents;
	struct pf_devino_index index; /* (dev, ino) -> position in ents */
	struct pf_dir_index dirs;  /* directory path -> position in ents */
	struct pf_file_extent *xmap; /* the entries' snapshot extents */
	size_t nxmap, cap_xmap;
	uint64_t start_ns;         /* CLOCK_MONOTONIC when the marks were in place */
	int64_t start_real_ns;     /* CLOCK_REALTIME_COARSE then, the clock of file times: a file modified since
				    * was written while traced (PF_FILE_WRITTEN) */
	int timeout_s;
	int timeout_planned;       /* reaching timeout_s is the intended end, not a cut */
	int timed_out;             /* pf_tracer_run ended at the time-out */
	unsigned max_files;
	int capped;                /* the file cap was reached: marks removed, later files left out */
	size_t read_len;           /* bytes per read of fan_fd: bounds the event fds one read creates */
	int ignore_mode;           /* fanotify_mark flags for ignore marks (trace_fanotify.c); 0 = none possible */
	int fid;                   /* events name files by handle (FAN_REPORT_FID, trace_fid.c), not by an fd */
	char fid_why[64];          /* else: why not, one line (noted by pf_tracer_open) */
	struct pf_fh_index handles; /* FID mode: entries by handle */
	struct pf_page_trace pages;
	struct pf_trace_stats st;
};

/* trace_tracefs.c.  Start: best effort, never fails the tracer (state OFF and one line noted to why, lib/note.h,
 * when tracefs, the events or the privilege are missing); needs CAP_SYS_ADMIN to mount tracefs where it is not
 * mounted.  Read: what the
 * instance has buffered (non-blocking; at most max_reads pipe reads, 0 = until empty).  Stop: tracing off,
 * the rest read, the ring buffer's loss counters checked (state DONE or LOST), the instance removed.  Close:
 * the instance removed if still there (every path out of the tracer goes through pf_tracer_close). */
void pf_trace_pages_start(struct pf_tracer *t, int force_mincore, struct pf_note *why);
void pf_trace_pages_read(struct pf_tracer *t, int max_reads);
void pf_trace_pages_stop(struct pf_tracer *t);
void pf_trace_pages_close(struct pf_tracer *t);
/* The traced filesystem fsi takes its files' ranges from the events (DONE, and the events saw it at all: a
 * filesystem whose inodes report another device than stat's, e.g. a btrfs subvolume, gets none). */
int pf_trace_pages_cover(const struct pf_tracer *t, int fsi);

/* trace_mounts.c: the filesystems to trace (*n), followed in *out by those skipped for want of a UUID (*nskipped,
 * at most PF_TRACE_MAX_SKIPPED; only when no --mount is given).  Returns 0 or -errno with a reason in err. */
#define PF_TRACE_MAX_SKIPPED 16
int pf_trace_pick_mounts(const struct pf_trace_opts *o, struct pf_trace_fs **out, int *n, int *nskipped, char *err,
			 size_t errlen);
void pf_trace_free_mounts(struct pf_trace_fs *fs, int n);

/* trace_mounts.c, at the end of tracing: open a directory of each filesystem still mounted (mount_fd, for
 * open_by_handle_at), and mark gone the ones that are not (or are another filesystem now). */
void pf_trace_open_mounts(struct pf_tracer *t);
void pf_trace_close_mounts(struct pf_tracer *t);

/* trace_unmount.c: watch the traced filesystems' roots for IN_UNMOUNT (an inotify watch does not keep a
 * filesystem mounted).  Both are best effort: without a watch, an unmount is noticed at the end. */
void pf_trace_watch_unmounts(struct pf_tracer *t);
/* Read what the watch reported; marks gone filesystems. */
void pf_trace_read_unmounts(struct pf_tracer *t);

/* trace_handle.c: the file handle of an open file (malloc'd), NULL where the filesystem has none. */
struct file_handle *pf_trace_handle_of(int fd);
/* Open a recorded entry again for reading (by handle, else by path), checked to be the same inode (its fstat in
 * *st).  Returns the fd or a negative errno (-ENODEV: its filesystem is gone; -ESTALE: deleted or replaced). */
int pf_trace_reopen(const struct pf_tracer *t, const struct pf_trace_entry *e, struct stat *st);

/* trace_residency.c: byte ranges of a file, each within one physical extent. */
struct pf_range {
	uint64_t offset, length;
	uint64_t physical;         /* fs block of offset, if phys_known */
	int phys_known;
};
/* One extent of a file as FIEMAP maps it. */
struct pf_file_extent {
	uint64_t logical, length, physical; /* bytes */
	int phys_known;            /* physical is a place a reader can seek to */
};
/* The file's extents in logical order (*out malloc'd, NULL when none): their count, or -errno (-EOPNOTSUPP:
 * no FIEMAP, nor XFS's map of a directory).  max (0: the module's limit, past which a file is mapped partly) bounds them: more than max
 * gives -E2BIG. */
int pf_file_extents(int fd, size_t max, struct pf_file_extent **out);
/* trace_xfs_dir.c: the same for an XFS directory (XFS_IOC_GETBMAPX, its data blocks), which has no FIEMAP;
 * -EOPNOTSUPP on other filesystems. */
int pf_xfs_dir_extents(int fd, size_t max, struct pf_file_extent **out);
/* Regular file: the page ranges resident in the page cache now, holes left out. */
int pf_resident_ranges(int fd, uint64_t size, uint32_t block_size, struct pf_range **out, size_t *n);
/* Regular file: the given spans (sorted, disjoint; cut at size), holes left out. */
int pf_listed_ranges(int fd, uint64_t size, uint32_t block_size, const struct pf_page_span *s, size_t ns,
		     struct pf_range **out, size_t *n);
/* The same from an extent map taken before (nx < 0: none, the ranges go without position). */
int pf_listed_ranges_map(const struct pf_file_extent *x, int nx, uint64_t size, uint32_t block_size,
			 const struct pf_page_span *s, size_t ns, struct pf_range **out, size_t *n);
/* Directory (or any file read whole): [0, size) as mapped on disk. */
int pf_mapped_ranges(int fd, uint64_t size, uint32_t block_size, struct pf_range **out, size_t *n);

/* trace_snapshot.c: take e's snapshot from fd (st: its fstat); e->snap says whether one was kept. */
void pf_trace_snapshot(struct pf_tracer *t, struct pf_trace_entry *e, int fd, const struct stat *st);
/* 1 if e has a snapshot, e->path leads to e's inode and it is unchanged since (its stat in *st), else 0. */
int pf_trace_snapshot_current(const struct pf_trace_entry *e, struct stat *st);
/* 1 if e has a snapshot and st (a stat of e->path) shows the same inode, size and times. */
int pf_trace_snapshot_same(const struct pf_trace_entry *e, const struct stat *st);
/* e's snapshot as a stat (ino, mode, size, times): for an entry verified when it was resolved. */
void pf_trace_snapshot_stat(const struct pf_trace_entry *e, struct stat *st);
/* trace_page_holes.c: 1 if every page of [start, end) of fd is in the page cache (page: the page size). */
int pf_pages_all_resident(int fd, uint64_t page, uint64_t start, uint64_t end);

/* trace_record.c.  The file cap is reached: stop watching (no event for anything from now on), flag the trace. */
void pf_trace_cap_reached(struct pf_tracer *t);
/* The entry of (dev, ino), or NULL (a pending entry is not found this way until it is resolved). */
struct pf_trace_entry *pf_trace_lookup(struct pf_tracer *t, dev_t dev, ino_t ino);
/* An ignore mark for what flags (PF_FILE_*) make uninteresting from now on, on the inode fanotify_mark's dirfd
 * and name give (an open fd and NULL; or /proc/self/fd and the number of an O_PATH fd, whose link is followed). */
void pf_trace_ignore_at(struct pf_tracer *t, int dirfd, const char *name, uint32_t flags);
/* Record the directories above path (on dev, outermost first) not recorded yet. */
void pf_trace_add_parents(struct pf_tracer *t, const char *path, dev_t dev, int fsi, uint64_t now);
/* Append an entry (takes fh and path).  Returns it, or NULL on ENOMEM (caller keeps ownership then). */
struct pf_trace_entry *pf_trace_append(struct pf_tracer *t, const struct pf_trace_entry *e);
/* trace_init.c: the files init (the process maps names, /proc/1/maps) has mapped, recorded and flagged
 * PF_FILE_INIT (added when tracing never saw them); *idx gets their entry indices in map order (malloc'd,
 * *n of them; none when maps cannot be read).  Returns 0 or -ENOMEM. */
int pf_trace_init_files(struct pf_tracer *t, const char *maps, size_t **idx, size_t *n);

/* trace_fid.c: FID mode, where fanotify names each event's file by handle instead of opening it for us.
 * Setup: each traced filesystem's fsid; 0, or -errno when two share one or one has none (then: fd mode).
 * Event: one event's info records taken in (ev: its metadata, aligned; raw: the event as read).  Resolve (at the
 * end, the mounts open): every pending entry opened by its handle once, its identity and snapshot taken, or
 * marked dead.  Read done: the end of one read of the queue (the mount fds opened for it closed). */
int pf_trace_fid_setup(struct pf_tracer *t);
void pf_trace_fid_event(struct pf_tracer *t, const struct fanotify_event_metadata *ev, const void *raw);
void pf_trace_fid_resolve(struct pf_tracer *t);
void pf_trace_fid_read_done(struct pf_tracer *t);

/* trace_fs.c: the traced filesystem with this st_dev: 1 with its index in *fsi, or 0 (none). */
int pf_trace_fs_index(const struct pf_tracer *t, dev_t dev, int *fsi);
/* Whether page_dev is the page-cache device of a traced filesystem (1) or not (0). */
int pf_trace_fs_pages_of(const struct pf_tracer *t, dev_t page_dev);
/* The inode's generation (FS_IOC_GETVERSION), 0 where the filesystem has none. */
uint32_t pf_trace_generation(int fd);
/* Path of an open fd (malloc'd); NULL if the file is gone ("(deleted)") or has no plain path. */
char *pf_trace_fd_path(const struct pf_tracer *t, int fd);

#endif
