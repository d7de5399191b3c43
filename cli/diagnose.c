/* gpuenv diagnose: an error log in, each known failure out with its cause
 * and fix; fixes made concrete with the machine's facts (--facts from
 * `gpuenv probe --json`, or --gpu/--driver/--torch). */
#include "cli.h"

#include <string.h>
#include <unistd.h>

#include "gpuenv/diagnose.h"
#include "gpuenv/fs.h"
#include "gpuenv/kb.h"

#define MAX_LOG ((size_t)256 << 20) /* the help text says "256 MiB" */
#define MAX_FACTS ((size_t)64 << 20)

enum { OPT_FACTS = 0x2101, OPT_KB_DIR, OPT_GPU, OPT_DRIVER, OPT_TORCH };

static json_t *jrow(const gpuenv_kb_row_t *r)
{
	return json_pack("{s:s, s:i, s:s%, s:b}", "file", gpuenv_kb_file_name(r->file), "line",
		(json_int_t)r->line, "source", r->source.ptr, r->source.len, "secondary",
		r->secondary);
}

/* One finding as JSON; NULL when memory ran out.  Text from the log (the
 * line, the match, captures in the cause and fix) need not be UTF-8: it is
 * escaped, never dropped. */
static json_t *jhit(struct cli *cli, const gpuenv_diag_hit_t *h)
{
	json_t *lines = json_array();

	for (size_t k = 0; lines && k < h->n_lines; k++)
		if (json_array_append_new(lines, json_integer((json_int_t)h->lines[k]))) {
			json_decref(lines);
			lines = NULL;
		}
	/* "o": json_pack takes each reference, also on failure */
	return json_pack("{s:o, s:o, s:I, s:I, s:o, s:o, s:o, s:o, s:o, s:b, s:o}",
		"id", cli_json_text(cli, h->sig->id.ptr, h->sig->id.len),
		"title", cli_json_text(cli, h->sig->title.ptr, h->sig->title.len),
		"line", (json_int_t)h->line, "count", (json_int_t)h->count, "lines", lines,
		"match", cli_json_text(cli, h->match.ptr ? h->match.ptr : "", h->match.len),
		"text", cli_json_text(cli, h->text.ptr ? h->text.ptr : "", h->text.len),
		"cause", cli_json_text(cli, h->cause, strlen(h->cause)),
		"fix", cli_json_text(cli, h->fix, strlen(h->fix)), "fix_from_facts", h->concrete,
		"source", jrow(&h->sig->row));
}

static json_t *jopt(struct cli *cli, const char *s)
{
	return s ? cli_json_text(cli, s, strlen(s)) : json_null();
}

/* A torch version as diagnose's facts take it: 2.5.1, 2.5.1+cu124 (the
 * local part letters, digits and dots). */
static bool torch_version_ok(const char *s)
{
	gpuenv_str_t head, local = gpuenv_str_split(gpuenv_str(s), '+', &head);
	gpuenv_kb_ver_t v;

	if (!gpuenv_kb_ver_parse(head, &v) || v.n < 2 || v.n > 3)
		return false;
	if (!local.ptr)
		return true;
	if (!local.len)
		return false;
	for (size_t i = 0; i < local.len; i++) {
		char c = local.ptr[i];
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.'))
			return false;
	}
	return true;
}

/* The log, "-" or none = stdin; past the cap, an error that names it. */
static int read_log(struct cli *cli, const char *path, gpuenv_buf_t *log)
{
	int r;

	if (!path || strcmp(path, "-") == 0)
		r = gpuenv_fs_read_fd(&cli->ctx, STDIN_FILENO, "<stdin>", MAX_LOG, log);
	else
		r = gpuenv_fs_read(&cli->ctx, path, MAX_LOG, log);
	if (r == GPUENV_ETOOBIG) {
		char file[sizeof(cli->ctx.err.file)];
		snprintf(file, sizeof(file), "%s", cli->ctx.err.file);
		gpuenv_fail(&cli->ctx, r, file[0] ? file : NULL, 0, 0,
			"the log is larger than diagnose's limit of 256 MiB");
		gpuenv_hint(&cli->ctx, "give diagnose the end of the log: "
			"tail -c 200M FILE | gpuenv diagnose -");
	}
	return r ? cli_report(cli, CLI_EXIT_CANNOT) : 0;
}

static int cli_diagnose(struct cli *cli, const struct cli_verb *verb, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "gpu", required_argument, NULL, OPT_GPU },
		{ "driver", required_argument, NULL, OPT_DRIVER },
		{ "torch", required_argument, NULL, OPT_TORCH },
		{ NULL, 0, NULL, 0 },
	};
	const char *facts_path = NULL, *kb_dir = NULL, *gpu = NULL, *driver = NULL, *torch = NULL;
	const char *path = NULL, *name;
	gpuenv_buf_t log, fbuf;
	gpuenv_kb_t *kb = NULL;
	gpuenv_diag_t *diag = NULL;
	gpuenv_diag_facts_t facts;
	gpuenv_diag_result_t res;
	gpuenv_arena_t arena;
	bool have_facts = false;
	int c, st = 0;

	while ((c = cli_getopt(cli, verb, argc, argv, "", opts, &st)) != -1) {
		switch (c) {
		case CLI_OPT_EXIT:
			return st;
		case OPT_GPU:
			gpu = optarg;
			break;
		case OPT_DRIVER:
			driver = optarg;
			break;
		case OPT_TORCH:
			torch = optarg;
			break;
		default:
			return CLI_EXIT_USAGE;
		}
	}
	if (cli->opt.facts)
		facts_path = cli->opt.facts;
	if (cli->opt.kb_dir)
		kb_dir = cli->opt.kb_dir;
	if (optind < argc)
		path = argv[optind++];
	if (optind < argc)
		return cli_usage_error(cli, verb, "%s: one log at a time ('%s' is extra)", verb->name,
			argv[optind]);
	if (driver) {
		gpuenv_kb_ver_t v;
		if (!gpuenv_kb_ver_parse(gpuenv_str(driver), &v) || v.n > 3)
			return cli_usage_error(cli, verb, "%s: '%s' is not a driver version (as 535.104.05)",
				verb->name, driver);
	}
	if (torch && !torch_version_ok(torch))
		return cli_usage_error(cli, verb,
			"%s: '%s' is not a torch version (as 2.5.1, or 2.5.1+cu124 for a CUDA build)",
			verb->name, torch);
	name = !path || strcmp(path, "-") == 0 ? "<stdin>" : path;

	gpuenv_arena_init(&arena, &cli->ctx, 0);
	gpuenv_buf_init(&log, &cli->ctx, MAX_LOG);
	gpuenv_buf_init(&fbuf, &cli->ctx, MAX_FACTS);
	memset(&facts, 0, sizeof(facts));
	facts.cc_major = facts.cc_minor = -1;

	/* an unreadable log, facts or KB file: the job could not be done (4);
	 * exit 1 means exactly "known failures found" */
	if ((st = read_log(cli, path, &log)) != 0)
		goto out;
	/* every file but the NGC tags: fixes draw on CUDA, GPUs, torch,
	 * cuDNN and the wheel indexes */
	if (gpuenv_kb_load_files(&cli->ctx, kb_dir,
		    GPUENV_KB_ALL & ~GPUENV_KB_FILE(GPUENV_KB_NGC), &kb)) {
		st = cli_report(cli, CLI_EXIT_CANNOT);
		goto out;
	}
	if (facts_path) {
		if (cli_read_input(cli, facts_path, MAX_FACTS, &fbuf)) {
			st = CLI_EXIT_CANNOT;
			goto out;
		}
		if (gpuenv_diag_facts_parse(&cli->ctx, fbuf.data ? fbuf.data : "", fbuf.len, facts_path,
			    &arena, &facts)) {
			st = cli_report(cli, CLI_EXIT_CANNOT);
			goto out;
		}
		have_facts = true;
	}
	if (gpu) {
		gpuenv_kb_gpu_match_t m;
		if (gpuenv_kb_gpu_lookup(kb, gpu, &m)) {
			st = cli_report(cli, CLI_EXIT_USAGE);
			goto out;
		}
		facts.gpu = gpuenv_arena_strndup(&arena, m.gpu->name.ptr, m.gpu->name.len);
		facts.cc_major = (int)m.gpu->cc.part[0];
		facts.cc_minor = (int)m.gpu->cc.part[1];
		if (!facts.gpu_count)
			facts.gpu_count = 1;
		have_facts = true;
	}
	if (driver) {
		facts.driver = driver;
		facts.driver_cuda = NULL; /* derived from the KB for this driver */
		have_facts = true;
	}
	if (torch) {
		facts.torch = torch;
		facts.torch_cuda = NULL;
		facts.torch_code = false; /* the KB's arch list of that build */
		have_facts = true;
	}
	if (gpuenv_diag_new(&cli->ctx, kb, &diag)) {
		st = cli_report(cli, CLI_EXIT_CANNOT);
		goto out;
	}
	if (gpuenv_diag_scan(diag, log.data ? log.data : "", log.len, have_facts ? &facts : NULL,
		    &arena, &res)) {
		st = cli_report(cli, CLI_EXIT_CANNOT);
		goto out;
	}

	if (cli->json) {
		json_t *root = json_object(), *arr = json_array(), *fj = NULL;
		bool ok = root && arr;
		for (size_t i = 0; ok && i < res.n; i++)
			ok = json_array_append_new(arr, jhit(cli, &res.hits[i])) == 0;
		if (ok && have_facts)
			ok = (fj = json_pack("{s:o, s:o, s:o, s:o}", "gpu", jopt(cli, facts.gpu), "driver",
				      jopt(cli, facts.driver), "torch", jopt(cli, facts.torch),
				      "facts_file", jopt(cli, facts_path))) != NULL;
		ok = ok && json_object_set_new(root, "file", cli_json_text(cli, name, strlen(name))) == 0 &&
			json_object_set_new(root, "lines", json_integer((json_int_t)res.lines)) == 0 &&
			json_object_set(root, "findings", arr) == 0 &&
			(!fj || json_object_set(root, "facts", fj) == 0);
		json_decref(arr);
		json_decref(fj);
		if (!ok) {
			json_decref(root);
			root = NULL;
		}
		st = cli_print_json(cli, root);
	} else {
		const char *b = cli_col(cli, CLI_BOLD), *r = cli_col(cli, CLI_RESET);
		char where[64];
		int e = 0;
		/* the log's bytes (and the file name) are shown, escape sequences
		 * and all, never sent to the terminal as they are */
		for (size_t i = 0; i < res.n && !e; i++) {
			const gpuenv_diag_hit_t *h = &res.hits[i];
			printf("%s", b);
			e |= cli_put_text(cli, stdout, name, strlen(name));
			printf(":%llu: %.*s%s: %.*s\n", (unsigned long long)h->line,
				GPUENV_STR_ARG(h->sig->id), r, GPUENV_STR_ARG(h->sig->title));
			printf("  | ");
			e |= cli_put_text(cli, stdout, h->text.ptr ? h->text.ptr : "", h->text.len);
			printf("\n  cause: ");
			e |= cli_put_text(cli, stdout, h->cause, strlen(h->cause));
			printf("\n  fix%s: ", h->concrete ? " (from this machine's facts)" : "");
			e |= cli_put_text(cli, stdout, h->fix, strlen(h->fix));
			printf("\n  source: %s: %.*s%s\n",
				gpuenv_kb_row_where(&h->sig->row, where, sizeof(where)),
				GPUENV_STR_ARG(h->sig->row.source),
				h->sig->row.secondary ? " (secondary source)" : "");
			if (h->count > 1) {
				printf("  also on line");
				printf("%s", h->n_lines > 2 ? "s" : "");
				for (size_t k = 1; k < h->n_lines; k++)
					printf("%s %llu", k > 1 ? "," : "", (unsigned long long)h->lines[k]);
				if (h->count > h->n_lines)
					printf(", ...");
				printf(" (%llu lines in all)\n", (unsigned long long)h->count);
			}
			printf("\n");
		}
		if (!e) {
			if (res.n)
				printf("%zu known failure%s in ", res.n, res.n == 1 ? "" : "s");
			else
				printf("no known failure in ");
			e = cli_put_text(cli, stdout, name, strlen(name));
		}
		if (e) {
			st = cli_error(cli, CLI_EXIT_CANNOT, "%s: out of memory", verb->name);
			goto out;
		}
		if (res.n)
			printf(" (%llu lines)\n", (unsigned long long)res.lines);
		else
			printf(" (%llu lines; %zu signatures)\n", (unsigned long long)res.lines,
				kb->n_signature);
	}
	if (!st && res.n)
		st = CLI_EXIT_FAIL;
out:
	gpuenv_diag_free(diag);
	gpuenv_kb_free(kb);
	gpuenv_buf_free(&log);
	gpuenv_buf_free(&fbuf);
	gpuenv_arena_free(&arena);
	return st;
}

const struct cli_verb cli_verb_diagnose = {
	.name = "diagnose",
	.run = cli_diagnose,
	.summary = "name the known failures in an error log, with their causes and fixes",
	.usage = "gpuenv diagnose [FILE|-] [--facts FACTS.json] [--gpu NAME] [--driver VERSION] [--torch VERSION]",
	.help = "  FILE               the log (default, or '-': standard input), up to 256 MiB\n"
		"                     (lines are looked at up to 8 KiB each)\n"
		"  --gpu NAME, --driver VERSION, --torch VERSION\n"
		"                     facts given by hand (they override --facts): a GPU name\n"
		"                     (\"H100\"), a driver (535.104.05), a torch build (2.5.1+cu124)\n"
		"exit status: 0 no known failure found, 1 known failures found, 2 usage error,\n"
		"  4 the log, the facts or the knowledge base could not be read, or the output\n"
		"  not written (docs/exit-codes.md)\n",
	.groups = CLI_G_FACTS | CLI_G_KB_DIR,
	.group_help = (const struct cli_group_help[]){
		{ CLI_G_FACTS, "  --facts FILE.json  this machine's facts (`gpuenv probe --json`): fixes made concrete\n" },
		{ CLI_G_KB_DIR, "  --kb-dir DIR       knowledge-base files (diagnose.toml ...) from DIR\n" },
		{ 0, NULL },
	},
};
