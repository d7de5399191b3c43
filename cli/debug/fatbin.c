/* gpuenv debug fatbin: the CUDA code inside ELF files, as cuobjdump lists it.
 *
 *   --elf    cuobjdump --list-elf lines ("ELF file    1: libX.1.sm_90a.cubin")
 *   --ptx    cuobjdump --list-ptx lines
 *   (none)   one summary line: "sm_75 sm_80 sm_90a ptx: compute_121"
 *            (prefixed with "FILE: " when several files are given)
 *   --json   an array with an object per file
 *
 * A file that cannot be read is reported on stderr and skipped; the exit
 * status is then 1. */
#include "cli.h"

#include <string.h>

#include "gpuenv/facts_write.h"
#include "gpuenv/fatbin.h"

enum { MODE_ELF = 1, MODE_PTX = 2 };

static json_t *entry_json(const gpuenv_fatbin_entry_t *e, const char *prefix)
{
	char name[32], ver[16];
	char var[2] = { e->variant, '\0' };

	gpuenv_fatbin_arch_name(e, prefix, name, sizeof(name));
	snprintf(ver, sizeof(ver), "%u.%u", e->major, e->minor);
	return json_pack("{s:s, s:i, s:o, s:s, s:b, s:I, s:I, s:I, s:i}",
		"arch", name,
		"sm", (int)e->arch,
		"variant", e->variant ? json_string(var) : json_null(),
		"version", ver,
		"compressed", (int)e->compressed,
		"offset", (json_int_t)e->offset,
		"size", (json_int_t)e->size,
		"uncompressed_size", (json_int_t)e->uncompressed_size,
		"container", (int)e->container);
}

static json_t *archs_json(const gpuenv_fatbin_t *fb, int kind, const char *prefix)
{
	gpuenv_fatbin_arch_t archs[256];
	size_t n = gpuenv_fatbin_archs(fb, kind, archs, 256);
	json_t *a = json_array();

	for (size_t i = 0; a && i < n && i < 256; i++) {
		gpuenv_fatbin_entry_t e = { .arch = archs[i].arch, .variant = archs[i].variant };
		char name[32];
		gpuenv_fatbin_arch_name(&e, prefix, name, sizeof(name));
		json_array_append_new(a, json_string(name));
	}
	return a;
}

static json_t *file_json(gpuenv_ctx_t *ctx, const char *path, const gpuenv_fatbin_t *fb,
	const char *error)
{
	json_t *o = json_object(), *cubins = json_array(), *ptx = json_array();
	json_t *lto = json_array(), *other = json_array();

	for (size_t i = 0; i < fb->n; i++) {
		const gpuenv_fatbin_entry_t *e = &fb->entries[i];
		switch (e->kind) {
		case GPUENV_FATBIN_CUBIN:
			json_array_append_new(cubins, entry_json(e, "sm_"));
			break;
		case GPUENV_FATBIN_PTX:
			json_array_append_new(ptx, entry_json(e, "compute_"));
			break;
		case GPUENV_FATBIN_LTOIR:
			json_array_append_new(lto, entry_json(e, "lto_"));
			break;
		default: {
			json_t *x = entry_json(e, "sm_");
			json_object_set_new(x, "kind", json_integer(e->kind));
			json_array_append_new(other, x);
			break;
		}
		}
	}
	/* a file name (and a message quoting it) need not be text */
	json_object_set_new(o, "file", gpuenv_json_text(ctx, path, strlen(path)));
	json_object_set_new(o, "containers", json_integer((json_int_t)fb->ncontainers));
	json_object_set_new(o, "cubins", cubins);
	json_object_set_new(o, "ptx", ptx);
	json_object_set_new(o, "lto", lto);
	if (json_array_size(other))
		json_object_set_new(o, "other", other);
	else
		json_decref(other);
	json_object_set_new(o, "summary",
		json_pack("{s:o, s:o, s:o}", "sm", archs_json(fb, GPUENV_FATBIN_CUBIN, "sm_"), "ptx",
			archs_json(fb, GPUENV_FATBIN_PTX, "compute_"), "lto",
			archs_json(fb, GPUENV_FATBIN_LTOIR, "lto_")));
	json_object_set_new(o, "error", error ? gpuenv_json_text(ctx, error, strlen(error)) : json_null());
	return o;
}

static int cli_debug_fatbin(struct cli *cli, const struct cli_verb *verb, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "elf", no_argument, NULL, 'e' },
		{ "ptx", no_argument, NULL, 'p' },
		{ NULL, 0, NULL, 0 },
	};
	int c, st, mode = 0, status = CLI_EXIT_OK;
	json_t *all = NULL;
	gpuenv_buf_t out;

	while ((c = cli_getopt(cli, verb, argc, argv, "", opts, &st)) != -1) {
		if (c == CLI_OPT_EXIT)
			return st;
		if (c == 'e')
			mode |= MODE_ELF;
		else if (c == 'p')
			mode |= MODE_PTX;
	}
	if (optind >= argc)
		return cli_usage_error(cli, verb, "%s: no FILE given", verb->name);
	if (cli->json && mode)
		return cli_usage_error(cli, verb, "%s: --json lists everything; drop --elf/--ptx",
			verb->name);
	if (cli->json && !(all = json_array()))
		return cli_error(cli, CLI_EXIT_FAIL, "out of memory building JSON");
	gpuenv_buf_init(&out, &cli->ctx, GPUENV_BUF_DEFAULT_MAX);
	for (int i = optind; i < argc; i++) {
		const char *path = argv[i];
		gpuenv_fatbin_t fb;
		char msg[1200];
		int r;

		gpuenv_fatbin_init(&fb, &cli->ctx);
		gpuenv_error_clear(&cli->ctx);
		r = gpuenv_fatbin_open(&fb, path);
		if (r) {
			/* skipped with a warning; what was read before the damage is
			 * still shown in --json */
			gpuenv_error_format(&cli->ctx.err, msg, sizeof(msg));
			status = cli_report(cli, CLI_EXIT_FAIL);
			if (all)
				json_array_append_new(all, file_json(&cli->ctx, path, &fb, msg));
			gpuenv_fatbin_free(&fb);
			continue;
		}
		gpuenv_buf_reset(&out);
		if (all) {
			json_array_append_new(all, file_json(&cli->ctx, path, &fb, NULL));
		} else if (mode) {
			if (mode & MODE_ELF)
				r = gpuenv_fatbin_list_cuobjdump(&fb, path, GPUENV_FATBIN_CUBIN, &out);
			if (!r && (mode & MODE_PTX))
				r = gpuenv_fatbin_list_cuobjdump(&fb, path, GPUENV_FATBIN_PTX, &out);
		} else {
			if (argc - optind > 1)
				r = gpuenv_buf_printf(&out, "%s: ", path);
			if (!r)
				r = gpuenv_fatbin_summary(&fb, &out);
			if (!r)
				r = gpuenv_buf_putc(&out, '\n');
		}
		gpuenv_fatbin_free(&fb);
		if (r) {
			status = cli_error(cli, CLI_EXIT_FAIL, "%s: %s", path, gpuenv_strerror(r));
			continue;
		}
		if (out.len)
			fwrite(out.data, 1, out.len, stdout);
	}
	gpuenv_buf_free(&out);
	if (all) {
		int r = cli_print_json(cli, all);
		if (r)
			status = r;
	}
	return status;
}

const struct cli_verb cli_verb_debug_fatbin = {
	.name = "fatbin",
	.run = cli_debug_fatbin,
	.summary = "list the CUDA code (sm_XX cubins, PTX) inside ELF files' .nv_fatbin sections, as cuobjdump --list-elf / --list-ptx",
	.usage = "gpuenv debug fatbin [--elf] [--ptx] [--json] FILE...",
	.help = "  --elf    print cuobjdump --list-elf lines (\"ELF file    1: libX.so.1.sm_90a.cubin\")\n"
		"  --ptx    print cuobjdump --list-ptx lines\n"
		"  (neither: one summary line per file, \"sm_75 sm_90a sm_100f ptx: compute_121\")\n"
		"  (--json: an array with an object per file: cubins, PTX, LTO-IR, summary, error)\n",
};
