/* STUB: replaced by the real implementation of 'prefetchd aggregate'. */
#include "commands.h"
#include "log.h"

int cmd_aggregate(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	pf_err("'aggregate' is not implemented yet");
	return PF_EXIT_FAILURE;
}
