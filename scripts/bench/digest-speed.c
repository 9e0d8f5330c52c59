// The two costs issue 43's catalogue work turned on, each timed on its own:
//   - SHA-256 of two 10 MB photos: OpenSSL one after the other, against
//     shutterpipe_sha256_pair (Plugins/SDK/Sources/CShutterPipeSupport/sha256_pair.c);
//   - a 10 MB buffer's pages: faulted in fresh (what malloc's memory costs each photo),
//     against written again in a buffer kept from the photo before (PhotoMemory's pool).
// Prints one line per measure: name, then the milliseconds of each round.
// Built and run by scripts/bench-digest.
#include <openssl/sha.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include "shutterpipe_support.h"

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

int main(int argc, char **argv) {
    int rounds = argc > 1 ? atoi(argv[1]) : 15;
    size_t size = 10u << 20;
    unsigned char *a = malloc(size), *b = malloc(size), da[32], db[32], ea[32], eb[32];
    for (size_t i = 0; i < size; i++) { a[i] = (unsigned char)(i * 31 + 7); b[i] = (unsigned char)(i * 17 + 3); }
    if (!shutterpipe_sha256_pair_supported()) { fprintf(stderr, "this CPU has no SHA extensions\n"); return 2; }
    double openssl[rounds], pair[rounds], fresh[rounds], reused[rounds];
    unsigned char *kept = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    memset(kept, 1, size);
    for (int r = 0; r < rounds; r++) {
        double t0 = now();
        SHA256(a, size, ea);
        SHA256(b, size, eb);
        double t1 = now();
        shutterpipe_piece pa = {a, size}, pb = {b, size};
        shutterpipe_sha256_pair(&pa, 1, &pb, 1, da, db);
        double t2 = now();
        if (memcmp(da, ea, 32) || memcmp(db, eb, 32)) { fprintf(stderr, "the digests differ\n"); return 1; }
        openssl[r] = t1 - t0;
        pair[r] = t2 - t1;
        double t3 = now();
        unsigned char *buffer = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        for (size_t i = 0; i < size; i += 4096) buffer[i] = (unsigned char)r;
        double t4 = now();
        munmap(buffer, size);
        double t5 = now();
        for (size_t i = 0; i < size; i += 4096) kept[i] = (unsigned char)r;
        double t6 = now();
        fresh[r] = t4 - t3;
        reused[r] = t6 - t5;
    }
    const char *names[] = {"openssl-two", "pair", "pages-fresh", "pages-reused"};
    double *values[] = {openssl, pair, fresh, reused};
    for (int m = 0; m < 4; m++) {
        printf("%s", names[m]);
        for (int r = 0; r < rounds; r++) printf(" %.3f", values[m][r]);
        printf("\n");
    }
    return 0;
}
