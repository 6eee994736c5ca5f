/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "privileges.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <systemd/sd-daemon.h>

int pf_privileges_drop(const cap_value_t *keep, int nkeep)
{
	cap_t cur = cap_get_proc();
	if (!cur)
		return -errno;
	cap_t next = cap_init();
	if (!next) {
		int e = errno;
		cap_free(cur);
		return -e;
	}
	cap_value_t kept[CAP_LAST_CAP + 1];
	int nkept = 0;
	for (int i = 0; i < nkeep; i++) {
		cap_flag_value_t v = CAP_CLEAR;
		if (cap_get_flag(cur, keep[i], CAP_PERMITTED, &v) == 0 && v == CAP_SET)
			kept[nkept++] = keep[i];
	}
	int rc = 0;
	if (nkept && (cap_set_flag(next, CAP_PERMITTED, nkept, kept, CAP_SET) < 0 ||
		      cap_set_flag(next, CAP_EFFECTIVE, nkept, kept, CAP_SET) < 0))
		rc = -errno;
	/* Bounding set first: dropping from it needs CAP_SETPCAP, which goes with the cap_set_proc below.  As
	 * uid 0, an execve would otherwise give back the full set. */
	cap_flag_value_t setpcap = CAP_CLEAR;
	if (rc == 0 && cap_get_flag(cur, CAP_SETPCAP, CAP_EFFECTIVE, &setpcap) == 0 && setpcap == CAP_SET) {
		for (cap_value_t c = 0; cap_valid(c) && c <= CAP_LAST_CAP; c++) {
			int keepit = 0;
			for (int i = 0; i < nkept; i++)
				keepit |= kept[i] == c;
			if (!keepit && CAP_IS_SUPPORTED(c) && cap_drop_bound(c) < 0 && errno != EINVAL) {
				rc = -errno;
				break;
			}
		}
	}
	if (rc == 0 && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		rc = -errno;
	if (rc == 0 && cap_set_proc(next) < 0)
		rc = -errno;
	cap_free(next);
	cap_free(cur);
	return rc;
}

int pf_notify_ready(void)
{
	return sd_notify(0, "READY=1");
}

int pf_notify_stopping(void)
{
	return sd_notify(0, "STOPPING=1");
}

int pf_notify_adopt(pid_t pid, const char *status)
{
	return sd_notifyf(0, "MAINPID=%ld\nREADY=1\nSTATUS=%s", (long)pid, status);
}

int pf_notify_status(const char *fmt, ...)
{
	char msg[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return sd_notifyf(0, "STATUS=%s", msg);
}
