/* The gpuenv command line: shared state and helpers for the verb files.
 * Only the CLI prints and decides exit statuses; the library reports through
 * the context. */
#ifndef GPUENV_CLI_H
#define GPUENV_CLI_H

#include <getopt.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "gpuenv/core.h"

/* Exit statuses: ONE table for every verb.  `gpuenv --help` prints it from
 * CLI_EXIT_CODES, docs/exit-codes.md documents it with each verb's reading,
 * and tests/cli/test_cli.py checks that this table, the help texts and the
 * docs agree.  X(name, value, meaning) */
#define CLI_EXIT_CODES(X) \
	X(CLI_EXIT_OK, 0, "success; the answer is yes (go, nothing wrong, nothing found)") \
	X(CLI_EXIT_FAIL, 1, "the answer is no (no-go, doctor warnings, known failures found,\n" \
		"     no build runs, invalid input to a debug parser)") \
	X(CLI_EXIT_USAGE, 2, "usage error: a bad command line or option value") \
	X(CLI_EXIT_DOCTOR_ERRORS, 3, "doctor: at least one error") \
	X(CLI_EXIT_CANNOT, 4, "the job could not be done: an input could not be read or judged,\n" \
		"     memory ran out, or the output could not be written")
#define CLI_EXIT_ENUM(name, value, meaning) name = value,
enum { CLI_EXIT_CODES(CLI_EXIT_ENUM) };
#define CLI_EXIT_DOCTOR_WARNINGS CLI_EXIT_FAIL /* doctor: warnings, no error */

/* Options most verbs share, declared once (apk's option groups, git's
 * RUN_SETUP flags): one row each gives the getopt row, the help line and the
 * field of struct cli_opts its value lands in.  A verb takes the ones it
 * needs by naming them in its struct cli_verb's .groups (CLI_G_FACTS |
 * CLI_G_OUTPUT ...); cli_getopt then accepts them beside the verb's own
 * options and stores them in cli->opt (never returned to the verb's switch),
 * and cli_verb_help prints their lines before the verb's own help (a line
 * of .group_help replaces the default one where the verb says more).
 * Values: the option's argument; a flag (no metavar) is "" when given; NULL
 * when not given.
 * X(group bit, long name, short letter or 0, metavar or NULL, field, help) */
#define CLI_OPTION_GROUPS(X)                                                                       \
	X(CLI_G_FACTS, "facts", 0, "FILE", facts,                                                   \
		"a facts snapshot (gpuenv probe --json; - = stdin) instead of\n"                   \
		"                     probing this machine")                                        \
	X(CLI_G_PROJECT, "project", 0, "DIR", project,                                             \
		"the project's folder (default: the current one)")                                  \
	X(CLI_G_FORMAT, "format", 0, "F", format, "the output's format")                           \
	X(CLI_G_OUTPUT, "output", 'o', "FILE", output,                                             \
		"write FILE atomically (default: standard output)")                                 \
	X(CLI_G_KB_DIR, "kb-dir", 0, "DIR", kb_dir,                                                \
		"knowledge-base files to use instead of the built-in ones")                         \
	X(CLI_G_INDEX_URL, "index-url", 0, "URL", index_url,                                       \
		"the package index (PEP 503/691; default https://pypi.org/simple)")                 \
	X(CLI_G_CACHE_DIR, "cache-dir", 0, "DIR", cache_dir,                                       \
		"the cache folder (default: $GPUENV_CACHE_DIR, else ~/.cache/gpuenv)")              \
	X(CLI_G_OFFLINE, "offline", 0, NULL, offline, "never touch the network: the cache only")

#define CLI_OPT_GROUP_ENUM_(bit, name, letter, metavar, field, help) bit##_I_,
enum { CLI_OPTION_GROUPS(CLI_OPT_GROUP_ENUM_) CLI_NGROUP_OPTIONS };
#undef CLI_OPT_GROUP_ENUM_
#define CLI_OPT_GROUP_BIT_(bit, name, letter, metavar, field, help) bit = 1u << bit##_I_,
enum { CLI_OPTION_GROUPS(CLI_OPT_GROUP_BIT_) };
#undef CLI_OPT_GROUP_BIT_
/* the index client's options together */
#define CLI_G_INDEX (CLI_G_INDEX_URL | CLI_G_CACHE_DIR | CLI_G_OFFLINE)

#define CLI_OPT_GROUP_FIELD_(bit, name, letter, metavar, field, help) const char *field;
struct cli_opts {
	CLI_OPTION_GROUPS(CLI_OPT_GROUP_FIELD_)
};
#undef CLI_OPT_GROUP_FIELD_

/* A verb's own wording of a group option's help: the whole line(s), as
 * cli_verb_help prints them ("  --format F         text or json\n"). */
struct cli_group_help {
	unsigned group; /* one CLI_G_ bit; 0 ends the list */
	const char *text;
};

struct cli {
	gpuenv_ctx_t ctx;
	const char *prog; /* "gpuenv" */
	bool json;	  /* --json: machine-readable output on stdout */
	bool color;	  /* colour escapes allowed on stdout/stderr */
	int verbose;	  /* -v count minus -q count */
	struct cli_opts opt; /* the shared options of the running verb (cli_getopt) */
	const char *verb;    /* the running verb ("kb info" for a sub-verb); NULL before */
};

/* A verb or sub-verb: each cli/VERB.c ends with its `const struct cli_verb
 * cli_verb_VERB` (help text, options and entry point together), registered by
 * one row in main.c's CLI_VERBS (debug's and kb's sub-verbs: their own tables). */
struct cli_verb {
	const char *name;
	int (*run)(struct cli *cli, const struct cli_verb *verb, int argc, char **argv);
	const char *summary; /* one line for the verb list */
	const char *usage;   /* "gpuenv NAME [OPTIONS] ..." lines */
	const char *help;    /* option descriptions, may be NULL */
	unsigned groups;     /* the shared options it takes (CLI_G_*), 0 = none */
	const struct cli_group_help *group_help; /* its own lines for some; may be NULL */
};

/* Print "usage:" and help for a verb on stdout. */
void cli_verb_help(struct cli *cli, const struct cli_verb *verb, FILE *out);

/* Option parsing for a verb: like getopt_long, over the verb's longopts with
 * --help/-h, --json and the options of the verb's .groups added (those are
 * stored in cli->opt, not returned).  Returns the option's val, -1 at the end of the
 * options, or CLI_OPT_EXIT with *status set (help was printed: 0; an unknown
 * or malformed option was reported with a suggestion: 2).  Call with
 * optind = 0 reset by cli_opt_reset() first. */
#define CLI_OPT_EXIT (-2)
void cli_opt_reset(void);
int cli_getopt(struct cli *cli, const struct cli_verb *verb, int argc, char **argv,
	const char *shortopts, const struct option *longopts, int *status);

/* Run the sub-verb argv[1] of verb from the table subs (debug, kb): help,
 * "VERB SUB --help", and an unknown name answered with a suggestion.  what
 * names the thing in messages ("subcommand", "question"). */
int cli_dispatch(struct cli *cli, const struct cli_verb *verb, const struct cli_verb *const *subs,
	size_t nsubs, const char *what, int argc, char **argv);

/* One-line error on stderr ("gpuenv: VERB: message"), returns status. */
int cli_error(struct cli *cli, int status, const char *fmt, ...) GPUENV_PRINTF(3, 4);
/* Report ctx->err ("gpuenv: file:line:col: msg" + "hint: ..."), returns status. */
int cli_report(struct cli *cli, int status);
/* --profile FILE of lock, sync and probe: start recording (cli->ctx.trace)
 * when path is set: 0 or an exit status. */
int cli_profile_start(struct cli *cli, const char *verb, const char *path);
/* Write the trace to path (atomically) and stop; st is the verb's exit
 * status, returned unless the trace could not be written (then 4). */
int cli_profile_finish(struct cli *cli, const char *path, int st);
/* A usage error with the verb's usage line; returns CLI_EXIT_USAGE. */
int cli_usage_error(struct cli *cli, const struct cli_verb *verb, const char *fmt, ...)
	GPUENV_PRINTF(3, 4);

/* The closest of names[0..n) to word within a small edit distance, or NULL. */
const char *cli_suggest(const char *word, const char *const *names, size_t n);

/* Bytes that need not be text (a log line, a file name), escaped the one
 * documented way (gpuenv_text_escape; docs/probe-schema.md "Strings"): as a
 * JSON string (NULL when memory ran out), or written to out for a terminal
 * (GPUENV_ESC_CONTROL: escape sequences are shown, not obeyed; 0 or
 * -ENOMEM). */
json_t *cli_json_text(struct cli *cli, const char *s, size_t n);
int cli_put_text(struct cli *cli, FILE *out, const char *s, size_t n);

/* Free a JSON value the verb is done with, just before it returns: a no-op
 * in release builds (the process exits; freeing a large tree is pure cost),
 * json_decref in debug and sanitizer builds. */
void cli_json_drop(json_t *v);

/* Print a JSON value on stdout (indented, one trailing newline) and free it. */
int cli_print_json(struct cli *cli, json_t *value);
/* JSON text a library wrote into b (r: what writing it returned) printed
 * as cli_print_json prints a value: a newline after it; b is freed. */
int cli_print_json_text(struct cli *cli, gpuenv_buf_t *b, int r);
/* A verb's output: to -o FILE atomically (gpuenv_fs_write_atomic_ex with
 * fs_flags), else to stdout.  CLI_EXIT_OK, or CLI_EXIT_CANNOT reported. */
int cli_write_output(struct cli *cli, const struct cli_verb *verb, const char *out, const char *data,
	size_t len, unsigned fs_flags);

/* cli_write_output of a buffer's text after its one check (gpuenv_buf_failed:
 * an append that failed is reported, CLI_EXIT_CANNOT, and nothing written). */
int cli_write_buf(struct cli *cli, const struct cli_verb *verb, const char *out, gpuenv_buf_t *b,
	unsigned fs_flags);

/* Read a whole file ("-" = stdin) into buf; reports errors itself. */
int cli_read_input(struct cli *cli, const char *path, size_t max, gpuenv_buf_t *buf);

/* Colour helpers: return the escape when colour is on, "" otherwise. */
const char *cli_col(struct cli *cli, const char *esc);
#define CLI_RED "\033[31m"
#define CLI_YELLOW "\033[33m"
#define CLI_GREEN "\033[32m"
#define CLI_BOLD "\033[1m"
#define CLI_RESET "\033[0m"

/* kb's sub-verbs of their own files: cli/kb_info.c, cli/kb_update.c, cli/kb_bundle.c */
extern const struct cli_verb cli_kb_info_verb, cli_kb_update_verb, cli_kb_bundle_verb;

/* doctor and preflight (cli/doctor.c, cli/preflight.c; docs/doctor.md);
 * the facts and KB loading eight other verbs share: cli/facts.c */
/* Facts from --facts FILE ("-" = stdin), or from the probe when path is
 * NULL (env_dir: the probe's --env, or NULL), decoded into arena
 * (include/gpuenv/facts.h).  0, or an exit status (reported). */
struct gpuenv_facts;
/* Seconds of the monotonic clock (for "in 0.21 s" figures). */
double cli_now_s(void);

int cli_facts_load(struct cli *cli, const char *verb, const char *path, const char *env_dir,
	gpuenv_arena_t *arena, const struct gpuenv_facts **out);
/* The KB files doctor / preflight read, from dir (others built in). */
struct gpuenv_kb;
int cli_kb_load(struct cli *cli, const char *dir, struct gpuenv_kb **out);
struct gpuenv_verdict;
/* One verdict as doctor prints it; label replaces the severity word. */
void cli_print_verdict(struct cli *cli, const struct gpuenv_verdict *v, const char *label);

/* argv[0] is a tool name (cc, nvcc...): gpuenv is a build's tool shim
 * (cli/shim.c); returns the tool's exit status. */
int cli_shim_main(int argc, char **argv);

/* One interpreter as JSON (venv, debug pythons; cli/util.c) */
struct gpuenv_python;
json_t *cli_python_json(struct cli *cli, const struct gpuenv_python *py);

#endif
