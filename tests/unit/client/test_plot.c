/* SPDX-License-Identifier: MIT
 * test_plot.c - tlctl's terminal plots (client/plot.c, compiled in) against golden files in
 * tests/data/plot/: the convergence curve and the per-parameter bars of fixed trial series at
 * 40 and 80 columns without colour, plus the colour escapes when colour is on.
 * Regenerate the golden files after an intended change: TT_UPDATE_GOLDEN=1 ./test_plot
 * (then review the diff).
 */
#include <stdlib.h>
#include <string.h>

#include "../../../client/out.c"
#include "../../../client/plot.c"
#include "tt_test.h"

/* A run that improves in steps, with a failed trial (0) and a slow outlier. */
static const double tl_series_steps[] = {30.1, 28.4, 0,    29.9, 25.2, 26.0, 24.9, 31.5, 22.3,
                                         23.0, 22.9, 21.7, 40.2, 21.9, 21.6, 22.0, 21.6, 21.8,
                                         21.65, 21.6};
/* A wide range (log axis) and a single trial. */
static const double tl_series_wide[] = {900, 120, 35, 410, 18, 22, 16.5, 2000, 15.9, 16.1};
static const double tl_series_one[] = {12.5};

static const char *tl_trials_json =
    "[{\"seq\":1,\"status\":\"ok\",\"median_us\":30.0,\"config\":{\"block_M\":128,\"stages\":2,\"mode\":\"a\"}},"
    " {\"seq\":2,\"status\":\"ok\",\"median_us\":21.0,\"config\":{\"block_M\":256,\"stages\":2,\"mode\":\"b\"}},"
    " {\"seq\":3,\"status\":\"build_failed\",\"config\":{\"block_M\":64,\"stages\":4,\"mode\":\"a\"}},"
    " {\"seq\":4,\"status\":\"ok\",\"median_us\":25.5,\"config\":{\"block_M\":64,\"stages\":3,\"mode\":\"a\"}},"
    " {\"seq\":5,\"status\":\"ok\",\"median_us\":20.0,\"config\":{\"block_M\":256,\"stages\":3,\"mode\":\"b\"}},"
    " {\"seq\":6,\"status\":\"ok\",\"median_us\":44.0,\"config\":{\"block_M\":128,\"stages\":4,\"mode\":\"b\"}}]";

typedef struct tl_golden {
    const char *file;          /* tests/data/plot/<file> */
    const double *series;      /* NULL: the params plot of tl_trials_json */
    size_t n;
    int width, height;
} tl_golden;

#define N(a) (sizeof(a) / sizeof((a)[0]))
static const tl_golden tl_goldens[] = {
    {"convergence_steps_80.txt", tl_series_steps, N(tl_series_steps), 80, 10},
    {"convergence_steps_40.txt", tl_series_steps, N(tl_series_steps), 40, 6},
    {"convergence_wide_80.txt", tl_series_wide, N(tl_series_wide), 80, 8},
    {"convergence_one_40.txt", tl_series_one, N(tl_series_one), 40, 4},
    {"params_80.txt", NULL, 0, 80, 0},
    {"params_40.txt", NULL, 0, 40, 0},
};

static char *tl_render(const tl_golden *g, int color)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return NULL;
    int rc;
    if (g->series) {
        rc = tl_plot_convergence(f, g->series, g->n, g->width, g->height, color);
    } else {
        json_t *tr = json_loads(tl_trials_json, 0, NULL);
        rc = tl_plot_params(f, tr, g->width, color);
        json_decref(tr);
    }
    fclose(f);
    CU_ASSERT_EQUAL(rc, 0);
    return buf;
}

/* Display width of a UTF-8 line: code points (the plots use single-width characters). */
static size_t tl_cols(const char *s, size_t n)
{
    size_t c = 0;
    for (size_t i = 0; i < n; i++)
        if (((unsigned char)s[i] & 0xC0) != 0x80) c++;
    return c;
}

static void test_golden(void)
{
    int update = getenv("TT_UPDATE_GOLDEN") != NULL;
    for (size_t i = 0; i < N(tl_goldens); i++) {
        const tl_golden *g = &tl_goldens[i];
        char *got = tl_render(g, 0);
        CU_ASSERT_PTR_NOT_NULL_FATAL(got);
        char rel[128];
        snprintf(rel, sizeof rel, "tests/data/plot/%s", g->file);
        char *path = tt_test_src(rel);
        if (update) {
            FILE *f = fopen(path, "w");
            CU_ASSERT_PTR_NOT_NULL_FATAL(f);
            fputs(got, f);
            fclose(f);
        }
        size_t len = 0;
        char *want = tl_read_file(path, &len);
        if (!want || strcmp(want, got) != 0)
            fprintf(stderr, "\n%s differs; got:\n%s\n", rel, got);
        CU_ASSERT_PTR_NOT_NULL(want);
        if (want) CU_ASSERT_STRING_EQUAL(got, want);
        /* no line is wider than asked, and no escape codes without colour */
        for (const char *l = got; *l;) {
            const char *e = strchr(l, '\n');
            size_t n = e ? (size_t)(e - l) : strlen(l);
            if (tl_cols(l, n) > (size_t)g->width) fprintf(stderr, "\n%s: too wide: %.*s\n", rel, (int)n, l);
            CU_ASSERT(tl_cols(l, n) <= (size_t)g->width);
            l += n + (e ? 1 : 0);
        }
        CU_ASSERT_PTR_NULL(strchr(got, '\033'));
        free(want);
        free(path);
        free(got);
    }
}

static void test_colour(void)
{
    char *c = tl_render(&tl_goldens[0], 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    CU_ASSERT_PTR_NOT_NULL(strstr(c, "\033[31m"));   /* the best-so-far line is red */
    CU_ASSERT_PTR_NOT_NULL(strstr(c, "\033[0m"));
    free(c);
    c = tl_render(&tl_goldens[4], 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    CU_ASSERT_PTR_NOT_NULL(strstr(c, "\033[1mblock_M\033[0m"));
    free(c);
}

static void test_edges(void)
{
    /* nothing to plot: one explanatory line, no crash */
    static const double none[] = {0, 0};
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    CU_ASSERT_EQUAL(tl_plot_convergence(f, none, 2, 80, 8, 0), 0);
    CU_ASSERT_EQUAL(tl_plot_convergence(f, none, 0, 5, 1, 0), 0);
    json_t *empty = json_array();
    CU_ASSERT_EQUAL(tl_plot_params(f, empty, 80, 0), 0);
    json_decref(empty);
    fclose(f);
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "no successful trials"));
    free(buf);
    /* a tiny width is widened to what the axis needs, never negative */
    static const double two[] = {5, 4};
    buf = NULL;
    f = open_memstream(&buf, &len);
    CU_ASSERT_EQUAL(tl_plot_convergence(f, two, 2, 3, 1, 0), 0);
    fclose(f);
    CU_ASSERT(strlen(buf) > 0);
    free(buf);
}

/* Value labels are right-aligned in 12 screen columns and cut between characters: a wide
 * (CJK) value used to be cut by bytes, in the middle of a character, and an accented one
 * shifted its bar left by the extra bytes. */
static void test_labels(void)
{
    json_t *tr = json_loads(
        "[{\"status\":\"ok\",\"median_us\":3,\"config\":{\"m\":\"\u77e9\u9635\u77e9\u9635"
        "\u77e9\u9635\u77e9\u9635\"}},"
        " {\"status\":\"ok\",\"median_us\":4,\"config\":{\"m\":\"caf\u00e9\"}},"
        " {\"status\":\"ok\",\"median_us\":5,\"config\":{\"m\":\"x\"}}]", 0, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(tr);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_EQUAL(tl_plot_params(f, tr, 60, 0), 0);
    fclose(f);
    json_decref(tr);
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "\xe7\x9f\xa9\xe9\x98\xb5\xe7\x9f\xa9\xe9\x98\xb5"
                                       "\xe7\x9f\xa9\xe9\x98\xb5 \xe2\x94\x82"));   /* 6 of 8 */
    CU_ASSERT_PTR_NOT_NULL(strstr(buf, "       caf\xc3\xa9 \xe2\x94\x82"));
    size_t bars = 0;
    for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
        char *bar = strstr(line, "\xe2\x94\x82");
        if (!bar) continue;
        *bar = '\0';
        CU_ASSERT_EQUAL(tl_text_cols(line), 13);   /* label + one space, on every row */
        bars++;
    }
    CU_ASSERT_EQUAL(bars, 3);
    free(buf);
}

static const tt_test_case cases[] = {
    {"golden", test_golden},
    {"labels", test_labels},
    {"colour", test_colour},
    {"edges", test_edges},
    {NULL, NULL}};
static const tt_test_suite suites[] = {{"tlctl_plot", NULL, NULL, cases}, {NULL, NULL, NULL, NULL}};

int main(int argc, char **argv) { return tt_test_main(argc, argv, suites); }
