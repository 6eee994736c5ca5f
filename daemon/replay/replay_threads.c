/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Threads of a replay step that share one job (replay_internal.h): each runs it until the job's own counter runs
 * out; none started, the caller runs it. */
#include "replay_internal.h"

void pf_rthreads_start(struct pf_rthreads *t, int threads, void *(*run)(void *), void *arg)
{
	if (threads < 1)
		threads = 1;
	if (threads > PF_RTHREADS_MAX)
		threads = PF_RTHREADS_MAX;
	t->run = run, t->arg = arg, t->started = 0;
	while (t->started < threads && pthread_create(&t->tid[t->started], NULL, run, arg) == 0)
		t->started++;
}

void pf_rthreads_join(struct pf_rthreads *t)
{
	for (int i = 0; i < t->started; i++)
		pthread_join(t->tid[i], NULL);
	if (!t->started) /* no thread could start: do the work here */
		t->run(t->arg);
}
