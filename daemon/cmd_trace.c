/* STUB: replaced by the real implementation of 'prefetchd trace'. */
#include "commands.h"
#include "log.h"

int cmd_trace(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	pf_err("'trace' is not implemented yet");
	return PF_EXIT_FAILURE;
}
