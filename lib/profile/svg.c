/* The flame chart of a trace as SVG (gpuenv/profile.h): one band per
 * thread, its spans stacked by nesting depth, x the time.  Everything is
 * computed from the spans alone (no clock, no locale), so a trace always
 * gives the same bytes. */
#include "gpuenv/profile.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define W 1400.0	 /* the picture's width */
#define LABEL_W 230.0 /* the threads' names */
#define RIGHT 60.0
#define ROW 18.0	 /* one nesting level */
#define HEAD 78.0	 /* title, subtitle, axis */
#define CHAR_W 6.7	 /* monospace 11px, for what fits */
#define MIN_W 0.1	 /* narrower spans are counted, not drawn */
#define MAX_DEPTH 64

/* XML text: & < > " escaped, C0 controls (XML 1.0 has none) as U+FFFD. */
static int xml(gpuenv_buf_t *b, const char *s, size_t max_chars)
{
	int r = 0;
	size_t chars = 0;

	for (; s && *s && !r; s++) {
		unsigned char c = (unsigned char)*s;
		if ((c & 0xc0) != 0x80 && ++chars > max_chars)
			return gpuenv_buf_puts(b, "..");
		switch (c) {
		case '&': r = gpuenv_buf_puts(b, "&amp;"); break;
		case '<': r = gpuenv_buf_puts(b, "&lt;"); break;
		case '>': r = gpuenv_buf_puts(b, "&gt;"); break;
		case '"': r = gpuenv_buf_puts(b, "&quot;"); break;
		default:
			if (c < 0x20 && c != '\n' && c != '\t')
				r = gpuenv_buf_puts(b, "\xef\xbf\xbd");
			else
				r = gpuenv_buf_putc(b, (char)c);
		}
	}
	return r;
}

static size_t utf8_chars(const char *s)
{
	size_t n = 0;
	for (; s && *s; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

void gpuenv_prof_human(double us, char *out, size_t n)
{
	if (us >= 1e6)
		snprintf(out, n, "%.2f s", us / 1e6);
	else if (us >= 1e3)
		snprintf(out, n, "%.2f ms", us / 1e3);
	else
		snprintf(out, n, "%.0f us", us);
}

static double dabs(double v)
{
	return v < 0 ? -v : v;
}

/* The colour of a phase: a hue from its name (FNV-1a), light enough for
 * black text (HSL to RGB, as CSS Color 3 defines it). */
static void colour(const char *phase, bool tool, char out[8])
{
	uint32_t h = 2166136261u;
	for (const char *p = phase; p && *p; p++)
		h = (h ^ (unsigned char)*p) * 16777619u;
	unsigned hue = h % 360;
	double s = tool ? 0.45 : 0.65, l = tool ? 0.78 : 0.68;
	double c = (1 - dabs(2 * l - 1)) * s, hp = hue / 60.0;
	double x = c * (1 - dabs(hp - 2 * (double)(unsigned)(hp / 2) - 1)), m = l - c / 2;
	double rgb[3][6] = { { c, x, 0, 0, x, c }, { x, c, c, x, 0, 0 }, { 0, 0, x, c, c, x } };
	unsigned seg = hue / 60;
	snprintf(out, 8, "#%02x%02x%02x", (unsigned)((rgb[0][seg] + m) * 255 + 0.5),
		(unsigned)((rgb[1][seg] + m) * 255 + 0.5), (unsigned)((rgb[2][seg] + m) * 255 + 0.5));
}

/* A tick step of 1, 2 or 5 times a power of ten, about 10 over the span. */
static double tick_step(double wall)
{
	double raw = wall / 10, p = 1;

	if (raw <= 0)
		return 1;
	while (p * 10 <= raw)
		p *= 10;
	while (p > raw)
		p /= 10;
	double f = raw / p;
	return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * p;
}

static int thread_label(gpuenv_buf_t *b, const gpuenv_prof_thread_t *t)
{
	char id[64];
	int r = 0;

	if (t->name)
		r = xml(b, t->name, 30);
	else {
		snprintf(id, sizeof(id), "pid %lld tid %lld", (long long)t->pid, (long long)t->tid);
		r = gpuenv_buf_puts(b, id);
	}
	return r;
}

static int span_svg(gpuenv_buf_t *b, const gpuenv_prof_span_t *s, double x, double y, double w, double t0)
{
	char c[8], d[32], st[32];
	int r;

	colour(s->phase, s->tool != NULL, c);
	gpuenv_prof_human(s->dur, d, sizeof(d));
	gpuenv_prof_human(s->ts - t0, st, sizeof(st));
	r = gpuenv_buf_puts(b, "<g><title>");
	if (!r)
		r = xml(b, s->name, 200);
	if (!r && s->package) {
		r = gpuenv_buf_puts(b, "\npackage: ");
		if (!r)
			r = xml(b, s->package, 200);
	}
	if (!r && s->phase && strcmp(s->phase, s->name)) {
		r = gpuenv_buf_puts(b, "\nphase: ");
		if (!r)
			r = xml(b, s->phase, 200);
	}
	if (!r)
		r = gpuenv_buf_printf(b, "\n%s, from %s", d, st);
	if (!r && s->tool && s->status >= 0)
		r = gpuenv_buf_printf(b, ", exit status %d", s->status);
	if (!r && s->detail && *s->detail) {
		r = gpuenv_buf_putc(b, '\n');
		if (!r)
			r = xml(b, s->detail, 300);
	}
	if (!r)
		r = gpuenv_buf_printf(b, "</title><rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" fill=\"%s\"%s/>",
			x, y, w, ROW - 2, c, s->tool && s->status > 0 ? " stroke=\"#c00\" stroke-width=\"1.5\"" : "");
	size_t fit = w > 3 * CHAR_W ? (size_t)((w - 4) / CHAR_W) : 0;
	if (!r && fit >= 2) {
		r = gpuenv_buf_printf(b, "<text x=\"%.2f\" y=\"%.1f\">", x + 2, y + ROW - 6);
		if (!r)
			r = xml(b, s->name, utf8_chars(s->name) > fit ? fit - 2 : fit);
		if (!r)
			r = gpuenv_buf_puts(b, "</text>");
	}
	return r ? r : gpuenv_buf_puts(b, "</g>\n");
}

int gpuenv_prof_svg(gpuenv_ctx_t *ctx, const gpuenv_prof_t *p, const char *title, gpuenv_buf_t *out)
{
	double real = p->t1 - p->t0, wall = real, cw = W - LABEL_W - RIGHT, scale, h = HEAD;
	size_t skipped = 0, k;
	int r;
	char a[32], b[32];

	if (wall <= 0)
		wall = 1;
	scale = cw / wall;
	/* the height: each band as deep as its deepest span (capped) */
	for (k = 0; k < p->nspans;) {
		size_t t = p->spans[k].thread;
		unsigned deep = 0;
		for (; k < p->nspans && p->spans[k].thread == t; k++)
			if (p->spans[k].depth > deep)
				deep = p->spans[k].depth;
		h += (deep < MAX_DEPTH ? deep + 1 : MAX_DEPTH) * ROW + 8;
	}
	h += 30;
	r = gpuenv_buf_printf(out,
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%.0f\" height=\"%.0f\" "
		"viewBox=\"0 0 %.0f %.0f\" font-family=\"monospace\" font-size=\"11\">\n"
		"<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"#ffffff\"/>\n"
		"<text x=\"10\" y=\"22\" font-size=\"16\" font-weight=\"bold\">",
		W, h, W, h, W, h);
	if (!r)
		r = xml(out, title ? title : "gpuenv profile", 120);
	gpuenv_prof_human(real, a, sizeof(a));
	if (!r)
		r = gpuenv_buf_printf(out, "</text>\n<text x=\"10\" y=\"40\">");
	if (!r && p->command) {
		r = xml(out, p->command, 80);
		if (!r)
			r = gpuenv_buf_puts(out, ": ");
	}
	if (!r)
		r = gpuenv_buf_printf(out, "%zu spans on %zu threads over %s; hover a span for its details</text>\n",
			p->nspans, p->nthreads, a);
	/* the axis */
	double step = tick_step(wall);
	for (double t = 0; !r && t <= wall + step / 1000; t += step) {
		double x = LABEL_W + t * scale;
		gpuenv_prof_human(t, b, sizeof(b));
		r = gpuenv_buf_printf(out, "<line x1=\"%.2f\" y1=\"%.0f\" x2=\"%.2f\" y2=\"%.0f\" stroke=\"#dddddd\"/>"
			"<text x=\"%.2f\" y=\"%.0f\" fill=\"#555555\">%s</text>\n",
			x, HEAD - 12, x, h - 30, x + 2, HEAD - 16, b);
	}
	/* the bands */
	double y = HEAD;
	for (k = 0; !r && k < p->nspans;) {
		size_t t = p->spans[k].thread, first = k;
		unsigned deep = 0;
		for (; k < p->nspans && p->spans[k].thread == t; k++)
			if (p->spans[k].depth > deep)
				deep = p->spans[k].depth;
		if (deep >= MAX_DEPTH)
			deep = MAX_DEPTH - 1;
		double bh = (deep + 1) * ROW + 8;
		r = gpuenv_buf_printf(out, "<rect x=\"0\" y=\"%.1f\" width=\"%.0f\" height=\"%.1f\" fill=\"%s\"/>\n"
			"<text x=\"10\" y=\"%.1f\" font-weight=\"bold\">",
			y, W, bh, (t % 2) ? "#f4f4f8" : "#fbfbfd", y + ROW - 2);
		if (!r)
			r = thread_label(out, &p->threads[t]);
		if (!r)
			r = gpuenv_buf_puts(out, "</text>\n");
		for (size_t j = first; !r && j < k; j++) {
			const gpuenv_prof_span_t *s = &p->spans[j];
			double w = s->dur * scale;
			if (w < MIN_W || s->depth >= MAX_DEPTH) {
				skipped++;
				continue;
			}
			r = span_svg(out, s, LABEL_W + (s->ts - p->t0) * scale, y + 4 + s->depth * ROW, w, p->t0);
		}
		y += bh;
	}
	if (!r && skipped)
		r = gpuenv_buf_printf(out, "<text x=\"10\" y=\"%.0f\" fill=\"#555555\">%zu spans narrower than %.1f px "
			"(or nested deeper than %d) are not drawn</text>\n", h - 10, skipped, MIN_W, MAX_DEPTH);
	if (!r)
		r = gpuenv_buf_puts(out, "</svg>\n");
	if (r == -ENOMEM)
		return gpuenv_oom(ctx, "the flame graph");
	if (r)
		return gpuenv_fail(ctx, r, NULL, 0, 0, "the flame graph is too large: %s", gpuenv_strerror(r));
	return 0;
}
