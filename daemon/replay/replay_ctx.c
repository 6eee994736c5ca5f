/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The replay's shared state (see replay_ctx.h): when to stop, and where its paths are. */
#include "replay_ctx.h"

#include "clock.h"
#include "replay_path.h"

int pf_rctx_should_stop(struct pf_rctx *c)
{
	if (c->o && c->o->stop && *c->o->stop) {
		atomic_store(&c->stopped, 1);
		return 1;
	}
	if (atomic_load(&c->stopped) || atomic_load(&c->timed_out))
		return 1;
	if (c->has_deadline) {
		if (pf_monotonic_ns() >= c->deadline_ns) {
			atomic_store(&c->timed_out, 1);
			return 1;
		}
	}
	return 0;
}

const char *pf_rpath(const struct pf_rctx *c, const char *path)
{
	return c->o && c->o->relative_paths ? pf_replay_relpath(path) : path;
}
