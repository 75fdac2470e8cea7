/* Logs every malloc, realloc and calloc of BIGALLOC_MIN bytes or more (3 MiB by default) with its backtrace, to
 * BIGALLOC_LOG (/tmp/bigalloc.log by default), for LD_PRELOAD into a process (Rust's System allocator calls
 * malloc). bigalloc_report.py groups the log by call site.
 *
 *   gcc -O2 -shared -fPIC -o /tmp/bigalloc.so bench/memory/bigalloc.c
 *   python3 bench/memory/serve_memory.py --same-conversation --messages 4 \
 *       --env LD_PRELOAD=/tmp/bigalloc.so --env BIGALLOC_LOG=/tmp/bigalloc.log
 *   python3 bench/memory/bigalloc_report.py /tmp/bigalloc.log target/debug/steward
 */
#define _GNU_SOURCE
#include <execinfo.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
#include <pthread.h>
extern void *__libc_malloc(size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_calloc(size_t, size_t);
static int fd = -1;
static __thread int inside = 0;
static size_t limit = 3u << 20;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
__attribute__((constructor)) static void init(void) {
    void *b[2]; backtrace(b, 2); /* loads libgcc before any logging, which must not allocate */
    const char *path = getenv("BIGALLOC_LOG");
    const char *min = getenv("BIGALLOC_MIN");
    if (min) limit = strtoull(min, NULL, 10);
    fd = open(path ? path : "/tmp/bigalloc.log", O_WRONLY | O_CREAT | O_APPEND, 0644);
}
static void note(const char *what, size_t size) {
    if (size < limit || inside || fd < 0) return;
    inside = 1;
    void *b[48]; int n = backtrace(b, 48);
    char head[96]; int len = snprintf(head, sizeof head, "== %s %zu\n", what, size);
    pthread_mutex_lock(&lock);
    write(fd, head, len);
    backtrace_symbols_fd(b, n, fd);
    pthread_mutex_unlock(&lock);
    inside = 0;
}
void *malloc(size_t s) { note("malloc", s); return __libc_malloc(s); }
void *realloc(void *p, size_t s) { note("realloc", s); return __libc_realloc(p, s); }
void *calloc(size_t a, size_t b) { note("calloc", a * b); return __libc_calloc(a, b); }
