/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"
#include "error.h"
#include "log.h"
#include "note.h"
#include "number.h"
#include "safe_file.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum vtype { V_INT, V_LONG, V_BOOL, V_PATH, V_MEDIUM, V_MOUNTS, V_IGNORED };

/* One row per key: its name, where it goes, its range and its default.  The parser, the defaults, the ranges
 * the warnings state and 'prefetchd config' all read this table, so they cannot disagree. */
struct key {
	const char *name;
	enum vtype type;
	size_t off;
	long min, max;    /* V_INT, V_LONG */
	long def;         /* V_INT, V_LONG, V_BOOL, V_MEDIUM */
	const char *text; /* V_PATH: the default */
};

#define NUM(n, t, f, lo, hi, d) { n, t, offsetof(struct pf_config, f), lo, hi, d, NULL }
#define STR(n, t, f, d) { n, t, offsetof(struct pf_config, f), 0, 0, 0, d }
static const struct key keys[] = {
	NUM("ENABLE_PREFETCH", V_BOOL, enable_prefetch, 0, 1, 1),
	STR("PREFETCH_DIR", V_PATH, state_dir, "/var/lib/prefetch"),
	STR("PREFETCH_RUNTIME_DIR", V_PATH, runtime_dir, "/run/prefetch"),
	NUM("LOGIN_TRACING_DELAY", V_INT, login_tracing_delay, 0, 3600, 60),
	NUM("TRACE_TIMEOUT", V_INT, trace_timeout, 1, 86400, 300),
	NUM("TRACE_AGGREGATION_COUNT", V_INT, aggregation_count, 1, 32, 3),
	NUM("ENABLE_FILE_REORDERING", V_BOOL, enable_reordering, 0, 1, 0),
	NUM("CHUNK_SIZE_BLOCKS", V_LONG, chunk_size_blocks, 1, 1L << 30, 2000),
	NUM("REORDER_TIME_BUDGET", V_INT, reorder_time_budget, 1, 3600, 20),
	NUM("REORDER_FREE_RESERVE_PERCENT", V_INT, reorder_reserve_percent, 0, 50, 5),
	NUM("MAX_PREFETCH_MB", V_INT, max_prefetch_mb, 1, 1 << 20, 256),
	NUM("MAX_PREFETCH_FILES", V_INT, max_prefetch_files, 1, 1 << 20, 20000),
	NUM("REPLAY_TIMEOUT", V_INT, replay_timeout, 1, 3600, 60),
	NUM("REPLAY_THREADS", V_INT, replay_threads, 1, 64, 4),
	NUM("REPLAY_IDLE_IO", V_BOOL, replay_idle_io, 0, 1, 0),
	NUM("PREFETCH_MEDIUM", V_MEDIUM, medium, 0, 0, PF_MEDIUM_AUTO),
	STR("TRACE_MOUNTS", V_MOUNTS, nmounts, ""),
	NUM("ENABLE_REPLAY", V_BOOL, enable_replay, 0, 1, 1),
	NUM("START_FROM_INITRAMFS", V_BOOL, start_from_initramfs, 0, 1, 1),
	NUM("SELF_CHECK_INTERVAL", V_INT, self_check_interval, 0, 1000, 8),
	NUM("REORDER_MIN_GAIN_PERCENT", V_INT, reorder_min_gain_percent, -100, 100, 10),
	NUM("REORDER_ERASE_BLOCK_KB", V_INT, reorder_erase_block_kb, 0, 65536, 0),
	NUM("REORDER_WRITE_BUDGET_MB", V_INT, reorder_write_budget_mb, 0, 1 << 20, 0),
	NUM("REORDER_MAKE_ROOM", V_BOOL, reorder_make_room, 0, 1, 1),
	/* historical (2007) keys of features that do not exist any more: accepted without a warning */
	STR("ENABLE_APP_PREFETCHING", V_IGNORED, enable_prefetch, NULL),
};
#undef NUM
#undef STR
#define NKEYS (sizeof(keys) / sizeof(keys[0]))

static const char *const medium_names[] = { [PF_MEDIUM_AUTO] = "auto", [PF_MEDIUM_FORCE_ROTATIONAL] = "rotational",
					     [PF_MEDIUM_FORCE_FAST_FLASH] = "fast-flash",
					     [PF_MEDIUM_FORCE_SLOW_FLASH] = "slow-flash" };

int pf_medium_override_parse(const char *val)
{
	if (!strcasecmp(val, "auto"))
		return PF_MEDIUM_AUTO;
	if (!strcasecmp(val, "rotational") || !strcasecmp(val, "hdd"))
		return PF_MEDIUM_FORCE_ROTATIONAL;
	if (!strcasecmp(val, "slow-flash"))
		return PF_MEDIUM_FORCE_SLOW_FLASH;
	/* the last three: the names from before the flash classes, in old configs */
	if (!strcasecmp(val, "fast-flash") || !strcasecmp(val, "ssd") || !strcasecmp(val, "solid") ||
	    !strcasecmp(val, "nonrotational"))
		return PF_MEDIUM_FORCE_FAST_FLASH;
	return -EINVAL;
}

void pf_config_defaults(struct pf_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	for (size_t i = 0; i < NKEYS; i++) {
		char *field = (char *)cfg + keys[i].off;
		switch (keys[i].type) {
		case V_INT:
		case V_BOOL:
		case V_MEDIUM: *(int *)field = (int)keys[i].def; break;
		case V_LONG: *(long *)field = keys[i].def; break;
		case V_PATH: snprintf(field, sizeof(cfg->state_dir), "%s", keys[i].text); break;
		case V_MOUNTS: cfg->nmounts = 0; break;
		case V_IGNORED: break;
		}
	}
}

static const struct key *find_key(const char *name, size_t len)
{
	for (size_t i = 0; i < NKEYS; i++)
		if (strlen(keys[i].name) == len && !strncmp(keys[i].name, name, len))
			return &keys[i];
	return NULL;
}

const char *pf_config_key_name(size_t i)
{
	for (size_t k = 0; k < NKEYS; k++)
		if (keys[k].type != V_IGNORED && i-- == 0)
			return keys[k].name;
	return NULL;
}

int pf_config_get(const struct pf_config *cfg, const char *name, char *buf, size_t len)
{
	const struct key *k = find_key(name, strlen(name));
	if (!k || k->type == V_IGNORED)
		return -ENOENT;
	const char *field = (const char *)cfg + k->off;
	size_t n = 0;
	switch (k->type) {
	case V_INT:
	case V_BOOL: n = (size_t)snprintf(buf, len, "%d", *(const int *)field); break;
	case V_LONG: n = (size_t)snprintf(buf, len, "%ld", *(const long *)field); break;
	case V_PATH: n = (size_t)snprintf(buf, len, "%s", field); break;
	case V_MEDIUM: {
		int m = *(const int *)field;
		n = (size_t)snprintf(buf, len, "%s", m >= 0 && m <= PF_MEDIUM_FORCE_MAX ? medium_names[m] : "auto");
		break;
	}
	case V_MOUNTS:
		if (len)
			buf[0] = '\0';
		for (int i = 0; i < cfg->nmounts; i++)
			n += (size_t)snprintf(buf + (n < len ? n : len), n < len ? len - n : 0, "%s%s", i ? " " : "",
					      cfg->mounts[i]);
		break;
	case V_IGNORED: break;
	}
	return n < len ? 0 : -ENOSPC;
}

/* Each problem one line noted to warnings: "origin:line: reason; line ignored". */
static void warn(struct pf_note *warnings, const char *origin, int line, const char *fmt, ...)
{
	if (!warnings)
		return;
	char msg[200];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	pf_note(warnings, "%s:%d: %s; line ignored", origin, line, msg);
}

static int parse_bool(const char *s, int *out)
{
	static const char *yes[] = { "1", "yes", "true", "on", "y" }, *no[] = { "0", "no", "false", "off", "n" };
	for (size_t i = 0; i < 5; i++) {
		if (!strcasecmp(s, yes[i]))
			return *out = 1, 0;
		if (!strcasecmp(s, no[i]))
			return *out = 0, 0;
	}
	return -EINVAL;
}

static int is_blank(char c)
{
	return c == ' ' || c == '\t';
}

/* Refuse the value: err gets why (static text), -EINVAL returned. */
static int refuse(char *err, size_t errlen, const char *why)
{
	snprintf(err, errlen, "%s", why);
	return -EINVAL;
}

/* The value after '=' (in place, unquoted) into *val, read as sh reads it in an assignment.  Returns 0, or
 * -EINVAL with the reason in err when sh would read it differently from what we take, or do more than assign
 * (run, expand, substitute). */
static int read_value(char *in, char **val, char *err, size_t errlen)
{
	char *out = in;
	*val = in;
	if (is_blank(*in))
		return refuse(err, errlen, "no spaces allowed around '='");
	while (*in && !is_blank(*in)) {
		char c = *in;
		if (c == '\'') {
			char *end = strchr(in + 1, '\'');
			if (!end)
				return refuse(err, errlen, "unterminated quote");
			memmove(out, in + 1, (size_t)(end - in - 1));
			out += end - in - 1;
			in = end + 1;
		} else if (c == '"') {
			for (in++; *in && *in != '"'; in++) {
				if (*in == '$')
					return refuse(err, errlen, "$ expansion is not supported");
				if (*in == '`')
					return refuse(err, errlen, "` command substitution is not supported");
				/* inside "...", sh drops a backslash only before these; elsewhere it stays */
				if (*in == '\\' && in[1] && strchr("\"\\$`", in[1]))
					in++;
				*out++ = *in;
			}
			if (*in != '"')
				return refuse(err, errlen, "unterminated quote");
			in++;
		} else if (c == '$') {
			return refuse(err, errlen, "$ expansion is not supported");
		} else if (c == '`') {
			return refuse(err, errlen, "` command substitution is not supported");
		} else if (c == '\\') {
			return refuse(err, errlen, "a backslash outside quotes is not supported; quote the value");
		} else if (c == '~') {
			return refuse(err, errlen, "~ expansion is not supported");
		} else if (c == '\r') {
			return refuse(err, errlen, "carriage return in the line (DOS line ends?)");
		} else if (strchr(";&|<>()", c)) {
			return refuse(err, errlen, "unquoted ; & | < > ( ) are not allowed; quote the value");
		} else {
			*out++ = *in++;
		}
	}
	while (is_blank(*in))
		in++;
	if (*in && *in != '#') /* sh: a word after the assignment is a command to run */
		return refuse(err, errlen, "text after the value; quote a value that holds spaces");
	*out = '\0';
	return 0;
}

static void set_key(struct pf_config *cfg, const struct key *k, const char *val, const char *origin, int line,
		    struct pf_note *warnings)
{
	char *field = (char *)cfg + k->off;
	long v;
	int b;
	switch (k->type) {
	case V_IGNORED:
		return;
	case V_INT:
	case V_LONG:
		if (pf_parse_long(val, k->min, k->max, &v)) {
			warn(warnings, origin, line, "%s: '%s' is not a number (%ld..%ld)", k->name, val, k->min, k->max);
			return;
		}
		if (k->type == V_INT)
			*(int *)field = (int)v;
		else
			*(long *)field = v;
		return;
	case V_BOOL:
		if (parse_bool(val, &b)) {
			warn(warnings, origin, line, "%s: '%s' is not 0 or 1 (or yes/no, true/false, on/off)", k->name, val);
			return;
		}
		*(int *)field = b;
		return;
	case V_PATH:
		if (val[0] != '/' || strlen(val) >= sizeof(cfg->state_dir)) {
			warn(warnings, origin, line, "%s: '%s' is not an absolute path (at most %zu bytes)", k->name, val,
			     sizeof(cfg->state_dir) - 1);
			return;
		}
		strcpy(field, val);
		return;
	case V_MEDIUM: {
		int m = pf_medium_override_parse(val);
		if (m < 0)
			warn(warnings, origin, line, "%s: '%s' is not auto, rotational, slow-flash or fast-flash", k->name,
			     val);
		else
			cfg->medium = m;
		return;
	}
	case V_MOUNTS: {
		/* space- or comma-separated absolute paths; one bad entry and the line is ignored as a whole */
		char tmp[4096];
		char mounts[PF_CONFIG_MAX_MOUNTS][sizeof(cfg->mounts[0])] = { { 0 } }; /* no stack bytes copied out */
		snprintf(tmp, sizeof(tmp), "%s", val);
		int n = 0;
		for (char *save, *tok = strtok_r(tmp, " ,\t", &save); tok; tok = strtok_r(NULL, " ,\t", &save)) {
			if (n == PF_CONFIG_MAX_MOUNTS) {
				warn(warnings, origin, line, "%s: more than %d filesystems", k->name, PF_CONFIG_MAX_MOUNTS);
				return;
			}
			if (tok[0] != '/' || strlen(tok) >= sizeof(mounts[0])) {
				warn(warnings, origin, line, "%s: '%s' is not an absolute path (at most %zu bytes)", k->name,
				     tok, sizeof(mounts[0]) - 1);
				return;
			}
			strcpy(mounts[n++], tok);
		}
		memcpy(cfg->mounts, mounts, (size_t)n * sizeof(mounts[0]));
		cfg->nmounts = n;
		return;
	}
	}
}

/* One line (a NUL-terminated copy, changed in place). */
static void parse_line(struct pf_config *cfg, char *s, const char *origin, int lineno, struct pf_note *warnings)
{
	while (is_blank(*s))
		s++;
	if (!strncmp(s, "export", 6) && is_blank(s[6]))
		for (s += 6; is_blank(*s);)
			s++;
	if (!*s || *s == '#' || (*s == '\r' && !s[1]))
		return;
	char *name = s;
	if (isalpha((unsigned char)*s) || *s == '_')
		while (isalnum((unsigned char)*s) || *s == '_')
			s++;
	size_t namelen = (size_t)(s - name);
	char *after = s;
	while (is_blank(*after))
		after++;
	if (!namelen || *after != '=') {
		warn(warnings, origin, lineno, "not a KEY=value line");
		return;
	}
	name[namelen] = '\0'; /* clobbers the blank or the '=' itself: the value starts after it */
	const struct key *k = find_key(name, namelen);
	if (!k) {
		warn(warnings, origin, lineno, "unknown key %s", name);
		return;
	}
	if (after != s) { /* "KEY = 5": sh runs a command KEY */
		warn(warnings, origin, lineno, "%s: no spaces allowed around '='", k->name);
		return;
	}
	char *val, err[128];
	if (read_value(after + 1, &val, err, sizeof(err))) {
		warn(warnings, origin, lineno, "%s: %s", k->name, err);
		return;
	}
	set_key(cfg, k, val, origin, lineno, warnings);
}

void pf_config_parse(struct pf_config *cfg, const char *text, const char *origin, struct pf_note *warnings)
{
	int lineno = 0;
	const char *p = text;
	while (*p) {
		const char *eol = strchr(p, '\n');
		size_t len = eol ? (size_t)(eol - p) : strlen(p);
		char line[4096];
		lineno++;
		if (len >= sizeof(line)) {
			warn(warnings, origin, lineno, "longer than %zu bytes", sizeof(line) - 1);
		} else {
			memcpy(line, p, len);
			line[len] = '\0';
			parse_line(cfg, line, origin, lineno, warnings);
		}
		if (!eol)
			break;
		p = eol + 1;
	}
}

int pf_config_load(struct pf_config *cfg, const char *path, struct pf_note *warnings)
{
	char *text;
	size_t len;
	int rc = pf_read_text(path, 1 << 20, 0, &text, &len);
	if (rc)
		return rc;
	const char *nul = memchr(text, '\0', len);
	pf_config_parse(cfg, text, path, warnings);
	if (nul) {
		int line = 1;
		for (const char *c = text; c < nul; c++)
			line += *c == '\n';
		warn(warnings, path, line, "a NUL byte; the rest of the file is not read");
	}
	free(text);
	return 0;
}

const char *pf_config_default_path(void)
{
	const char *given = getenv("PREFETCH_CONFIG");
	return given && given[0] ? given : PF_DEFAULT_CONFIG;
}

int pf_config_read(struct pf_config *cfg, const char *path)
{
	char kept[PF_CONFIG_WARNINGS_SIZE], line[PF_NOTE_LINE_MAX];
	struct pf_note warnings = pf_note_into(kept, sizeof(kept));
	const char *file = path ? path : pf_config_default_path();
	pf_config_defaults(cfg);
	int rc = pf_config_load(cfg, file, &warnings);
	for (size_t pos = 0; pf_note_next(&warnings, &pos, line, sizeof(line));)
		pf_warn("%s", line);
	if (warnings.lines > warnings.kept)
		pf_warn("%s: %u more problems not shown", file, warnings.lines - warnings.kept);
	return rc == -ENOENT && !path ? 0 : rc;
}

void pf_config_read_or_defaults(struct pf_config *cfg, const char *path)
{
	int rc = pf_config_read(cfg, path);
	if (rc)
		pf_warn("cannot read %s: %s; using defaults", path ? path : pf_config_default_path(), pf_strerror(rc));
}
