/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A traced filesystem unmounted during tracing.  Its fanotify mark dies with it, so whatever the boot opened
 * there afterwards is missing (even if it is mounted again): the trace must say so (PF_FS_GONE).  An inotify
 * watch on its root reports IN_UNMOUNT when the filesystem is really gone (the last mount of it, once no one
 * uses it: a lazy umount too), and holds nothing that would keep it mounted. */
#include "trace_internal.h"

#include <errno.h>
#include <stdint.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

void pf_trace_watch_unmounts(struct pf_tracer *t)
{
	t->ino_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (t->ino_fd < 0)
		return; /* noticed at the end instead (pf_trace_open_mounts) */
	for (int i = 0; i < t->nfs; i++) {
		/* IN_UNMOUNT comes with any watch; IN_DELETE_SELF (never for a mounted root) only makes the mask valid */
		t->fs[i].wd = inotify_add_watch(t->ino_fd, t->fs[i].mountpoint, IN_DELETE_SELF | IN_ONLYDIR);
		struct stat st;
		if (t->fs[i].wd >= 0 && (stat(t->fs[i].mountpoint, &st) < 0 || st.st_dev != t->fs[i].dev)) {
			inotify_rm_watch(t->ino_fd, t->fs[i].wd); /* remounted under us already: watching something else */
			t->fs[i].wd = -1;
		}
	}
}

void pf_trace_read_unmounts(struct pf_tracer *t)
{
	if (t->ino_fd < 0)
		return;
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	for (;;) {
		ssize_t len = read(t->ino_fd, buf, sizeof(buf));
		if (len <= 0) {
			if (len < 0 && errno == EINTR)
				continue;
			return; /* EAGAIN: nothing more */
		}
		for (char *p = buf; p < buf + len;) {
			const struct inotify_event *ev = (const struct inotify_event *)p;
			for (int i = 0; i < t->nfs && (ev->mask & IN_UNMOUNT); i++)
				if (t->fs[i].wd == ev->wd && !t->fs[i].gone) {
					t->fs[i].gone = 1;
					t->st.gone++;
				}
			p += sizeof(*ev) + ev->len;
		}
	}
}
