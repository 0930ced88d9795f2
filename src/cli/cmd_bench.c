#include "cli.h"
int cmd_bench(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	cli_error("bench: not implemented yet");
	return 2;
}
