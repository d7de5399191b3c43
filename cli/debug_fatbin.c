/* debug subcommands: fatbin (stub until the module lands) */
#include "cli.h"

int cli_debug_fatbin(struct cli *cli, const struct cli_verb *verb, int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return cli_error(cli, CLI_EXIT_FAIL, "%s: not implemented yet", verb->name);
}
