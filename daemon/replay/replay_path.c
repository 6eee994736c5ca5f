/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Paths of a root not changed into yet (see replay_path.h). */
#include "replay_path.h"

const char *pf_replay_relpath(const char *path)
{
	while (*path == '/')
		path++;
	return *path ? path : ".";
}
