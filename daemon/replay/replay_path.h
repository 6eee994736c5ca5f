/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Paths of a root not changed into yet (the replay started from the initramfs: opts.relative_paths). */
#ifndef PREFETCH_REPLAY_PATH_H
#define PREFETCH_REPLAY_PATH_H

/* An absolute path as seen from the root's directory (relative_paths): leading slashes dropped, "/" is ".". */
const char *pf_replay_relpath(const char *path);

#endif
