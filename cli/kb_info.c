/* gpuenv kb info: the knowledge base about itself (its date, where it comes
 * from, its counts, the documents it cites; gpuenv_kb_info_json, docs/kb.md). */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

#include "gpuenv/kb.h"
#include "gpuenv/kb_answer.h"
#include "gpuenv/kb_bundle.h"

static const struct option no_opts[] = {
	{ NULL, 0, NULL, 0 },
};

/* "2026-12-01 (built in)" or "2027-01-15 (bundle PATH, signed by the release key)" */
static void print_origin(const gpuenv_kb_t *kb)
{
	gpuenv_str_t d = gpuenv_kb_date(kb);

	printf("%.*s", d.ptr ? (int)d.len : 7, d.ptr ? d.ptr : "no date");
	if (kb->bundle)
		printf(" (installed bundle %s, signed by the %s key)\n", kb->bundle, kb->bundle_key);
	else if (kb->files[GPUENV_KB_CUDA].origin &&
		strcmp(kb->files[GPUENV_KB_CUDA].origin, "embedded") != 0)
		printf(" (files from --kb-dir)\n");
	else
		printf(" (built in)\n");
}

/* The hosts of info's "hosts" object, most rows first. */
static int by_rows(const void *a, const void *b)
{
	json_int_t x = json_integer_value(json_object_get(*(json_t *const *)a, "rows"));
	json_int_t y = json_integer_value(json_object_get(*(json_t *const *)b, "rows"));
	return x < y ? 1 : x > y ? -1 : 0;
}

static void print_info(const gpuenv_kb_t *kb, json_t *info, const char *bundles)
{
	json_t *nw = json_object_get(info, "newest"), *ngc = json_object_get(nw, "ngc"), *v;
	json_t *hosts = json_object_get(info, "hosts"), *list[256], *arr;
	const char *key, *names[5] = { "torch", "cuda", "cudnn", "nccl", "tensorrt" };
	const char *words[5] = { "torch", "CUDA", "cuDNN", "NCCL", "TensorRT" };
	size_t nh = 0, i;

	printf("knowledge base: ");
	print_origin(kb);
	printf("rows: %lld in %d files, every one with a source; %lld from secondary sources\n",
		(long long)json_integer_value(json_object_get(info, "rows")), GPUENV_KB_NFILES,
		(long long)json_integer_value(json_object_get(info, "secondary")));
	printf("newest known:");
	for (i = 0; i < 5; i++)
		if ((v = json_object_get(nw, names[i])) && json_is_string(v))
			printf("%s %s %s", i ? "," : "", words[i], json_string_value(v));
	printf("\n");
	if (json_object_size(ngc)) {
		bool first = true;
		printf("newest NGC releases:");
		json_object_foreach(ngc, key, v) {
			const char *s = strrchr(key, '/');
			if (json_is_string(v))
				printf("%s %s %s", first ? "" : ",", s ? s + 1 : key, json_string_value(v));
			first = false;
		}
		printf("\n");
	}
	json_object_foreach(hosts, key, v) {
		if (nh < sizeof(list) / sizeof(list[0]))
			list[nh++] = v;
	}
	qsort(list, nh, sizeof(list[0]), by_rows);
	printf("sources: %zu documents from %zu hosts (`gpuenv --json kb info` lists each)\n",
		json_object_size(json_object_get(info, "documents")), json_object_size(hosts));
	for (i = 0; i < nh && i < 12; i++) {
		json_object_foreach(hosts, key, v) {
			if (v == list[i])
				printf("  %-44s %5lld rows, %lld documents\n", key,
					(long long)json_integer_value(json_object_get(v, "rows")),
					(long long)json_integer_value(json_object_get(v, "documents")));
		}
	}
	if (nh > 12)
		printf("  ... and %zu more hosts\n", nh - 12);
	arr = json_object_get(info, "bundles");
	if (bundles) {
		printf("installed bundles (%s):%s\n", bundles, json_array_size(arr) ? "" : " none");
		json_array_foreach(arr, i, v) {
			const char *err = json_string_value(json_object_get(v, "error"));
			printf("  %s%s%s%s\n", json_string_value(json_object_get(v, "path")),
				json_is_true(json_object_get(v, "in_use")) ? " (in use)" : "",
				err ? ": not used: " : "", err ? err : "");
		}
	}
	printf("embedded knowledge base: %s; trusted signing keys:", gpuenv_kb_embedded_date());
	json_array_foreach(json_object_get(info, "trusted_keys"), i, v)
		printf("%s %s (%s)", i ? "," : "", json_string_value(json_object_get(v, "id")),
			json_string_value(json_object_get(v, "name")));
	printf("\n");
}

static int kb_info(struct cli *cli, const struct cli_verb *verb, int argc, char **argv)
{
	const char *kb_dir = NULL;
	char bundles[4096];
	bool have_dir;
	gpuenv_kb_t *kb = NULL;
	json_t *info;
	int c, st = 0;

	while ((c = cli_getopt(cli, verb, argc, argv, "", no_opts, &st)) != -1) {
		if (c == CLI_OPT_EXIT)
			return st;
		return CLI_EXIT_USAGE;
	}
	kb_dir = cli->opt.kb_dir;
	if (optind < argc)
		return cli_usage_error(cli, verb, "%s: unexpected argument '%s'", verb->name, argv[optind]);
	if (gpuenv_kb_load(&cli->ctx, kb_dir, &kb))
		return cli_report(cli, CLI_EXIT_CANNOT);
	have_dir = gpuenv_kb_bundle_dir(&cli->ctx, bundles, sizeof(bundles)) == 0;
	gpuenv_error_clear(&cli->ctx);
	info = gpuenv_kb_info_json(kb, have_dir ? bundles : NULL);
	if (!info)
		st = cli_error(cli, CLI_EXIT_CANNOT, "out of memory");
	else if (cli->json)
		st = cli_print_json(cli, info);
	else {
		print_info(kb, info, have_dir ? bundles : NULL);
		cli_json_drop(info);
	}
	gpuenv_kb_free(kb);
	return st;
}

const struct cli_verb cli_kb_info_verb = {
	.name = "info",
	.run = kb_info,
	.summary = "the knowledge base's date, where it comes from, its counts and its sources",
	.usage = "gpuenv kb info [--kb-dir DIR]",
	.help = "JSON adds every cited document with its row count (\"documents\")\n",
	.groups = CLI_G_KB_DIR,
	.group_help = (const struct cli_group_help[]){
		{ CLI_G_KB_DIR, "  --kb-dir DIR       the files in DIR instead (missing ones: the built-in copy)\n" },
		{ 0, NULL },
	},
};
