/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Explanations that are no error: the note sink, the one way they travel.
 *
 * Prefetch carries reasons two ways and only two:
 *   - an error's reason: the function fails with a negative pf error and writes one line to (char *err,
 *     size_t errlen), its last parameters (lib/error.h);
 *   - an explanation of a result that is no error (why the medium is slow flash, why a trace's ranges come
 *     from mincore, which lines of a configuration were skipped, what a reorder left in place): the function
 *     takes a struct pf_note * and appends one line per remark with pf_note().
 * A NULL sink listens to nothing.  The caller decides what becomes of the lines:
 *   - pf_note_into(buf, size): kept in its buffer, one after the other, separated by '\n' (so one line reads
 *     as a plain string); once a line does not fit, neither it nor any later one is kept (only counted), except
 *     that a first line too long is cut to fit;
 *   - pf_note_to_log(level): each line logged (lib/log.h) as it comes, at that level.
 * A line holds no '\n' and is cut at PF_NOTE_LINE_MAX - 1 bytes. */
#ifndef PREFETCH_NOTE_H
#define PREFETCH_NOTE_H

#include <stddef.h>

#define PF_NOTE_LINE_MAX 512

struct pf_note {
	char *buf;       /* the lines kept, NUL-terminated; NULL: none kept */
	size_t size;     /* of buf */
	size_t used;     /* strlen(buf) */
	int level;       /* >= 0: each line also logged at this level (enum pf_log_level); -1: not logged */
	unsigned lines;  /* lines appended */
	unsigned kept;   /* of those, the first ones, kept in buf */
};

/* A sink keeping its lines in buf (size bytes, set to "" now). */
struct pf_note pf_note_into(char *buf, size_t size);
/* A sink logging each line at level (lib/log.h), keeping none. */
struct pf_note pf_note_to_log(int level);

/* Append one line (printf format) to n (may be NULL). */
void pf_note(struct pf_note *n, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The kept lines as one string ("" when none or n is NULL). */
const char *pf_note_text(const struct pf_note *n);

/* The kept lines one by one: *pos starts at 0; each call copies the next line to line (cut to len) and returns
 * 1, or returns 0 after the last. */
int pf_note_next(const struct pf_note *n, size_t *pos, char *line, size_t len);

#endif
