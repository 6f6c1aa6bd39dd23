/* SPDX-License-Identifier: MIT
 * dataset_cache.c - process-wide cache of loaded dataset files, keyed by (path, inode, size, mtime).
 *
 * Ownership: the cache owns every parse; a borrower (a replay backend) holds one reference
 * from tt_dataset_cache_get to tt_dataset_cache_release.  When a file changes on disk, its
 * newer parse supersedes the older one, which is freed once no borrower holds it (a daemon
 * whose operator replaces a dataset file keeps one parse of it, not one per version).
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
    size_t refs;              /* borrowers holding ds */
    int superseded;           /* a newer parse of path exists: freed at refs 0 */
    struct tt_cache_entry *next;
} tt_cache_entry;

static pthread_mutex_t tt_cache_mu = PTHREAD_MUTEX_INITIALIZER;
static tt_cache_entry *tt_cache_head;
static size_t tt_cache_nloads;

static void tt_entry_free(tt_cache_entry *e)
{
    tt_dataset_free(e->ds);
    free(e->path);
    free(e);
}

/* Older parses of path are superseded by the one just made: free those nobody holds. */
static void tt_supersede(const char *path)
{
    for (tt_cache_entry **pp = &tt_cache_head->next; *pp;) {   /* the head is the new parse */
        tt_cache_entry *e = *pp;
        if (strcmp(e->path, path) != 0) {
            pp = &e->next;
            continue;
        }
        e->superseded = 1;
        if (e->refs == 0) {
            *pp = e->next;
            tt_entry_free(e);
        } else {
            pp = &e->next;
        }
    }
}

tt_rc tt_dataset_cache_get(const char *path, const tt_dataset **out, tt_errinfo *err)
{
    *out = NULL;
    struct stat st;
    if (stat(path, &st) != 0) return tt_errf(err, TT_EIO, path, "cannot open: %s", strerror(errno));
    pthread_mutex_lock(&tt_cache_mu);
    for (tt_cache_entry *e = tt_cache_head; e; e = e->next)
        if (strcmp(e->path, path) == 0 && e->dev == st.st_dev && e->ino == st.st_ino &&
            e->size == st.st_size && e->mtime.tv_sec == st.st_mtim.tv_sec &&
            e->mtime.tv_nsec == st.st_mtim.tv_nsec && !e->superseded) {
            e->refs++;
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
        e->refs = 1;
        e->next = tt_cache_head;
        tt_cache_head = e;
        tt_cache_nloads++;
        tt_supersede(path);
        *out = ds;
    }
    pthread_mutex_unlock(&tt_cache_mu);
    return rc;
}

void tt_dataset_cache_release(const tt_dataset *ds)
{
    if (!ds) return;
    pthread_mutex_lock(&tt_cache_mu);
    for (tt_cache_entry **pp = &tt_cache_head; *pp; pp = &(*pp)->next) {
        tt_cache_entry *e = *pp;
        if (e->ds != ds) continue;
        if (e->refs) e->refs--;
        if (e->refs == 0 && e->superseded) {
            *pp = e->next;
            tt_entry_free(e);
        }
        break;
    }
    pthread_mutex_unlock(&tt_cache_mu);
}

size_t tt_dataset_cache_held(void)
{
    pthread_mutex_lock(&tt_cache_mu);
    size_t n = 0;
    for (const tt_cache_entry *e = tt_cache_head; e; e = e->next) n++;
    pthread_mutex_unlock(&tt_cache_mu);
    return n;
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
        tt_entry_free(e);
    }
    pthread_mutex_unlock(&tt_cache_mu);
}
