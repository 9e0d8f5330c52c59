// SHA-256 of two messages at once, on the x86 SHA extensions (SHA-NI).
//
// One message's rounds form a single chain: each SHA256RNDS2 waits for the one before
// (4 cycles of latency on AMD Zen, which can start one every 2 cycles), so a core hashing
// one photo is half idle. Two photos' chains interleaved fill it: about twice the bytes
// per core-second of a one-message SHA-256 (OpenSSL's). The files sink hashes every photo
// it stores for the catalogue, beside the next photos' stores; this halves that CPU.
//
// Written from FIPS 180-4 and Intel's description of the SHA extensions; checked against
// OpenSSL in Tests/ShutterPipeSupportTests. Without SHA-NI, `shutterpipe_sha256_pair_supported`
// says no and the caller hashes each message with OpenSSL.
#include <stdint.h>
#include <string.h>
#include "shutterpipe_support.h"

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>

static const uint32_t round_constants[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

int shutterpipe_sha256_pair_supported(void) {
    unsigned int a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_SSE4_1) || !(c & bit_SSSE3)) return 0;
    if (__get_cpuid_max(0, 0) < 7) return 0;
    __cpuid_count(7, 0, a, b, c, d);
    return (b & bit_SHA) != 0;
}

int shutterpipe_sha256_pair_fast(void) {
#if defined(__OPTIMIZE__)
    return shutterpipe_sha256_pair_supported();
#else
    return 0;  // unoptimised (a debug build), the rounds run several times slower than OpenSSL's
#endif
}

// The state as SHA256RNDS2 wants it: (A, B, E, F) and (C, D, G, H).
#define SP_TARGET __attribute__((target("sha,sse4.1,ssse3")))

SP_TARGET static inline void to_lanes(const uint32_t h[8], __m128i *abef, __m128i *cdgh) {
    __m128i abcd = _mm_loadu_si128((const __m128i *)&h[0]);
    __m128i efgh = _mm_loadu_si128((const __m128i *)&h[4]);
    abcd = _mm_shuffle_epi32(abcd, 0xB1);           // C D A B (high to low: B A D C as dwords 0..3)
    efgh = _mm_shuffle_epi32(efgh, 0x1B);           // H G F E
    *abef = _mm_alignr_epi8(abcd, efgh, 8);
    *cdgh = _mm_blend_epi16(efgh, abcd, 0xF0);
}

SP_TARGET static inline void from_lanes(__m128i abef, __m128i cdgh, uint32_t h[8]) {
    __m128i feba = _mm_shuffle_epi32(abef, 0x1B);
    __m128i dchg = _mm_shuffle_epi32(cdgh, 0xB1);
    _mm_storeu_si128((__m128i *)&h[0], _mm_blend_epi16(feba, dchg, 0xF0));
    _mm_storeu_si128((__m128i *)&h[4], _mm_alignr_epi8(dchg, feba, 8));
}

// Four rounds of one lane: the message words of group `g` (with their constants added)
// go through the two SHA256RNDS2 of those rounds.
#define SP_ROUNDS(abef, cdgh, words, g)                                                           \
    do {                                                                                          \
        __m128i sp_k = _mm_add_epi32(words, _mm_loadu_si128((const __m128i *)&round_constants[4 * (g)])); \
        cdgh = _mm_sha256rnds2_epu32(cdgh, abef, sp_k);                                           \
        abef = _mm_sha256rnds2_epu32(abef, cdgh, _mm_shuffle_epi32(sp_k, 0x0E));                  \
    } while (0)

// The next four message words from the last four groups w0..w3 (oldest first).
#define SP_SCHEDULE(w0, w1, w2, w3) \
    _mm_sha256msg2_epu32(_mm_add_epi32(_mm_sha256msg1_epu32(w0, w1), _mm_alignr_epi8(w3, w2, 4)), w3)

// `count` blocks of 64 bytes of each of two messages, each lane's state in `a` and `b`.
SP_TARGET static void blocks2(uint32_t a[8], const uint8_t *pa, uint32_t b[8], const uint8_t *pb, size_t count) {
    const __m128i swap = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
    __m128i aAbef, aCdgh, bAbef, bCdgh;
    to_lanes(a, &aAbef, &aCdgh);
    to_lanes(b, &bAbef, &bCdgh);
    for (size_t block = 0; block < count; block++, pa += 64, pb += 64) {
        __m128i aSave0 = aAbef, aSave1 = aCdgh, bSave0 = bAbef, bSave1 = bCdgh;
        __m128i aw[4], bw[4];
        _Pragma("clang loop unroll(full)")
        for (int i = 0; i < 4; i++) {
            aw[i] = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(pa + 16 * i)), swap);
            bw[i] = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(pb + 16 * i)), swap);
            SP_ROUNDS(aAbef, aCdgh, aw[i], i);
            SP_ROUNDS(bAbef, bCdgh, bw[i], i);
        }
        _Pragma("clang loop unroll(full)")
        for (int g = 4; g < 16; g++) {
            // aw[g % 4] holds group g-4 until it is replaced by group g.
            __m128i aNext = SP_SCHEDULE(aw[g % 4], aw[(g + 1) % 4], aw[(g + 2) % 4], aw[(g + 3) % 4]);
            __m128i bNext = SP_SCHEDULE(bw[g % 4], bw[(g + 1) % 4], bw[(g + 2) % 4], bw[(g + 3) % 4]);
            aw[g % 4] = aNext;
            bw[g % 4] = bNext;
            SP_ROUNDS(aAbef, aCdgh, aNext, g);
            SP_ROUNDS(bAbef, bCdgh, bNext, g);
        }
        aAbef = _mm_add_epi32(aAbef, aSave0);
        aCdgh = _mm_add_epi32(aCdgh, aSave1);
        bAbef = _mm_add_epi32(bAbef, bSave0);
        bCdgh = _mm_add_epi32(bCdgh, bSave1);
    }
    from_lanes(aAbef, aCdgh, a);
    from_lanes(bAbef, bCdgh, b);
}

// `count` blocks of one message.
SP_TARGET static void blocks1(uint32_t h[8], const uint8_t *p, size_t count) {
    const __m128i swap = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
    __m128i abef, cdgh;
    to_lanes(h, &abef, &cdgh);
    for (size_t block = 0; block < count; block++, p += 64) {
        __m128i save0 = abef, save1 = cdgh;
        __m128i w[4];
        _Pragma("clang loop unroll(full)")
        for (int i = 0; i < 4; i++) {
            w[i] = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p + 16 * i)), swap);
            SP_ROUNDS(abef, cdgh, w[i], i);
        }
        _Pragma("clang loop unroll(full)")
        for (int g = 4; g < 16; g++) {
            __m128i next = SP_SCHEDULE(w[g % 4], w[(g + 1) % 4], w[(g + 2) % 4], w[(g + 3) % 4]);
            w[g % 4] = next;
            SP_ROUNDS(abef, cdgh, next, g);
        }
        abef = _mm_add_epi32(abef, save0);
        cdgh = _mm_add_epi32(cdgh, save1);
    }
    from_lanes(abef, cdgh, h);
}

// One message read as a sequence of pieces: where its next whole blocks are.
typedef struct {
    const shutterpipe_piece *pieces;
    int count;
    int index;          // the piece being read
    size_t offset;      // into that piece
    uint64_t total;     // bytes taken so far
    uint32_t h[8];
    uint8_t carry[64];  // a block that spans pieces, gathered
} lane;

static void lane_start(lane *l, const shutterpipe_piece *pieces, int count) {
    static const uint32_t initial[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    memset(l, 0, sizeof *l);
    l->pieces = pieces;
    l->count = count;
    memcpy(l->h, initial, sizeof initial);
    while (l->index < l->count && l->pieces[l->index].length == 0) l->index++;
}

static size_t lane_left_in_piece(const lane *l) {
    return l->index < l->count ? l->pieces[l->index].length - l->offset : 0;
}

static void lane_advance(lane *l, size_t bytes) {
    l->offset += bytes;
    l->total += bytes;
    while (l->index < l->count && l->offset == l->pieces[l->index].length) { l->index++; l->offset = 0; }
}

// The next whole blocks of the lane, in place: how many there are in a row (0 when the
// next block spans pieces or the message has less than a block left).
static size_t lane_run(const lane *l, const uint8_t **at) {
    size_t left = lane_left_in_piece(l);
    if (left < 64) return 0;
    *at = (const uint8_t *)l->pieces[l->index].bytes + l->offset;
    return left / 64;
}

// Gathers the next block across pieces into `carry`; 0 when less than a block is left
// (the carry then holds those last bytes, `*tail` of them).
static int lane_gather(lane *l, size_t *tail) {
    size_t have = 0;
    while (have < 64 && l->index < l->count) {
        size_t take = lane_left_in_piece(l);
        if (take > 64 - have) take = 64 - have;
        memcpy(l->carry + have, (const uint8_t *)l->pieces[l->index].bytes + l->offset, take);
        have += take;
        lane_advance(l, take);
    }
    *tail = have;
    return have == 64;
}

SP_TARGET static void lane_finish(lane *l, size_t tail, uint8_t digest[32]) {
    uint8_t last[128];
    memset(last, 0, sizeof last);
    memcpy(last, l->carry, tail);
    last[tail] = 0x80;
    size_t blocks = tail < 56 ? 1 : 2;
    uint64_t bits = l->total * 8;
    for (int i = 0; i < 8; i++) last[64 * blocks - 1 - i] = (uint8_t)(bits >> (8 * i));
    blocks1(l->h, last, blocks);
    for (int i = 0; i < 8; i++) {
        digest[4 * i] = (uint8_t)(l->h[i] >> 24);
        digest[4 * i + 1] = (uint8_t)(l->h[i] >> 16);
        digest[4 * i + 2] = (uint8_t)(l->h[i] >> 8);
        digest[4 * i + 3] = (uint8_t)l->h[i];
    }
}

// One lane's whole blocks from where it is (the other lane is done); returns the tail
// left in its carry.
SP_TARGET static size_t lane_alone(lane *l) {
    for (;;) {
        const uint8_t *at;
        size_t run = lane_run(l, &at);
        if (run > 0) {
            blocks1(l->h, at, run);
            lane_advance(l, run * 64);
            continue;
        }
        size_t tail;
        if (!lane_gather(l, &tail)) return tail;
        blocks1(l->h, l->carry, 1);
    }
}

SP_TARGET void shutterpipe_sha256_pair(const shutterpipe_piece *a, int aCount, const shutterpipe_piece *b, int bCount,
                                       unsigned char aDigest[32], unsigned char bDigest[32]) {
    lane la, lb;
    lane_start(&la, a, aCount);
    lane_start(&lb, b, bCount);
    size_t aTail = 0, bTail = 0;
    int aDone = 0, bDone = 0;
    while (!aDone && !bDone) {
        const uint8_t *pa, *pb;
        size_t ra = lane_run(&la, &pa), rb = lane_run(&lb, &pb);
        if (ra > 0 && rb > 0) {
            size_t run = ra < rb ? ra : rb;
            blocks2(la.h, pa, lb.h, pb, run);
            lane_advance(&la, run * 64);
            lane_advance(&lb, run * 64);
            continue;
        }
        // A block that spans pieces (or the end) on one lane or both: gathered, then both
        // lanes take one block together when both have one.
        if (ra == 0) {
            if (!lane_gather(&la, &aTail)) { aDone = 1; }
            else { pa = la.carry; }
        }
        if (rb == 0) {
            if (!lane_gather(&lb, &bTail)) { bDone = 1; }
            else { pb = lb.carry; }
        }
        if (!aDone && !bDone) {
            blocks2(la.h, pa, lb.h, pb, 1);
            if (ra > 0) lane_advance(&la, 64);
            if (rb > 0) lane_advance(&lb, 64);
        } else if (!aDone) {
            // b has ended: a's block in hand, then the rest of a alone.
            blocks1(la.h, pa, 1);
            if (ra > 0) lane_advance(&la, 64);
        } else if (!bDone) {
            blocks1(lb.h, pb, 1);
            if (rb > 0) lane_advance(&lb, 64);
        }
    }
    if (!aDone) aTail = lane_alone(&la);
    if (!bDone) bTail = lane_alone(&lb);
    lane_finish(&la, aTail, aDigest);
    lane_finish(&lb, bTail, bDigest);
}

#else
int shutterpipe_sha256_pair_supported(void) { return 0; }
int shutterpipe_sha256_pair_fast(void) { return 0; }
void shutterpipe_sha256_pair(const shutterpipe_piece *a, int aCount, const shutterpipe_piece *b, int bCount,
                             unsigned char aDigest[32], unsigned char bDigest[32]) {
    (void)a; (void)aCount; (void)b; (void)bCount;
    memset(aDigest, 0, 32);
    memset(bDigest, 0, 32);
}
#endif
