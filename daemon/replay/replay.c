/* SPDX-License-Identifier: GPL-2.0-or-later */
/* pf_replay: plan the layout's reads, then sweep the rotational filesystems (metadata pass, physical order) and
 * read the slow-flash ones (metadata pass, merged ranges in first-touch order) while readers pull the fast-flash
 * ones in access order. */
#include "replay.h"
#include "replay_internal.h"

#include "clock.h"
#include "config.h"

#include <errno.h>
#include <linux/ioprio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

static int fd_budget(void)
{
	struct rlimit rl;
	rlim_t b = getrlimit(RLIMIT_NOFILE, &rl) == 0 ? rl.rlim_cur / 4 : 64;
	return b < 16 ? 16 : b > 1024 ? 1024 : (int)b;
}

/* A filesystem the metadata pass works on: ext2/3/4 on a device of this medium (rotational: seeks saved; slow
 * flash: requests saved, the inode tables read in a few large ones). */
static int is_swept_ext(const struct pf_rfs *f, int medium)
{
	return f->ok && f->medium == medium && f->devname[0] &&
	       (!strcmp(f->type, "ext2") || !strcmp(f->type, "ext3") || !strcmp(f->type, "ext4"));
}

static int is_type(const struct pf_rfs *f, int medium, const char *type)
{
	return f->ok && f->medium == medium && !strcmp(f->type, type);
}

/* The work list split by medium: rotational items stay in items (nrot), the others are copied out.  The
 * files of a filesystem that is not there are skipped at once. */
struct split {
	struct pf_ritem *items, *solid, *slow;
	size_t n, nrot, nsolid, nslow;
};

/* Step 1: the state, the filesystems as they are now, the metadata pass's handles.  0 or -ENOMEM. */
static int start(struct pf_rctx *c, const struct pf_image *l, const struct pf_replay_opts *o)
{
	*c = (struct pf_rctx){ .l = l, .o = o, .fd_budget = fd_budget() };
	atomic_init(&c->bytes, 0);
	atomic_init(&c->timed_out, 0);
	atomic_init(&c->stopped, 0);
	if (o && o->timeout_s > 0) {
		c->deadline_ns = pf_monotonic_ns() + (uint64_t)o->timeout_s * 1000000000ull;
		c->has_deadline = 1;
	}
	c->fs = calloc(l->nfs ? l->nfs : 1, sizeof(*c->fs));
	c->fstate = calloc(l->nfiles ? l->nfiles : 1, sizeof(*c->fstate));
	c->dir_done = calloc(l->nfiles ? l->nfiles : 1, 1);
	if (!c->fs || !c->fstate || !c->dir_done)
		return -ENOMEM;
	pf_replay_resolve_fs(c);
	for (uint32_t f = 0; f < l->nfs; f++)
		if (is_swept_ext(&c->fs[f], PF_MEDIUM_ROTATIONAL) || is_swept_ext(&c->fs[f], PF_MEDIUM_SLOW_FLASH))
			pf_replay_metadata_open(c, f);
	return 0;
}

/* Step 2: the read plan's work list (read_plan.h), split by medium.  0 or -ENOMEM. */
static int plan(struct pf_rctx *c, struct split *sp)
{
	struct pf_lorder_opts po = { .max_bytes = c->o ? c->o->max_bytes : 0 };
	int rc = pf_rplan_build(c->l, &po, &sp->items, &sp->n);
	if (rc)
		return rc;
	sp->solid = malloc((sp->n ? sp->n : 1) * sizeof(*sp->solid));
	sp->slow = malloc((sp->n ? sp->n : 1) * sizeof(*sp->slow));
	if (!sp->solid || !sp->slow)
		return -ENOMEM;
	for (size_t i = 0; i < sp->n; i++) {
		const struct pf_ritem *it = &sp->items[i];
		const struct pf_rfs *f = &c->fs[it->fs];
		if (!f->ok)
			atomic_store(&c->fstate[it->file], PF_RFILE_MISSING);
		else if (f->medium == PF_MEDIUM_FAST_FLASH)
			sp->solid[sp->nsolid++] = *it;
		else if (f->medium == PF_MEDIUM_SLOW_FLASH)
			sp->slow[sp->nslow++] = *it;
		else
			sp->items[sp->nrot++] = *it;
	}
	return 0;
}

/* The metadata pass of every rotational filesystem (ext: head only, or all of it; XFS; btrfs): only a hint,
 * the data sweep goes on whatever it did. */
static void metadata_rotational(struct pf_rctx *c, int head, unsigned *blocks)
{
	for (uint32_t f = 0; f < c->l->nfs && !pf_rctx_should_stop(c); f++)
		if (is_swept_ext(&c->fs[f], PF_MEDIUM_ROTATIONAL))
			(void)pf_replay_metadata(c, f, head, blocks);
		else if (!head && is_type(&c->fs[f], PF_MEDIUM_ROTATIONAL, "xfs"))
			(void)pf_replay_xfs_metadata(c, f); /* the inodes; the directories within the sweep */
		else if (!head && is_type(&c->fs[f], PF_MEDIUM_ROTATIONAL, "btrfs"))
			(void)pf_replay_btrfs_metadata(c, f, blocks);
}

/* REPLAY_IDLE_IO: the calling thread's reads, and those of the threads it starts from now on (a new thread
 * inherits its creator's I/O priority), in the idle class.  Best effort: a kernel without I/O classes leaves
 * the replay as it was. */
static void idle_io(const struct pf_rctx *c)
{
	if (c->o && c->o->idle_io_after_head)
		(void)syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS, 0, IOPRIO_PRIO_VALUE(IOPRIO_CLASS_IDLE, 0));
}

/* init's files first, a step of rotational() and slow_flash(): to the front of items[0 .. n) (their bin of
 * their own: layout_order.h), their inodes and the directories above them read by meta's head pass, then their
 * data by read.  *nhead: how many (0: none, or all of them: then they go with the rest).  0 or -ENOMEM. */
static int init_head(struct pf_rctx *c, struct pf_ritem *items, size_t n,
		     void (*meta)(struct pf_rctx *, int, unsigned *), int (*read)(struct pf_rctx *, struct pf_ritem *, size_t),
		     size_t *nhead)
{
	*nhead = pf_rplan_head_first(c->l, items, n);
	if (!*nhead)
		return 0;
	unsigned blocks = 0;
	meta(c, 1, &blocks);
	return read(c, items, *nhead);
}

/* Step 4: the rotational filesystems.  init's files (their bin of their own, first: layout_order.h) before
 * the metadata pass, which takes a while: init can start nothing until they are in.  Their inodes and the
 * directories above them come first, in one sweep of their own (the head of the metadata pass).  Then the
 * rest, at the nice value asked for.  0 or -ENOMEM. */
static int rotational(struct pf_rctx *c, struct split *sp, struct pf_replay_stats *st)
{
	if (!sp->nrot)
		return 0;
	size_t nhead;
	int rc = init_head(c, sp->items, sp->nrot, metadata_rotational, pf_replay_sweep, &nhead);
	if (rc)
		return rc;
	if (c->o && c->o->nice_after_head) /* Linux: the calling thread's own nice value */
		(void)setpriority(PRIO_PROCESS, 0, c->o->nice_after_head);
	idle_io(c);
	unsigned blocks = 0;
	metadata_rotational(c, 0, &blocks);
	st->metadata_blocks += blocks;
	st->at_metadata = pf_monotonic_s();
	rc = pf_replay_sweep(c, sp->items + nhead, sp->nrot - nhead);
	st->metadata_blocks += c->meta_blocks;
	return rc;
}

/* The metadata pass on the slow-flash ext filesystems (head: init's files and the directories above them). */
static void metadata_slow_flash(struct pf_rctx *c, int head, unsigned *blocks)
{
	for (uint32_t f = 0; f < c->l->nfs && !pf_rctx_should_stop(c); f++)
		if (is_swept_ext(&c->fs[f], PF_MEDIUM_SLOW_FLASH))
			(void)pf_replay_metadata(c, f, head, blocks);
}

/* Step 5: the slow-flash filesystems.  init's files first, as on a disk: the boot can start nothing until they
 * are in, and the whole metadata pass before them kept init waiting for its own binary (on the SD-card model a
 * fifth of a second of the card's time, the boot reading them itself meanwhile).  Then the metadata pass: the
 * inode tables and directories in a few large reads instead of a request per inode-table block the opens would
 * ask for one at a time.  0 or -ENOMEM. */
static int slow_flash(struct pf_rctx *c, struct split *sp, struct pf_replay_stats *st)
{
	if (!sp->nslow)
		return 0;
	size_t nhead;
	int rc = init_head(c, sp->slow, sp->nslow, metadata_slow_flash, pf_replay_flash, &nhead);
	if (rc)
		return rc;
	idle_io(c);
	unsigned blocks = 0;
	metadata_slow_flash(c, 0, &blocks);
	st->metadata_blocks += blocks;
	st->at_metadata = pf_monotonic_s();
	return pf_replay_flash(c, sp->slow + nhead, sp->nslow - nhead);
}

/* What the placing did and which medium was read (a completed replay). */
static void record_placing(const struct pf_rctx *c, const struct split *sp, struct pf_replay_stats *st)
{
	st->placed_now = c->map.now;
	st->placed_layout = c->map.layout;
	st->placed_moved = c->map.moved;
	st->placed_pieces = c->map.pieces;
	st->at_placed = c->map_at;
	st->medium = sp->nrot	  ? PF_MEDIUM_ROTATIONAL
		     : sp->nslow  ? PF_MEDIUM_SLOW_FLASH
		     : sp->nsolid ? PF_MEDIUM_FAST_FLASH
				  : PF_MEDIUM_UNKNOWN;
}

/* Last step, on every path: the readers joined, the handles closed, each file's outcome counted, freed. */
static void finish(struct pf_rctx *c, struct pf_rpar *par, struct split *sp, double t0, struct pf_replay_stats *st)
{
	pf_replay_parallel_join(par);
	pf_replay_metadata_close(c);
	pf_replay_xfs_close(c);
	if (c->fstate) {
		for (uint32_t i = 0; i < c->l->nfiles; i++) {
			unsigned char s = atomic_load(&c->fstate[i]);
			st->files += s == PF_RFILE_OK;
			st->files_skipped += s >= PF_RFILE_MISSING;
			st->files_missing += s == PF_RFILE_MISSING;
			st->files_changed += s == PF_RFILE_CHANGED;
		}
	}
	st->bytes = atomic_load(&c->bytes);
	st->timed_out = atomic_load(&c->timed_out);
	st->stopped = atomic_load(&c->stopped);
	st->at_end = pf_monotonic_s();
	st->seconds = st->at_end - t0;
	free(sp->items);
	free(sp->solid);
	free(sp->slow);
	free(c->fs);
	free((void *)c->fstate);
	free(c->dir_done);
}

int pf_replay(const struct pf_image *l, const struct pf_replay_opts *o, struct pf_replay_stats *st)
{
	double t0 = pf_monotonic_s();
	memset(st, 0, sizeof(*st));
	if (!l || l->kind != PF_KIND_LAYOUT)
		return PF_EKIND;
	struct pf_rctx c;
	struct split sp = { 0 };
	struct pf_rpar *par = NULL;
	int rc = start(&c, l, o);
	if (!rc)
		rc = plan(&c, &sp);
	if (!rc && sp.nsolid) /* step 3: the fast-flash readers, in access order, while the rest goes on */
		rc = pf_replay_parallel_start(&c, sp.solid, sp.nsolid, o && o->threads > 0 ? o->threads : 4, &par);
	if (!rc)
		rc = rotational(&c, &sp, st);
	if (!rc)
		rc = slow_flash(&c, &sp, st);
	if (!rc)
		record_placing(&c, &sp, st);
	finish(&c, par, &sp, t0, st);
	return rc;
}
