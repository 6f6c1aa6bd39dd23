/* SPDX-License-Identifier: MIT
 * progress.c - the progress bar of `tlctl tune --wait`: trials done / planned, best so far
 * and ETA; redrawn in place on a terminal (stderr), one line per update otherwise.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tlctl.h"

static double tl_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void tl_progress_init(tl_progress *p, FILE *f)
{
    memset(p, 0, sizeof *p);
    p->tty = isatty(fileno(f));
    p->t0 = tl_now();
    p->last_done = -1;
}

void tl_progress_update(tl_progress *p, long long done, long long planned, double best_us,
                        const char *state)
{
    char best[32], eta[32] = "-", st[64];
    tl_fmt_us(best_us, best, sizeof best);
    tl_safe(state, st, sizeof st);   /* the server's word */
    double el = tl_now() - p->t0;
    if (done > 0 && planned > done) {
        double left = el / (double)done * (double)(planned - done);
        snprintf(eta, sizeof eta, "%d:%02d", (int)(left / 60), (int)left % 60);
    } else if (planned > 0 && done >= planned) {
        snprintf(eta, sizeof eta, "0:00");
    }
    if (p->tty) {
        char bar[31];
        int w = 30, fill = planned > 0 ? (int)(w * (done > planned ? planned : done) / planned) : 0;
        for (int i = 0; i < w; i++) bar[i] = i < fill ? '#' : '.';
        bar[w] = '\0';
        if (p->lines > 0) fprintf(stderr, "\033[%dA", p->lines);   /* back to the bar's line */
        fprintf(stderr, "\r\033[K[%s] %lld/%lld trials  best %s  ETA %s  %s", bar, done, planned,
                best, eta, st);
        p->lines = 0;
        if (p->plot) {
            fputc('\n', stderr);
            for (const char *l = p->plot; *l;) {
                const char *e = strchr(l, '\n');
                size_t n = e ? (size_t)(e - l) : strlen(l);
                fprintf(stderr, "\033[K%.*s\n", (int)n, l);
                p->lines++;
                l += n + (e ? 1 : 0);
            }
            p->lines++;   /* the bar's own line, which ended with the newline above */
            fputs("\033[K", stderr);
        }
        p->drawn = 1;
    } else if (done != p->last_done) {
        fprintf(stderr, "progress: %lld/%lld trials, best %s, ETA %s, %s\n", done, planned, best,
                eta, st);
    }
    fflush(stderr);
    p->last_done = done;
}

void tl_progress_set_plot(tl_progress *p, char *text)
{
    free(p->plot);
    p->plot = text;
}

void tl_progress_end(tl_progress *p)
{
    if (p->tty && p->drawn && !p->lines) fputc('\n', stderr);
    p->drawn = 0;
    free(p->plot);
    p->plot = NULL;
}
