/* SPDX-License-Identifier: MIT
 * test_fidelity_timing.c - bench_fidelity's timing-method classes (bench/common/fidelity_timing):
 * every `timing` text of ../shared/ascend/published.json has a reviewed class in
 * tests/data/fidelity/timing.txt and the classifier gives it; the launch each class charges;
 * which methods empty the L2 before each call.
 */
#include <stdlib.h>
#include <string.h>

#include "fidelity_timing.h"
#include "tt_test.h"

#define MAXROWS 128

typedef struct row {
    char cls[16];
    char text[512];
} row;

static row g_rows[MAXROWS];
static size_t g_nrows;

/* "class | text" lines; # comments and blank lines skipped. */
static int load_table(void)
{
    char *path = tt_test_src("tests/data/fidelity/timing.txt");
    char *buf = path ? tt_test_read_file(path, NULL) : NULL;
    free(path);
    if (!buf) return -1;
    g_nrows = 0;
    for (char *save = NULL, *l = strtok_r(buf, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
        if (!*l || *l == '#') continue;
        char *bar = strstr(l, " | ");
        if (!bar || g_nrows == MAXROWS || (size_t)(bar - l) >= sizeof g_rows[0].cls ||
            strlen(bar + 3) >= sizeof g_rows[0].text) {
            free(buf);
            return -1;
        }
        memcpy(g_rows[g_nrows].cls, l, (size_t)(bar - l));
        g_rows[g_nrows].cls[bar - l] = '\0';
        strcpy(g_rows[g_nrows].text, bar + 3);
        g_nrows++;
    }
    free(buf);
    return g_nrows > 0 ? 0 : -1;
}

static void test_table_classes(void)
{
    size_t per[3] = {0, 0, 0};
    for (size_t i = 0; i < g_nrows; i++) {
        tt_fidt k = tt_fidt_of(g_rows[i].text);
        CU_ASSERT_STRING_EQUAL(tt_fidt_name(k), g_rows[i].cls);
        if (strcmp(tt_fidt_name(k), g_rows[i].cls) != 0)
            fprintf(stderr, "\n  '%s': %s, expected %s", g_rows[i].text, tt_fidt_name(k),
                    g_rows[i].cls);
        per[k]++;
    }
    /* the table exercises every class */
    CU_ASSERT(per[TT_FIDT_DEVICE] > 0 && per[TT_FIDT_LOOP] > 0 && per[TT_FIDT_UNSTATED] > 0);
}

static void test_published_covered(void)
{
    char *path = tt_test_shared("ascend/published.json");
    json_error_t e;
    json_t *doc = path ? json_load_file(path, 0, &e) : NULL;
    free(path);
    CU_ASSERT_PTR_NOT_NULL_FATAL(doc);
    json_t *pts = json_object_get(doc, "points");
    CU_ASSERT_FATAL(json_is_array(pts) && json_array_size(pts) > 0);
    size_t i, missing = 0;
    json_t *p;
    json_array_foreach(pts, i, p) {
        const char *t = json_string_value(json_object_get(p, "timing"));
        size_t r = 0;
        while (r < g_nrows && strcmp(g_rows[r].text, t ? t : "") != 0) r++;
        if (r == g_nrows) {
            missing++;
            fprintf(stderr, "\n  %s: timing '%s' has no class in tests/data/fidelity/timing.txt",
                    json_string_value(json_object_get(p, "id")), t ? t : "");
        }
    }
    CU_ASSERT_EQUAL(missing, 0);
    json_decref(doc);
}

static void test_edges_and_launch(void)
{
    static const struct {
        const char *text;
        tt_fidt want;
    } cases[] = {
        {NULL, TT_FIDT_UNSTATED},
        {"", TT_FIDT_UNSTATED},
        {"tool not specified; do_bench or msprof", TT_FIDT_UNSTATED}, /* not stated wins */
        {"do_bench", TT_FIDT_LOOP},
        {"msprof", TT_FIDT_DEVICE},
        {"stopwatch", TT_FIDT_UNSTATED},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
        CU_ASSERT_EQUAL(tt_fidt_of(cases[c].text), cases[c].want);
    CU_ASSERT_DOUBLE_EQUAL(tt_fidt_launch_us(TT_FIDT_DEVICE, 9, 1), 9, 0);
    CU_ASSERT_DOUBLE_EQUAL(tt_fidt_launch_us(TT_FIDT_UNSTATED, 9, 1), 9, 0);
    CU_ASSERT_DOUBLE_EQUAL(tt_fidt_launch_us(TT_FIDT_LOOP, 9, 1), 1, 0);
    CU_ASSERT_STRING_EQUAL(tt_fidt_name(TT_FIDT_UNSTATED), "n/s");
}

/* Which methods empty the L2 before each call: triton.testing.do_bench only (its NPU driver
 * zeroes a 192 MiB buffer); another library's do_bench and event loops keep it. */
static void test_flushes_l2(void)
{
    static const struct {
        const char *text;
        int want;
    } cases[] = {
        {NULL, 0},
        {"", 0},
        {"triton.testing.do_bench median (host-side event timing)", 1},
        {"do_bench (warmup=20, rep=100, 3-run average)", 0},
        {"torch.npu.Event over a loop of 50 calls", 0},
        {"msprof op Task Duration", 0},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
        CU_ASSERT_EQUAL(tt_fidt_flushes_l2(cases[c].text), cases[c].want);
}

static const tt_test_case cases[] = {{"table_classes", test_table_classes},
                                     {"flushes_l2", test_flushes_l2},
                                     {"published_covered", test_published_covered},
                                     {"edges_and_launch", test_edges_and_launch},
                                     {NULL, NULL}};
static const tt_test_suite suites[] = {{"fidelity_timing", load_table, NULL, cases},
                                       {NULL, NULL, NULL, NULL}};

int main(int argc, char **argv) { return tt_test_main(argc, argv, suites); }
