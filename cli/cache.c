/* gpuenv cache dir|size|prune|clean: the global cache of wheels and their
 * unpacked trees (include/gpuenv/cache.h; docs/install.md, "Cache"). */
#include "cli.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "gpuenv/cache.h"

#define CACHE_EXIT "exit status: 0 done, 2 usage, 4 the cache could not be read or changed, or\n" \
	"  another gpuenv uses it (prune and clean without --wait)"

enum { O_DIR = 1, O_OLDER, O_WAIT };
#define TAKES(o) (1u << (o)) /* the options a sub-verb takes */

static const struct option cache_opts[] = {
	{ "cache-dir", required_argument, NULL, O_DIR },
	{ "older-than", required_argument, NULL, O_OLDER },
	{ "wait", no_argument, NULL, O_WAIT },
	{ NULL, 0, NULL, 0 },
};

struct cache_args {
	const char *dir;
	double older_days;
	bool wait;
};

/* The options of a sub-verb; those it does not take are usage errors. */
static int cache_parse(struct cli *cli, const struct cli_verb *verb, int argc, char **argv,
	unsigned takes, struct cache_args *a)
{
	int c, st;

	memset(a, 0, sizeof(*a));
	a->older_days = 30;
	while ((c = cli_getopt(cli, verb, argc, argv, "", cache_opts, &st)) != -1) {
		if (c == CLI_OPT_EXIT)
			return st;
		if (c > 0 && c <= O_WAIT && !(takes & TAKES(c)))
			return cli_usage_error(cli, verb, "%s: --%s does not apply here", verb->name,
				cache_opts[c - 1].name);
		switch (c) {
		case O_DIR: a->dir = optarg; break;
		case O_OLDER: {
			char *end;
			a->older_days = strtod(optarg, &end);
			if (!optarg[0] || *end || !(a->older_days >= 0) || a->older_days > 1e6)
				return cli_usage_error(cli, verb, "%s: --older-than takes a number of days, not '%s'",
					verb->name, optarg);
			break;
		}
		case O_WAIT: a->wait = true; break;
		default:
			return cli_usage_error(cli, verb, "%s: unexpected option", verb->name);
		}
	}
	if (optind < argc)
		return cli_usage_error(cli, verb, "%s: unexpected argument '%s'", verb->name, argv[optind]);
	return 0;
}

/* "12.3 MiB" */
static const char *human(uint64_t b, char *out, size_t outsz)
{
	static const char *const units[] = { "bytes", "KiB", "MiB", "GiB", "TiB" };
	double v = (double)b;
	size_t u = 0;

	while (v >= 1024 && u + 1 < sizeof(units) / sizeof(units[0])) {
		v /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(out, outsz, "%llu bytes", (unsigned long long)b);
	else
		snprintf(out, outsz, "%.1f %s", v, units[u]);
	return out;
}

static int cache_open(struct cli *cli, const struct cache_args *a, gpuenv_cache_t **c)
{
	if (gpuenv_cache_open(&cli->ctx, a->dir, c) != 0)
		return cli_report(cli, CLI_EXIT_CANNOT);
	return 0;
}

static int cli_cache_dir(struct cli *cli, const struct cli_verb *verb, int argc, char **argv)
{
	struct cache_args a;
	char dir[PATH_MAX];
	int st;

	if ((st = cache_parse(cli, verb, argc, argv, TAKES(O_DIR), &a)) != 0)
		return st;
	if (a.dir)
		snprintf(dir, sizeof(dir), "%s", a.dir);
	else if (gpuenv_cache_default_dir(&cli->ctx, dir, sizeof(dir)) != 0)
		return cli_report(cli, CLI_EXIT_CANNOT);
	if (cli->json)
		return cli_print_json(cli, json_pack("{s:o}", "dir", cli_json_text(cli, dir, strlen(dir))));
	cli_put_text(cli, stdout, dir, strlen(dir));
	printf("\n");
	return CLI_EXIT_OK;
}

static int cli_cache_size(struct cli *cli, const struct cli_verb *verb, int argc, char **argv)
{
	struct cache_args a;
	gpuenv_cache_t *c;
	gpuenv_cache_usage_t u;
	char h[32];
	int st;

	if ((st = cache_parse(cli, verb, argc, argv, TAKES(O_DIR), &a)) != 0 ||
		(st = cache_open(cli, &a, &c)) != 0)
		return st;
	if (gpuenv_cache_size(c, &cli->ctx, &u) != 0) {
		gpuenv_cache_close(c);
		return cli_report(cli, CLI_EXIT_CANNOT);
	}
	uint64_t total = u.wheel_bytes + u.tree_bytes + u.http_bytes + u.other_bytes;
	if (cli->json) {
		const char *d = gpuenv_cache_dir(c);
		st = cli_print_json(cli, json_pack("{s:o, s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "dir",
			cli_json_text(cli, d, strlen(d)), "wheels", (json_int_t)u.wheels, "wheel_bytes",
			(json_int_t)u.wheel_bytes, "trees", (json_int_t)u.trees, "tree_bytes",
			(json_int_t)u.tree_bytes, "http_bytes", (json_int_t)u.http_bytes, "other_bytes",
			(json_int_t)u.other_bytes, "total_bytes", (json_int_t)total));
	} else {
		printf("wheels  %llu (%s)\n", (unsigned long long)u.wheels, human(u.wheel_bytes, h, sizeof(h)));
		printf("trees   %llu (%s)\n", (unsigned long long)u.trees, human(u.tree_bytes, h, sizeof(h)));
		printf("http    %s\n", human(u.http_bytes, h, sizeof(h)));
		printf("other   %s\n", human(u.other_bytes, h, sizeof(h)));
		printf("total   %s\n", human(total, h, sizeof(h)));
	}
	gpuenv_cache_close(c);
	return st;
}

static int freed_report(struct cli *cli, const char *what, uint64_t freed)
{
	char h[32];

	if (cli->json)
		return cli_print_json(cli, json_pack("{s:I}", "freed_bytes", (json_int_t)freed));
	printf("%s: freed %s\n", what, human(freed, h, sizeof(h)));
	return CLI_EXIT_OK;
}

static int cli_cache_prune(struct cli *cli, const struct cli_verb *verb, int argc, char **argv)
{
	struct cache_args a;
	gpuenv_cache_t *c;
	uint64_t freed;
	int st;

	if ((st = cache_parse(cli, verb, argc, argv, TAKES(O_DIR) | TAKES(O_OLDER) | TAKES(O_WAIT), &a)) != 0 ||
		(st = cache_open(cli, &a, &c)) != 0)
		return st;
	if (gpuenv_cache_prune(c, &cli->ctx, (uint64_t)(a.older_days * 86400), a.wait, &freed) != 0)
		st = cli_report(cli, CLI_EXIT_CANNOT);
	else
		st = freed_report(cli, "prune", freed);
	gpuenv_cache_close(c);
	return st;
}

static int cli_cache_clean(struct cli *cli, const struct cli_verb *verb, int argc, char **argv)
{
	struct cache_args a;
	gpuenv_cache_t *c;
	uint64_t freed;
	int st;

	if ((st = cache_parse(cli, verb, argc, argv, TAKES(O_DIR) | TAKES(O_WAIT), &a)) != 0 ||
		(st = cache_open(cli, &a, &c)) != 0)
		return st;
	if (gpuenv_cache_clean(c, &cli->ctx, a.wait, &freed) != 0)
		st = cli_report(cli, CLI_EXIT_CANNOT);
	else
		st = freed_report(cli, "clean", freed);
	gpuenv_cache_close(c);
	return st;
}

#define CACHE_DIR_HELP "  --cache-dir DIR   the cache (default: GPUENV_CACHE_DIR, else\n" \
	"                    $XDG_CACHE_HOME/gpuenv, else ~/.cache/gpuenv)\n"

static const struct cli_verb cache_dir = {
	.name = "dir",
	.run = cli_cache_dir,
	.summary = "print the cache folder",
	.usage = "gpuenv cache dir [--cache-dir DIR] [--json]",
	.help = CACHE_DIR_HELP,
};

static const struct cli_verb cache_size = {
	.name = "size",
	.run = cli_cache_size,
	.summary = "what the cache holds, by kind",
	.usage = "gpuenv cache size [--cache-dir DIR] [--json]",
	.help = CACHE_DIR_HELP
	"wheels and trees: entries and bytes (a file hardlinked into venvs counts\n"
	"once); http: the index client's HTTP cache; other: writes in progress.\n",
};

static const struct cli_verb cache_prune = {
	.name = "prune",
	.run = cli_cache_prune,
	.summary = "remove entries not used lately",
	.usage = "gpuenv cache prune [--older-than DAYS] [--wait] [--cache-dir DIR] [--json]",
	.help = CACHE_DIR_HELP
	"  --older-than DAYS entries not used for DAYS days go (default 30; 0: all but\n"
	"                    those used this second); so do trees whose wheel is gone\n"
	"                    and leftovers of interrupted writes\n"
	"  --wait            wait for other gpuenv processes that use the cache\n"
	"Files hardlinked into venvs stay valid there.\n",
};

static const struct cli_verb cache_clean = {
	.name = "clean",
	.run = cli_cache_clean,
	.summary = "remove everything in the cache",
	.usage = "gpuenv cache clean [--wait] [--cache-dir DIR] [--json]",
	.help = CACHE_DIR_HELP
	"  --wait            wait for other gpuenv processes that use the cache\n"
	"Wheels, trees, the HTTP cache and leftovers go; files hardlinked into venvs\n"
	"stay valid there.\n",
};

static const struct cli_verb *const cache_subs[] = { &cache_dir, &cache_size, &cache_prune, &cache_clean };

static int cli_cache(struct cli *cli, const struct cli_verb *verb, int argc, char **argv)
{
	return cli_dispatch(cli, verb, cache_subs, sizeof(cache_subs) / sizeof(cache_subs[0]),
		"subcommand", argc, argv);
}

const struct cli_verb cli_verb_cache = {
	.name = "cache",
	.run = cli_cache,
	.summary = "the global cache of wheels and unpacked trees: dir, size, prune, clean",
	.usage = "gpuenv cache dir|size|prune|clean [OPTIONS]",
	.help = "subcommands (each takes --help, --json and --cache-dir DIR):\n"
		"  dir                                 the cache folder\n"
		"  size                                wheels, trees, HTTP cache, leftovers\n"
		"  prune [--older-than DAYS] [--wait]  remove what was not used lately (30 days)\n"
		"  clean [--wait]                      remove everything\n"
		"\n" CACHE_EXIT "\n",
};
