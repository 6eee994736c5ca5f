/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Fuzz target: the configuration parser (pf_config_parse), over the text of /etc/default/prefetch.
 *
 * Whatever the text, every value must stay in the range config.h documents (the commands divide by some,
 * loop over others, build paths from the rest), the warnings kept must be whole lines within their buffer, and
 * they must not change what is parsed: the same text parsed without a sink for them, or parsed twice, gives the
 * same settings. */
#include "fuzz.h"

#include "config.h"
#include "note.h"

#include <string.h>

static int terminated(const char *s, size_t size)
{
	return memchr(s, '\0', size) != NULL;
}

static void check_config(const struct pf_config *c)
{
	FUZZ_CHECK(c->enable_prefetch == 0 || c->enable_prefetch == 1);
	FUZZ_CHECK(c->enable_reordering == 0 || c->enable_reordering == 1);
	FUZZ_CHECK(c->enable_replay == 0 || c->enable_replay == 1);
	FUZZ_CHECK(c->self_check_interval >= 0 && c->self_check_interval <= 1000);
	FUZZ_CHECK(c->reorder_min_gain_percent >= -100 && c->reorder_min_gain_percent <= 100);
	FUZZ_CHECK(c->reorder_erase_block_kb >= 0 && c->reorder_erase_block_kb <= 65536);
	FUZZ_CHECK(c->reorder_write_budget_mb >= 0 && c->reorder_write_budget_mb <= (1 << 20));
	FUZZ_CHECK(c->start_from_initramfs == 0 || c->start_from_initramfs == 1);
	FUZZ_CHECK(terminated(c->state_dir, sizeof(c->state_dir)) && c->state_dir[0] == '/');
	FUZZ_CHECK(terminated(c->runtime_dir, sizeof(c->runtime_dir)) && c->runtime_dir[0] == '/');
	FUZZ_CHECK(c->login_tracing_delay >= 0 && c->login_tracing_delay <= 3600);
	FUZZ_CHECK(c->trace_timeout >= 1 && c->trace_timeout <= 86400);
	FUZZ_CHECK(c->aggregation_count >= 1 && c->aggregation_count <= 32);
	FUZZ_CHECK(c->chunk_size_blocks >= 1 && c->chunk_size_blocks <= (1L << 30));
	FUZZ_CHECK(c->reorder_time_budget >= 1 && c->reorder_time_budget <= 3600);
	FUZZ_CHECK(c->reorder_reserve_percent >= 0 && c->reorder_reserve_percent <= 50);
	FUZZ_CHECK(c->max_prefetch_mb >= 1 && c->max_prefetch_files >= 1);
	FUZZ_CHECK(c->replay_timeout >= 1 && c->replay_threads >= 1 && c->replay_threads <= 64);
	FUZZ_CHECK(c->medium >= PF_MEDIUM_AUTO && c->medium <= PF_MEDIUM_FORCE_MAX);
	FUZZ_CHECK(c->nmounts >= 0 && c->nmounts <= PF_CONFIG_MAX_MOUNTS);
	for (int i = 0; i < c->nmounts; i++)
		FUZZ_CHECK(terminated(c->mounts[i], sizeof(c->mounts[i])) && c->mounts[i][0] == '/');
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_text(data, size);
	if (!text)
		return 0;
	struct pf_config cfg, quiet, twice;
	char kept[PF_CONFIG_WARNINGS_SIZE];
	struct pf_note warnings = pf_note_into(kept, sizeof(kept));
	pf_config_defaults(&cfg);
	pf_config_parse(&cfg, text, "fuzz", &warnings);
	check_config(&cfg);
	FUZZ_CHECK(warnings.kept <= warnings.lines);
	FUZZ_CHECK(terminated(kept, sizeof(kept)) && strlen(kept) == warnings.used);
	size_t pos = 0, nlines = 0;
	char line[PF_NOTE_LINE_MAX];
	while (pf_note_next(&warnings, &pos, line, sizeof(line)))
		FUZZ_CHECK(++nlines <= warnings.kept && strstr(line, "; line ignored")); /* whole lines only */
	FUZZ_CHECK(nlines == warnings.kept);

	pf_config_defaults(&quiet);
	pf_config_parse(&quiet, text, "fuzz", NULL);
	FUZZ_CHECK(!memcmp(&cfg, &quiet, sizeof(cfg)));

	memcpy(&twice, &cfg, sizeof(cfg)); /* padding too: the structs are compared bytewise */
	pf_config_parse(&twice, text, "fuzz", NULL);
	FUZZ_CHECK(!memcmp(&cfg, &twice, sizeof(cfg)));
	free(text);
	return 0;
}
