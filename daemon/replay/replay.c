/* SPDX-License-Identifier: GPL-2.0-or-later */
/* pf_replay: plan the layout's reads, then sweep the rotational filesystems (metadata pass, physical order) and
 * read the slow-flash ones (metadata pass, merged ranges in first-touch order) while readers pull the fast-flash
 * ones in access order. */
#include "replay.h"
#include "replay_internal.h"

#include "clock.h"
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

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

int pf_replay(const struct pf_image *l, const struct pf_replay_opts *o, struct pf_replay_stats *st)
{
	double t0 = pf_monotonic_s();
	memset(st, 0, sizeof(*st));
	if (!l || l->kind != PF_KIND_LAYOUT)
		return PF_EKIND;
	struct pf_rctx c = { .l = l, .o = o, .fd_budget = fd_budget() };
	atomic_init(&c.bytes, 0);
	atomic_init(&c.timed_out, 0);
	atomic_init(&c.stopped, 0);
	if (o && o->timeout_s > 0) {
		c.deadline_ns = pf_monotonic_ns() + (uint64_t)o->timeout_s * 1000000000ull;
		c.has_deadline = 1;
	}
	struct pf_ritem *items = NULL, *solid = NULL, *slow = NULL;
	struct pf_rpar *par = NULL;
	size_t n = 0;
	int rc = -ENOMEM;
	c.fs = calloc(l->nfs ? l->nfs : 1, sizeof(*c.fs));
	c.fstate = calloc(l->nfiles ? l->nfiles : 1, sizeof(*c.fstate));
	c.dir_done = calloc(l->nfiles ? l->nfiles : 1, 1);
	if (!c.fs || !c.fstate || !c.dir_done)
		goto out;
	pf_replay_resolve_fs(&c);
	for (uint32_t f = 0; f < l->nfs; f++)
		if (is_swept_ext(&c.fs[f], PF_MEDIUM_ROTATIONAL) || is_swept_ext(&c.fs[f], PF_MEDIUM_SLOW_FLASH))
			pf_replay_metadata_open(&c, f);

	struct pf_lorder_opts po = { .max_bytes = o ? o->max_bytes : 0 };
	rc = pf_rplan_build(l, &po, &items, &n);
	if (rc)
		goto out;

	/* Split by medium; the files of a filesystem that is not there are skipped at once. */
	size_t nrot = 0, nsolid = 0, nslow = 0;
	solid = malloc((n ? n : 1) * sizeof(*solid));
	slow = malloc((n ? n : 1) * sizeof(*slow));
	if (!solid || !slow) {
		rc = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		const struct pf_rfs *f = &c.fs[items[i].fs];
		if (!f->ok)
			atomic_store(&c.fstate[items[i].file], PF_RFILE_MISSING);
		else if (f->medium == PF_MEDIUM_FAST_FLASH)
			solid[nsolid++] = items[i];
		else if (f->medium == PF_MEDIUM_SLOW_FLASH)
			slow[nslow++] = items[i];
		else
			items[nrot++] = items[i];
	}
	if (nsolid) {
		rc = pf_replay_parallel_start(&c, solid, nsolid, o && o->threads > 0 ? o->threads : 4, &par);
		if (rc)
			goto out;
	}
	if (nrot) {
		/* init's files (their bin of their own, first: layout_order.h) before the metadata pass, which takes
		 * a while: init can start nothing until they are in.  Their inodes and the directories above them
		 * come first, in one sweep of their own (the head of the metadata pass). */
		size_t nhead = pf_rplan_head_first(l, items, nrot);
		if (nhead) {
			unsigned head_blocks = 0;
			for (uint32_t f = 0; f < l->nfs && !pf_rctx_should_stop(&c); f++)
				if (is_swept_ext(&c.fs[f], PF_MEDIUM_ROTATIONAL))
					(void)pf_replay_metadata(&c, f, 1, &head_blocks);
			rc = pf_replay_sweep(&c, items, nhead);
			if (rc)
				goto out;
		}
		if (o && o->nice_after_head) /* Linux: the calling thread's own nice value */
			(void)setpriority(PRIO_PROCESS, 0, o->nice_after_head);
		unsigned blocks = 0;
		for (uint32_t f = 0; f < l->nfs && !pf_rctx_should_stop(&c); f++)
			if (is_swept_ext(&c.fs[f], PF_MEDIUM_ROTATIONAL))
				(void)pf_replay_metadata(&c, f, 0, &blocks); /* only a hint: the data sweep goes on */
			else if (is_type(&c.fs[f], PF_MEDIUM_ROTATIONAL, "xfs"))
				(void)pf_replay_xfs_metadata(&c, f, &blocks);
			else if (is_type(&c.fs[f], PF_MEDIUM_ROTATIONAL, "btrfs"))
				(void)pf_replay_btrfs_metadata(&c, f);
		st->metadata_blocks += blocks;
		st->at_metadata = pf_monotonic_s();
		rc = pf_replay_sweep(&c, items + nhead, nrot - nhead);
		if (rc)
			goto out;
	}
	if (nslow) {
		/* The metadata pass first, as on a disk: the inode tables and directories in a few large reads
		 * instead of a request per inode-table block the opens would ask for one at a time. */
		unsigned blocks = 0;
		for (uint32_t f = 0; f < l->nfs && !pf_rctx_should_stop(&c); f++)
			if (is_swept_ext(&c.fs[f], PF_MEDIUM_SLOW_FLASH))
				(void)pf_replay_metadata(&c, f, 0, &blocks);
		st->metadata_blocks += blocks;
		st->at_metadata = pf_monotonic_s();
		rc = pf_replay_flash(&c, slow, nslow);
		if (rc)
			goto out;
	}
	st->placed_now = c.map.now;
	st->placed_layout = c.map.layout;
	st->placed_moved = c.map.moved;
	st->placed_pieces = c.map.pieces;
	st->at_placed = c.map_at;
	st->medium = nrot ? PF_MEDIUM_ROTATIONAL : nslow ? PF_MEDIUM_SLOW_FLASH : nsolid ? PF_MEDIUM_FAST_FLASH : PF_MEDIUM_UNKNOWN;
out:
	pf_replay_parallel_join(par);
	pf_replay_metadata_close(&c);
	if (c.fstate) {
		for (uint32_t i = 0; i < l->nfiles; i++) {
			unsigned char s = atomic_load(&c.fstate[i]);
			st->files += s == PF_RFILE_OK;
			st->files_skipped += s >= PF_RFILE_MISSING;
			st->files_missing += s == PF_RFILE_MISSING;
			st->files_changed += s == PF_RFILE_CHANGED;
		}
	}
	st->bytes = atomic_load(&c.bytes);
	st->timed_out = atomic_load(&c.timed_out);
	st->stopped = atomic_load(&c.stopped);
	st->at_end = pf_monotonic_s();
	st->seconds = st->at_end - t0;
	free(items);
	free(solid);
	free(slow);
	free(c.fs);
	free((void *)c.fstate);
	free(c.dir_done);
	return rc;
}
