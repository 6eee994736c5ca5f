/* STUB: replaced by the real prefetch-reorder command line. */
#include <stdio.h>

int main(void)
{
	fprintf(stderr, "prefetch-reorder: not implemented yet\n");
	return 1;
}
