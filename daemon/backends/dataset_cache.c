/* SPDX-License-Identifier: MIT
 * dataset_cache.c - process-wide cache of loaded dataset files, keyed by (path, inode, size, mtime).
 */
#include "dataset.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct tt_cache_entry {
    char *path;
    dev_t dev;
    ino_t ino;
    off_t size;
    struct timespec mtime;
    tt_dataset *ds;
    struct tt_cache_entry *next;
} tt_cache_entry;

static pthread_mutex_t tt_cache_mu = PTHREAD_MUTEX_INITIALIZER;
static tt_cache_entry *tt_cache_head;
static size_t tt_cache_nloads;

tt_rc tt_dataset_cache_get(const char *path, const tt_dataset **out, tt_errinfo *err)
{
    *out = NULL;
    struct stat st;
    if (stat(path, &st) != 0) return tt_errf(err, TT_EIO, path, "cannot open: %s", strerror(errno));
    pthread_mutex_lock(&tt_cache_mu);
    for (tt_cache_entry *e = tt_cache_head; e; e = e->next)
        if (strcmp(e->path, path) == 0 && e->dev == st.st_dev && e->ino == st.st_ino &&
            e->size == st.st_size && e->mtime.tv_sec == st.st_mtim.tv_sec &&
            e->mtime.tv_nsec == st.st_mtim.tv_nsec) {
            *out = e->ds;
            pthread_mutex_unlock(&tt_cache_mu);
            return TT_OK;
        }
    /* Parsing under the lock: concurrent first uses of one file parse it once. */
    tt_dataset *ds = NULL;
    tt_rc rc = tt_dataset_load_file(path, &ds, err);
    tt_cache_entry *e = NULL;
    if (rc == TT_OK && (!(e = calloc(1, sizeof *e)) || !(e->path = strdup(path)))) {
        free(e);
        tt_dataset_free(ds);
        rc = tt_errf(err, TT_ENOMEM, "", "out of memory");
    }
    if (rc == TT_OK) {
        e->dev = st.st_dev;
        e->ino = st.st_ino;
        e->size = st.st_size;
        e->mtime = st.st_mtim;
        e->ds = ds;
        e->next = tt_cache_head;
        tt_cache_head = e;
        tt_cache_nloads++;
        *out = ds;
    }
    pthread_mutex_unlock(&tt_cache_mu);
    return rc;
}

size_t tt_dataset_cache_loads(void)
{
    pthread_mutex_lock(&tt_cache_mu);
    size_t n = tt_cache_nloads;
    pthread_mutex_unlock(&tt_cache_mu);
    return n;
}

void tt_dataset_cache_clear(void)
{
    pthread_mutex_lock(&tt_cache_mu);
    while (tt_cache_head) {
        tt_cache_entry *e = tt_cache_head;
        tt_cache_head = e->next;
        tt_dataset_free(e->ds);
        free(e->path);
        free(e);
    }
    pthread_mutex_unlock(&tt_cache_mu);
}
