/* A scratch directory for a cmocka group: made by the group's setup, removed with what it holds by its
 * teardown. */
#ifndef PREFETCH_TEST_SUPPORT_TMPDIR_H
#define PREFETCH_TEST_SUPPORT_TMPDIR_H

extern char pf_test_dir[];

int pf_test_dir_setup(void **state);
int pf_test_dir_teardown(void **state);

#endif
