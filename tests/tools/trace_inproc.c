/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Test driver: trace a mount while this very process (a second thread, as replay does in 'prefetchd boot')
 * reads one file and a child process reads others.  The trace must hold the child's files only.
 * Usage: trace_inproc MOUNT OUTPUT OWN_FILE OTHER_FILE... */
#include "error.h"
#include "format.h"
#include "trace.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int read_all(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	char buf[65536];
	ssize_t n;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		;
	close(fd);
	return n < 0 ? -errno : 0;
}

static void *reader(void *arg)
{
	return (void *)(long)read_all(arg);
}

int main(int argc, char **argv)
{
	if (argc < 5) {
		fprintf(stderr, "usage: %s MOUNT OUTPUT OWN_FILE OTHER_FILE...\n", argv[0]);
		return 2;
	}
	const char *mounts[] = { argv[1] };
	char err[256] = "";
	struct pf_trace_opts o = { .mounts = mounts, .nmounts = 1, .err = err, .errlen = sizeof(err) };
	struct pf_tracer *t;
	int rc = pf_tracer_open(&o, &t);
	if (rc) {
		fprintf(stderr, "pf_tracer_open: %s\n", err[0] ? err : pf_strerror(rc));
		return 1;
	}
	pthread_t th;
	void *res;
	if (pthread_create(&th, NULL, reader, argv[3]) != 0 || pthread_join(th, &res) != 0 || res) {
		fprintf(stderr, "own read of %s failed\n", argv[3]);
		return 1;
	}
	pid_t child = fork();
	if (child == 0) {
		for (int i = 4; i < argc; i++)
			if (read_all(argv[i]))
				_exit(1);
		_exit(0);
	}
	int status;
	if (child < 0 || waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "child reads failed\n");
		return 1;
	}
	volatile sig_atomic_t stop = 1; /* take in what is queued, then stop */
	struct pf_image *img = NULL;
	struct pf_trace_stats st;
	if ((rc = pf_tracer_run(t, &stop)) || (rc = pf_tracer_finish(t, &img, &st)) ||
	    (rc = pf_image_save(argv[2], img))) {
		fprintf(stderr, "tracing failed: %s\n", pf_strerror(rc));
		return 1;
	}
	printf("own_events=%lu events=%lu files=%u dirs=%u\n", st.own_events, st.events, st.files, st.dirs);
	pf_image_free(img);
	pf_tracer_close(t);
	return 0;
}
