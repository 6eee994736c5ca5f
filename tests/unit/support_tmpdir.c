#include "support_tmpdir.h"

#include <stdio.h>
#include <stdlib.h>

char pf_test_dir[] = "/tmp/pf-unit.XXXXXX";

int pf_test_dir_setup(void **state)
{
	(void)state;
	return mkdtemp(pf_test_dir) ? 0 : -1;
}

int pf_test_dir_teardown(void **state)
{
	(void)state;
	char cmd[64];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", pf_test_dir);
	return system(cmd) == 0 ? 0 : -1;
}
