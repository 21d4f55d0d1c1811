/* C twin of matmul_flat.tiny: three n*n arrays, element (i, j) at i * n + j; sums and
   the checksum wrap through uint64_t as Tiny's ints do. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define WADD(a, b) ((int64_t)((uint64_t)(a) + (uint64_t)(b)))
#define WMUL(a, b) ((int64_t)((uint64_t)(a) * (uint64_t)(b)))

static int64_t *matrix(int64_t n, int64_t seed) {
    int64_t *m = calloc((size_t)(n * n), sizeof *m);
    for (int64_t i = 0; i < n; i = i + 1) {
        for (int64_t j = 0; j < n; j = j + 1) {
            m[i * n + j] = (i * seed + j * 7 + 3) % 1000 - 500;
        }
    }
    return m;
}

int main(int argc, char **argv) {
    if (argc != 2) return 1;
    int64_t n = strtoll(argv[1], NULL, 10);
    int64_t *a = matrix(n, 31);
    int64_t *b = matrix(n, 17);
    int64_t *c = calloc((size_t)(n * n), sizeof *c);
    for (int64_t i = 0; i < n; i = i + 1) {
        for (int64_t j = 0; j < n; j = j + 1) {
            int64_t s = 0;
            for (int64_t k = 0; k < n; k = k + 1) {
                s = WADD(s, WMUL(a[i * n + k], b[k * n + j]));
            }
            c[i * n + j] = s;
        }
    }
    int64_t check = 0;
    for (int64_t i = 0; i < n * n; i = i + 1) {
        check = WADD(WMUL(check, 31), c[i]);
    }
    printf("%lld %lld %lld\n", (long long)check, (long long)c[0], (long long)c[n * n - 1]);
    return 0;
}
