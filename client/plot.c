/* SPDX-License-Identifier: MIT
 * plot.c - terminal plots of a tuning run: the convergence curve (best so far as a line, each
 * trial as a dot) drawn with Unicode braille cells, and the per-parameter effect (best time
 * seen per value of each tunable) as horizontal bars of eighth blocks.  Pure text out: the
 * caller picks the width and whether to colour (ANSI only when asked).
 */
#include <math.h>
#include <sys/ioctl.h>
#include <stdlib.h>
#include <string.h>

#include "tlctl.h"

#define TL_PLOT_LABEL 10   /* y-axis label column: "  14.7 us " */

/* Braille: a cell is 2 dots wide and 4 high; bit of dot (x, y) in U+2800 + bits. */
static const unsigned char tl_braille_bit[4][2] = {{0x01, 0x08}, {0x02, 0x10}, {0x04, 0x20},
                                                   {0x40, 0x80}};

static void tl_put_braille(FILE *f, unsigned bits)
{
    unsigned cp = 0x2800 + bits;
    fputc((int)(0xE0 | (cp >> 12)), f);
    fputc((int)(0x80 | ((cp >> 6) & 0x3F)), f);
    fputc((int)(0x80 | (cp & 0x3F)), f);
}

typedef struct tl_canvas {
    int cols, rows;              /* cells */
    unsigned char *dots;         /* cols * rows: braille bits of trial dots */
    unsigned char *line;         /* cols * rows: braille bits of the best-so-far line */
} tl_canvas;

static void tl_canvas_set(tl_canvas *c, unsigned char *layer, int x, int y)
{
    if (x < 0 || y < 0 || x >= c->cols * 2 || y >= c->rows * 4) return;
    layer[(y / 4) * c->cols + x / 2] |= tl_braille_bit[y % 4][x % 2];
}

/* Dot row (0 = top) of time t on a log or linear axis over [lo, hi]. */
static int tl_yrow(double t, double lo, double hi, int log_axis, int ndots)
{
    double a = log_axis ? log(lo) : lo, b = log_axis ? log(hi) : hi;
    double v = log_axis ? log(t) : t;
    double frac = b > a ? (v - a) / (b - a) : 0.5;
    int r = (int)lround((1.0 - frac) * (ndots - 1));
    return r < 0 ? 0 : r >= ndots ? ndots - 1 : r;
}

int tl_plot_convergence(FILE *f, const double *times, size_t n, int width, int height, int color)
{
    double lo = INFINITY, hi = 0;
    size_t nok = 0;
    for (size_t i = 0; i < n; i++)
        if (times[i] > 0) {
            nok++;
            if (times[i] < lo) lo = times[i];
            if (times[i] > hi) hi = times[i];
        }
    if (!nok) {
        fprintf(f, "(no successful trials to plot)\n");
        return 0;
    }
    if (width < TL_PLOT_LABEL + 8) width = TL_PLOT_LABEL + 8;
    if (height < 3) height = 3;
    tl_canvas c = {width - TL_PLOT_LABEL - 1, height, NULL, NULL};
    c.dots = calloc((size_t)c.cols * (size_t)c.rows, 1);
    c.line = calloc((size_t)c.cols * (size_t)c.rows, 1);
    if (!c.dots || !c.line) {
        free(c.dots);
        free(c.line);
        return -1;
    }
    int log_axis = hi / lo > 20, ndx = c.cols * 2, ndy = c.rows * 4;
    if (hi <= lo) { lo *= 0.99; hi *= 1.01; }
    double best = INFINITY;
    int prev_x = -1, prev_y = -1;
    for (size_t i = 0; i < n; i++) {
        int x = n > 1 ? (int)lround((double)i * (ndx - 1) / (double)(n - 1)) : 0;
        if (times[i] > 0) {
            tl_canvas_set(&c, c.dots, x, tl_yrow(times[i], lo, hi, log_axis, ndy));
            if (times[i] < best) best = times[i];
        }
        if (!(best < INFINITY)) continue;
        int y = tl_yrow(best, lo, hi, log_axis, ndy);
        for (int xx = prev_x < 0 ? x : prev_x + 1; xx <= x; xx++) tl_canvas_set(&c, c.line, xx, prev_y < 0 ? y : prev_y);
        if (prev_y >= 0)
            for (int yy = prev_y < y ? prev_y : y; yy <= (prev_y < y ? y : prev_y); yy++)
                tl_canvas_set(&c, c.line, x, yy);
        prev_x = x;
        prev_y = y;
    }
    char lab[32];
    for (int r = 0; r < c.rows; r++) {
        if (r == 0) tl_fmt_us(hi, lab, sizeof lab);
        else if (r == c.rows - 1) tl_fmt_us(lo, lab, sizeof lab);
        else lab[0] = '\0';
        fprintf(f, "%*s ", TL_PLOT_LABEL - 1, lab);
        fputs(r == c.rows - 1 ? "\xe2\x94\xa4" : "\xe2\x94\x82", f);   /* ┤ │ */
        int in_line = 0;
        for (int k = 0; k < c.cols; k++) {
            unsigned char l = c.line[r * c.cols + k], d = c.dots[r * c.cols + k];
            if (color && (l != 0) != in_line) {
                fputs(l ? "\033[31m" : "\033[0m", f);
                in_line = l != 0;
            }
            tl_put_braille(f, (unsigned)(l | d));
        }
        if (color && in_line) fputs("\033[0m", f);
        fputc('\n', f);
    }
    fprintf(f, "%*s \xe2\x94\x94", TL_PLOT_LABEL - 1, "");   /* └ */
    for (int k = 0; k < c.cols; k++) fputs("\xe2\x94\x80", f);   /* ─ */
    fputc('\n', f);
    char nb[32];
    snprintf(nb, sizeof nb, "%zu", n);
    fprintf(f, "%*s1%*s\n", TL_PLOT_LABEL + 1, "", c.cols - 1, n > 1 ? nb : "");
    tl_fmt_us(best, lab, sizeof lab);
    fprintf(f, "x: trial; line: best so far, %s\n", lab);
    fprintf(f, "dots: %zu of %zu trials ok%s\n", nok, n, log_axis ? "; log y" : "");
    free(c.dots);
    free(c.line);
    return 0;
}

/* One bar of `cells` eighths: full blocks then a partial one. */
static void tl_bar(FILE *f, int eighths)
{
    static const char *const part[8] = {"", "\xe2\x96\x8f", "\xe2\x96\x8e", "\xe2\x96\x8d",
                                        "\xe2\x96\x8c", "\xe2\x96\x8b", "\xe2\x96\x8a",
                                        "\xe2\x96\x89"};
    for (int i = 0; i < eighths / 8; i++) fputs("\xe2\x96\x88", f);
    fputs(part[eighths % 8], f);
}

typedef struct tl_pval {
    const json_t *value;         /* borrowed from the trials */
    double best;
} tl_pval;

static int tl_pval_cmp(const void *a, const void *b)
{
    const json_t *x = ((const tl_pval *)a)->value, *y = ((const tl_pval *)b)->value;
    if (json_is_number(x) && json_is_number(y)) {
        double d = json_number_value(x) - json_number_value(y);
        return d < 0 ? -1 : d > 0;
    }
    const char *sx = json_string_value(x), *sy = json_string_value(y);
    return strcmp(sx ? sx : "", sy ? sy : "");
}

/* Values of param `name` with the best time seen at each (malloc'd, *nv entries). */
static tl_pval *tl_param_values(const json_t *trials, const char *name, size_t *nv)
{
    size_t cap = json_array_size(trials) + 1, n = 0, i;
    tl_pval *v = calloc(cap, sizeof *v);
    const json_t *t;
    if (!v) return NULL;
    json_array_foreach(trials, i, t) {
        const json_t *val = json_object_get(json_object_get(t, "config"), name);
        double us = json_number_value(json_object_get(t, "median_us"));
        const char *st = json_string_value(json_object_get(t, "status"));
        if (!val || !(us > 0) || (st && strcmp(st, "ok"))) continue;
        size_t k = 0;
        while (k < n && !json_equal(v[k].value, val)) k++;
        if (k == n) v[n++] = (tl_pval){val, us};
        else if (us < v[k].best) v[k].best = us;
    }
    qsort(v, n, sizeof *v, tl_pval_cmp);
    *nv = n;
    return v;
}

int tl_plot_params(FILE *f, const json_t *trials, int width, int color)
{
    const json_t *first = NULL, *t;
    double lo = INFINITY, hi = 0;
    size_t i;
    json_array_foreach(trials, i, t) {
        double us = json_number_value(json_object_get(t, "median_us"));
        const char *st = json_string_value(json_object_get(t, "status"));
        if (!(us > 0) || (st && strcmp(st, "ok"))) continue;
        if (!first) first = json_object_get(t, "config");
        if (us < lo) lo = us;
        if (us > hi) hi = us;
    }
    if (!first) {
        fprintf(f, "(no successful trials)\n");
        return 0;
    }
    /* bars start a little below the overall best, so a difference of a few % shows */
    double base = lo - (hi - lo) * 0.15 - lo * 0.005;
    int label = 12, room = width - label - 3 - 12;
    if (room < 8) room = 8;
    const char *name;
    const json_t *unused;
    json_object_foreach((json_t *)first, name, unused) {
        size_t nv = 0;
        tl_pval *v = tl_param_values(trials, name, &nv);
        if (!v) return -1;
        char nb[256];
        fprintf(f, "%s%s%s\n", color ? "\033[1m" : "", tl_safe(name, nb, sizeof nb),
                color ? "\033[0m" : "");
        for (size_t k = 0; k < nv; k++) {
            char vb[64], us[32];
            tl_jstr(v[k].value, vb, sizeof vb);
            tl_fmt_us(v[k].best, us, sizeof us);
            int eighths = hi > base ? (int)lround((v[k].best - base) / (hi - base) * room * 8) : 8;
            if (eighths < 1) eighths = 1;
            int top = v[k].best <= lo;
            char lb[64];   /* right-aligned in `label` columns, cut between characters */
            size_t lw = tl_text_fit(vb, (size_t)label, lb, sizeof lb);
            fprintf(f, "%*s%s \xe2\x94\x82", label - (int)lw, "", lb);
            if (color && top) fputs("\033[31m", f);
            tl_bar(f, eighths);
            if (color && top) fputs("\033[0m", f);
            fprintf(f, " %s%s\n", us, top ? " *" : "");
        }
        free(v);
    }
    fprintf(f, "* the overall best\n");
    return 0;
}

int tl_term_width(void)
{
    const char *cols = getenv("COLUMNS");
    int w = cols ? atoi(cols) : 0;
    if (w <= 0) {
        struct winsize ws;
        if (ioctl(fileno(stdout), TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) w = ws.ws_col;
        else if (ioctl(fileno(stderr), TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) w = ws.ws_col;
    }
    return w > 0 ? w : 80;
}
