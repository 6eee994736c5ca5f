/* STUB: replaced by the real implementation of 'prefetchd replay'. */
#include "commands.h"
#include "log.h"

int cmd_replay(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	pf_err("'replay' is not implemented yet");
	return PF_EXIT_FAILURE;
}
