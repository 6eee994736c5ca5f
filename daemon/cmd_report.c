/* STUB: replaced by the real implementation of 'prefetchd report'. */
#include "commands.h"
#include "log.h"

int cmd_report(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	pf_err("'report' is not implemented yet");
	return PF_EXIT_FAILURE;
}
