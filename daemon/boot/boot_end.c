/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "boot_end.h"
#include "boot_log.h"
#include "clock.h"
#include "state_dir.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-daemon.h>

int pf_boot_end_parse(const char *text, double *uptime)
{
	char *end;
	errno = 0;
	double v = strtod(text, &end);
	if (errno || end == text || !isfinite(v) || v < 0 || v > 1e7 || (*end && *end != ' ' && *end != '\n'))
		return -EINVAL;
	*uptime = v;
	return 0;
}

/* In the runtime directory: read as a state file (state_dir.h: not through a link, not a FIFO). */
static int from_file(const char *path, double *uptime)
{
	char *text;
	size_t len;
	int rc = pf_state_read_text(path, 128, &text, &len);
	if (rc)
		return rc;
	rc = pf_boot_end_parse(text, uptime);
	free(text);
	return rc;
}

/* The manager's private socket needs no D-Bus daemon (early boot, minimal systems); the system bus is the
 * fallback.  Short timeout: a stuck bus must not hold up the end of tracing. */
static int systemd_bus(sd_bus **out)
{
	sd_bus *bus = NULL;
	int rc = sd_bus_new(&bus);
	if (rc >= 0)
		rc = sd_bus_set_address(bus, "unix:path=/run/systemd/private");
	if (rc >= 0)
		rc = sd_bus_start(bus);
	if (rc < 0) {
		sd_bus_unref(bus);
		bus = NULL;
		rc = sd_bus_open_system(&bus);
		if (rc < 0)
			return rc;
	}
	sd_bus_set_method_call_timeout(bus, 2 * 1000000ULL);
	*out = bus;
	return 0;
}

/* When default.target was reached: the fallback while the boot transaction has not finished (a slow unit
 * that default.target does not wait for keeps FinishTimestamp at 0). */
static int default_target_reached(sd_bus *bus, uint64_t *usec)
{
	sd_bus_error err = SD_BUS_ERROR_NULL;
	sd_bus_message *reply = NULL;
	const char *unit_path;
	int rc = sd_bus_call_method(bus, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
				    "org.freedesktop.systemd1.Manager", "GetUnit", &err, &reply, "s", "default.target");
	if (rc >= 0)
		rc = sd_bus_message_read(reply, "o", &unit_path);
	if (rc >= 0)
		rc = sd_bus_get_property_trivial(bus, "org.freedesktop.systemd1", unit_path,
						 "org.freedesktop.systemd1.Unit", "ActiveEnterTimestampMonotonic", &err,
						 't', usec);
	sd_bus_message_unref(reply);
	sd_bus_error_free(&err);
	return rc < 0 ? rc : *usec ? 0 : -EAGAIN;
}

static int from_systemd(double *uptime, char *source, size_t len)
{
	if (sd_booted() <= 0)
		return -ENOENT;
	sd_bus *bus;
	int rc = systemd_bus(&bus);
	if (rc < 0)
		return rc;
	sd_bus_error err = SD_BUS_ERROR_NULL;
	uint64_t usec = 0;
	rc = sd_bus_get_property_trivial(bus, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
					 "org.freedesktop.systemd1.Manager", "FinishTimestampMonotonic", &err, 't', &usec);
	sd_bus_error_free(&err);
	if (rc >= 0 && usec > 0) {
		snprintf(source, len, "systemd");
	} else if (default_target_reached(bus, &usec) == 0) {
		snprintf(source, len, "default.target");
		rc = 0;
	} else {
		rc = -EAGAIN; /* still booting */
	}
	sd_bus_flush_close_unref(bus);
	if (rc < 0)
		return rc;
	*uptime = (double)usec / 1e6;
	return 0;
}

double pf_boot_end(const char *boot_end_file, char *source, size_t len)
{
	double up;
	if (boot_end_file && from_file(boot_end_file, &up) == 0) {
		snprintf(source, len, "file");
		return up;
	}
	if (from_systemd(&up, source, len) == 0)
		return up;
	snprintf(source, len, "trace-stop");
	return pf_uptime(&up) ? 0 : up;
}
