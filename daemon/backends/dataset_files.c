/* SPDX-License-Identifier: MIT
 * dataset_files.c - dataset files on disk: which file replay:<name> opens, reading one whole
 * (tt_dataset_load_file), and its content hash, kept per (path, inode, size, mtime) so that a
 * team worker can list what it holds at every poll without reading the files again.
 */
#include "dataset.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* In the order tt_dataset_path tries them (docs/datasets.md). */
static const char *const tt_ds_suffixes[] = {".t4.json",          ".t4.json.gz", ".kt-cache.json",
                                             ".kt-cache.json.gz", ".json",       ".json.gz"};

const char *tt_dataset_suffix(size_t i)
{
    return i < sizeof tt_ds_suffixes / sizeof tt_ds_suffixes[0] ? tt_ds_suffixes[i] : NULL;
}

int tt_dataset_path(const char *dir, const char *name, char *path, size_t cap)
{
    for (size_t i = 0; tt_dataset_suffix(i); i++) {
        struct stat st;
        int n = snprintf(path, cap, "%s/%s%s", dir, name, tt_dataset_suffix(i));
        if (n >= 0 && (size_t)n < cap && stat(path, &st) == 0 && S_ISREG(st.st_mode)) return 1;
    }
    if (cap) path[0] = '\0';
    return 0;
}

/* The whole file into a new buffer *buf of *n bytes (caller frees); *buf NULL on error. */
static tt_rc tt_read_whole(const char *path, char **out, size_t *n, tt_errinfo *err)
{
    *out = NULL;
    *n = 0;
    FILE *f = fopen(path, "rb");
    if (!f)   /* fopen() allocates: ENOMEM is out of memory, not an I/O error */
        return tt_errf(err, errno == ENOMEM ? TT_ENOMEM : TT_EIO, path, "cannot open: %s",
                       strerror(errno));
    size_t cap = 1 << 20;
    char *buf = malloc(cap);
    tt_rc rc = buf ? TT_OK : tt_errf(err, TT_ENOMEM, "", "out of memory");
    while (rc == TT_OK) {
        if (*n == cap) {
            if (cap >= TT_DATASET_MAX_BYTES) {
                rc = tt_errf(err, TT_ETOOBIG, path, "larger than %zu bytes", TT_DATASET_MAX_BYTES);
                break;
            }
            char *nb = realloc(buf, cap * 2);
            if (!nb) {   /* buf stays valid: do not use what was read so far */
                rc = tt_errf(err, TT_ENOMEM, "", "out of memory");
                break;
            }
            buf = nb;
            cap *= 2;
        }
        size_t r = fread(buf + *n, 1, cap - *n, f);
        *n += r;
        if (r == 0) break;
    }
    if (rc == TT_OK && ferror(f)) rc = tt_errf(err, TT_EIO, path, "read error");
    fclose(f);
    if (rc != TT_OK) {
        free(buf);
        *n = 0;
        return rc;
    }
    *out = buf;
    return TT_OK;
}

tt_rc tt_dataset_load_file(const char *path, tt_dataset **out, tt_errinfo *err)
{
    *out = NULL;
    char *buf = NULL;
    size_t n = 0;
    tt_rc rc = tt_read_whole(path, &buf, &n, err);
    if (rc == TT_OK) {
        rc = tt_dataset_load_buffer(buf, n, out, err);
        if (rc != TT_OK && err && err->path[0] == '\0')
            snprintf(err->path, sizeof err->path, "%s", path);
    }
    free(buf);
    return rc;
}

/* ---- content hashes, per (path, inode, size, mtime) ---------------------------------- */
typedef struct tt_hash_entry {
    char *path;
    dev_t dev;
    ino_t ino;
    off_t size;
    struct timespec mtime;
    tt_rc rc;                 /* of the reading: a file that cannot be hashed stays so */
    char hash[17];
    struct tt_hash_entry *next;
} tt_hash_entry;

static pthread_mutex_t tt_hash_mu = PTHREAD_MUTEX_INITIALIZER;
static tt_hash_entry *tt_hash_head;
static size_t tt_hash_nreads;

/* The hash of the file's decompressed bytes, as tt_dataset_load_buffer computes it. */
static tt_rc tt_hash_read(const char *path, char hash[17])
{
    char *buf = NULL, *plain = NULL;
    size_t n = 0, plen = 0;
    tt_rc rc = tt_read_whole(path, &buf, &n, NULL);
    if (rc == TT_OK && n >= 2 && (unsigned char)buf[0] == 0x1f && (unsigned char)buf[1] == 0x8b)
        rc = tt_dataset_gunzip(buf, n, 0, &plain, &plen, NULL);
    if (rc == TT_OK) {
        uint64_t h = plain ? tt_dataset_content_hash(plain, plen) : tt_dataset_content_hash(buf, n);
        snprintf(hash, 17, "%016llx", (unsigned long long)h);
    }
    free(plain);
    free(buf);
    return rc;
}

static int tt_hash_same(const tt_hash_entry *e, const char *path, const struct stat *st)
{
    return strcmp(e->path, path) == 0 && e->dev == st->st_dev && e->ino == st->st_ino &&
           e->size == st->st_size && e->mtime.tv_sec == st->st_mtim.tv_sec &&
           e->mtime.tv_nsec == st->st_mtim.tv_nsec;
}

tt_rc tt_dataset_file_hash(const char *path, char hash[17])
{
    hash[0] = '\0';
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) return TT_EIO;
    pthread_mutex_lock(&tt_hash_mu);
    tt_hash_entry **pe = &tt_hash_head, *e;
    while ((e = *pe) && strcmp(e->path, path) != 0) pe = &e->next;
    if (e && !tt_hash_same(e, path, &st)) {   /* the file changed: forget its old hash */
        *pe = e->next;
        free(e->path);
        free(e);
        e = NULL;
    }
    if (!e) {   /* read under the lock: concurrent first uses of one file read it once */
        char h[17] = "";
        tt_rc rc = tt_hash_read(path, h);
        tt_hash_nreads++;
        if (rc == TT_ENOMEM || !(e = calloc(1, sizeof *e)) || !(e->path = strdup(path))) {
            free(e);   /* not kept: the next call tries again */
            pthread_mutex_unlock(&tt_hash_mu);
            return TT_ENOMEM;
        }
        e->dev = st.st_dev;
        e->ino = st.st_ino;
        e->size = st.st_size;
        e->mtime = st.st_mtim;
        e->rc = rc;
        memcpy(e->hash, h, sizeof h);
        e->next = tt_hash_head;
        tt_hash_head = e;
    }
    tt_rc rc = e->rc;
    memcpy(hash, e->hash, 17);
    pthread_mutex_unlock(&tt_hash_mu);
    return rc;
}

size_t tt_dataset_hash_reads(void)
{
    pthread_mutex_lock(&tt_hash_mu);
    size_t n = tt_hash_nreads;
    pthread_mutex_unlock(&tt_hash_mu);
    return n;
}
