/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lib/host.c: the boot id and the kernel command line, from the host or from the test's environment. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "host.h"

#include <stdlib.h>
#include <string.h>

static void test_boot_id(void **state)
{
	(void)state;
	char id[40];
	unsetenv("PREFETCH_BOOT_ID");
	pf_boot_id(id, sizeof(id));
	/* the kernel's: a UUID, or "-" where procfs has none (containers) */
	assert_true(strlen(id) == 36 || !strcmp(id, "-"));
	setenv("PREFETCH_BOOT_ID", "test-boot-7", 1);
	pf_boot_id(id, sizeof(id));
	assert_string_equal(id, "test-boot-7");
	setenv("PREFETCH_BOOT_ID", "0123456789-0123456789-0123456789-0123456789", 1); /* kept to 36 */
	pf_boot_id(id, sizeof(id));
	assert_string_equal(id, "0123456789-0123456789-0123456789-012");
	setenv("PREFETCH_BOOT_ID", "", 1); /* empty: the kernel's again */
	pf_boot_id(id, sizeof(id));
	assert_true(strlen(id) == 36 || !strcmp(id, "-"));
	unsetenv("PREFETCH_BOOT_ID");
}

static void test_cmdline(void **state)
{
	(void)state;
	char *text = NULL;
	setenv("PREFETCH_CMDLINE", "root=/dev/vda1 prefetch=noreplay", 1);
	assert_int_equal(pf_kernel_cmdline(&text), 0);
	assert_string_equal(text, "root=/dev/vda1 prefetch=noreplay");
	free(text);
	setenv("PREFETCH_CMDLINE", "", 1); /* given empty: empty, not the host's */
	assert_int_equal(pf_kernel_cmdline(&text), 0);
	assert_string_equal(text, "");
	free(text);
	unsetenv("PREFETCH_CMDLINE");
	int rc = pf_kernel_cmdline(&text);
	assert_true(rc == 0 ? text != NULL : text == NULL);
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_boot_id),
		cmocka_unit_test(test_cmdline),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
