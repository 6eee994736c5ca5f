/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"
#include "log.h"
#include "safe_file.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void pf_config_defaults(struct pf_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->enable_prefetch = 1;
	strcpy(cfg->state_dir, "/var/lib/prefetch");
	strcpy(cfg->runtime_dir, "/run/prefetch");
	cfg->login_tracing_delay = 60;
	cfg->trace_timeout = 300;
	cfg->aggregation_count = 3;
	cfg->enable_reordering = 0;
	cfg->chunk_size_blocks = 2000;
	cfg->reorder_time_budget = 20;
	cfg->reorder_reserve_percent = 5;
	cfg->max_prefetch_mb = 256;
	cfg->max_prefetch_files = 20000;
	cfg->replay_timeout = 60;
	cfg->replay_threads = 4;
	cfg->medium = PF_MEDIUM_AUTO;
	cfg->enable_replay = 1;
	cfg->start_from_initramfs = 1;
}

static void warn(struct pf_config_diag *diag, const char *origin, int line, const char *fmt, ...)
{
	if (!diag || diag->nwarnings >= PF_CONFIG_MAX_WARNINGS)
		return;
	char msg[200];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(diag->warnings[diag->nwarnings++], sizeof(diag->warnings[0]), "%s:%d: %s", origin, line, msg);
}

enum vtype { V_INT, V_LONG, V_BOOL, V_PATH, V_MEDIUM, V_MOUNTS, V_IGNORED };

struct key {
	const char *name;
	enum vtype type;
	size_t off;
	long min, max;
};

#define K(n, t, f, lo, hi) { n, t, offsetof(struct pf_config, f), lo, hi }
static const struct key keys[] = {
	K("ENABLE_PREFETCH", V_BOOL, enable_prefetch, 0, 1),
	K("PREFETCH_DIR", V_PATH, state_dir, 0, 0),
	K("PREFETCH_RUNTIME_DIR", V_PATH, runtime_dir, 0, 0),
	K("LOGIN_TRACING_DELAY", V_INT, login_tracing_delay, 0, 3600),
	K("TRACE_TIMEOUT", V_INT, trace_timeout, 1, 86400),
	K("TRACE_AGGREGATION_COUNT", V_INT, aggregation_count, 1, 32),
	K("ENABLE_FILE_REORDERING", V_BOOL, enable_reordering, 0, 1),
	K("CHUNK_SIZE_BLOCKS", V_LONG, chunk_size_blocks, 1, 1L << 30),
	K("REORDER_TIME_BUDGET", V_INT, reorder_time_budget, 1, 3600),
	K("REORDER_FREE_RESERVE_PERCENT", V_INT, reorder_reserve_percent, 0, 50),
	K("MAX_PREFETCH_MB", V_INT, max_prefetch_mb, 1, 1 << 20),
	K("MAX_PREFETCH_FILES", V_INT, max_prefetch_files, 1, 1 << 20),
	K("REPLAY_TIMEOUT", V_INT, replay_timeout, 1, 3600),
	K("REPLAY_THREADS", V_INT, replay_threads, 1, 64),
	K("PREFETCH_MEDIUM", V_MEDIUM, medium, 0, 0),
	K("TRACE_MOUNTS", V_MOUNTS, nmounts, 0, 0),
	K("ENABLE_REPLAY", V_BOOL, enable_replay, 0, 1),
	K("START_FROM_INITRAMFS", V_BOOL, start_from_initramfs, 0, 1),
	/* historical (2007) keys of features that do not exist any more: accepted without a warning */
	K("ENABLE_APP_PREFETCHING", V_IGNORED, enable_prefetch, 0, 0),
};
#undef K

static int parse_long(const char *s, long *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end != '\0')
		return -1;
	*out = v;
	return 0;
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
	return -1;
}

/* Unquote a shell-style value in place: '...' literal, "..." with \" \\ \$ escapes, bare words end at '#'.
 * Returns 0, or -1 on an unterminated quote. */
static int unquote(char *s)
{
	char *in = s, *out = s;
	while (*in) {
		if (*in == '\'') {
			char *end = strchr(in + 1, '\'');
			if (!end)
				return -1;
			memmove(out, in + 1, (size_t)(end - in - 1));
			out += end - in - 1;
			in = end + 1;
		} else if (*in == '"') {
			in++;
			while (*in && *in != '"') {
				if (*in == '\\' && (in[1] == '"' || in[1] == '\\' || in[1] == '$'))
					in++;
				*out++ = *in++;
			}
			if (*in != '"')
				return -1;
			in++;
		} else if (isspace((unsigned char)*in) || *in == '#') {
			break; /* trailing comment or whitespace */
		} else {
			*out++ = *in++;
		}
	}
	*out = '\0';
	return 0;
}

static void set_key(struct pf_config *cfg, const struct key *k, const char *val, const char *origin, int line,
		    struct pf_config_diag *diag)
{
	char *field = (char *)cfg + k->off;
	long v;
	int b;
	switch (k->type) {
	case V_IGNORED:
		return;
	case V_INT:
	case V_LONG:
		if (parse_long(val, &v) || v < k->min || v > k->max) {
			warn(diag, origin, line, "%s=\"%s\" is not a number in %ld..%ld; using the default", k->name, val,
			     k->min, k->max);
			return;
		}
		if (k->type == V_INT)
			*(int *)field = (int)v;
		else
			*(long *)field = v;
		return;
	case V_BOOL:
		if (parse_bool(val, &b)) {
			warn(diag, origin, line, "%s=\"%s\" is not 0/1 (yes/no); using the default", k->name, val);
			return;
		}
		*(int *)field = b;
		return;
	case V_PATH:
		if (val[0] != '/' || strlen(val) >= 256) {
			warn(diag, origin, line, "%s=\"%s\" is not an absolute path; using the default", k->name, val);
			return;
		}
		strcpy(field, val);
		return;
	case V_MEDIUM:
		if (!strcasecmp(val, "auto"))
			cfg->medium = PF_MEDIUM_AUTO;
		else if (!strcasecmp(val, "rotational") || !strcasecmp(val, "hdd"))
			cfg->medium = PF_MEDIUM_FORCE_ROTATIONAL;
		else if (!strcasecmp(val, "ssd") || !strcasecmp(val, "solid") || !strcasecmp(val, "nonrotational"))
			cfg->medium = PF_MEDIUM_FORCE_SOLID;
		else
			warn(diag, origin, line, "%s=\"%s\" is not auto, rotational or ssd; using auto", k->name, val);
		return;
	case V_MOUNTS: {
		/* space- or comma-separated absolute paths */
		char tmp[4096];
		snprintf(tmp, sizeof(tmp), "%s", val);
		int n = 0;
		for (char *save, *tok = strtok_r(tmp, " ,\t", &save); tok; tok = strtok_r(NULL, " ,\t", &save)) {
			if (tok[0] != '/' || strlen(tok) >= 256 || n >= PF_CONFIG_MAX_MOUNTS) {
				warn(diag, origin, line, "%s: \"%s\" is not an absolute path (or too many); ignoring it",
				     k->name, tok);
				continue;
			}
			strcpy(cfg->mounts[n++], tok);
		}
		cfg->nmounts = n;
		return;
	}
	}
}

void pf_config_parse(struct pf_config *cfg, const char *text, const char *origin, struct pf_config_diag *diag)
{
	int lineno = 0;
	const char *p = text;
	while (*p) {
		const char *eol = strchr(p, '\n');
		size_t len = eol ? (size_t)(eol - p) : strlen(p);
		char line[4096];
		lineno++;
		if (len >= sizeof(line)) {
			warn(diag, origin, lineno, "line too long; ignored");
		} else {
			memcpy(line, p, len);
			line[len] = '\0';
			char *s = line;
			while (isspace((unsigned char)*s))
				s++;
			if (!strncmp(s, "export", 6) && isspace((unsigned char)s[6]))
				for (s += 6; isspace((unsigned char)*s);)
					s++;
			if (*s && *s != '#') {
				char *eq = strchr(s, '=');
				char *name_end = s;
				while (*name_end && (isalnum((unsigned char)*name_end) || *name_end == '_'))
					name_end++;
				if (!eq || name_end != eq || eq == s) {
					warn(diag, origin, lineno, "not a KEY=value line; ignored");
				} else {
					*eq = '\0';
					char *val = eq + 1;
					const struct key *k = NULL;
					for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
						if (!strcmp(keys[i].name, s))
							k = &keys[i];
					if (!k)
						warn(diag, origin, lineno, "unknown key %s; ignored", s);
					else if (unquote(val))
						warn(diag, origin, lineno, "%s: unterminated quote; using the default", s);
					else
						set_key(cfg, k, val, origin, lineno, diag);
				}
			}
		}
		if (!eol)
			break;
		p = eol + 1;
	}
}

int pf_config_load(struct pf_config *cfg, const char *path, struct pf_config_diag *diag)
{
	char *text;
	size_t len;
	int rc = pf_read_text(path, 1 << 20, 0, &text, &len);
	if (rc)
		return rc;
	if (memchr(text, '\0', len))
		warn(diag, path, 0, "file contains NUL bytes; reading up to the first one");
	pf_config_parse(cfg, text, path, diag);
	free(text);
	return 0;
}

int pf_config_read(struct pf_config *cfg, const char *path)
{
	struct pf_config_diag diag = { 0 };
	pf_config_defaults(cfg);
	int rc = pf_config_load(cfg, path ? path : PF_DEFAULT_CONFIG, &diag);
	for (int i = 0; i < diag.nwarnings; i++)
		pf_warn("%s", diag.warnings[i]);
	return rc == -ENOENT && !path ? 0 : rc;
}
