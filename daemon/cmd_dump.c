/* STUB: replaced by the real implementation of 'prefetchd dump'. */
#include "commands.h"
#include "log.h"

int cmd_dump(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	pf_err("'dump' is not implemented yet");
	return PF_EXIT_FAILURE;
}
