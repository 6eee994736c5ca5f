/* STUB: replaced by the real implementation of 'prefetchd boot'. */
#include "commands.h"
#include "log.h"

int cmd_boot(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	pf_err("'boot' is not implemented yet");
	return PF_EXIT_FAILURE;
}
