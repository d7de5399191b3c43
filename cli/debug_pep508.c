/* debug subcommands: pep508 (stub until the module lands) */
#include "cli.h"

int cli_debug_marker(struct cli *cli, const struct cli_verb *verb, int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return cli_error(cli, CLI_EXIT_FAIL, "%s: not implemented yet", verb->name);
}

int cli_debug_requirement(struct cli *cli, const struct cli_verb *verb, int argc, char **argv)
{
	(void)argc;
	(void)argv;
	return cli_error(cli, CLI_EXIT_FAIL, "%s: not implemented yet", verb->name);
}

