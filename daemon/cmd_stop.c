/* STUB: replaced by the real implementation of 'prefetchd stop'. */
#include "commands.h"
#include "log.h"

int cmd_stop(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	pf_err("'stop' is not implemented yet");
	return PF_EXIT_FAILURE;
}
