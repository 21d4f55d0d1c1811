/* C twin of matmul.tiny: matrices as arrays of separately allocated rows, like Tiny's
   [[int]]; the checksum's multiply-add wraps through uint64_t. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define WADD(a, b) ((int64_t)((uint64_t)(a) + (uint64_t)(b)))
#define WMUL(a, b) ((int64_t)((uint64_t)(a) * (uint64_t)(b)))

static int64_t **matrix(int64_t n, int64_t seed) {
    int64_t **m = calloc((size_t)n, sizeof *m);
    for (int64_t i = 0; i < n; i = i + 1) {
        int64_t *row = calloc((size_t)n, sizeof *row);
        for (int64_t j = 0; j < n; j = j + 1) {
            row[j] = (i * seed + j * 7 + 3) % 1000 - 500;
        }
        m[i] = row;
    }
    return m;
}

int main(int argc, char **argv) {
    if (argc != 2) return 1;
    int64_t n = strtoll(argv[1], NULL, 10);
    int64_t **a = matrix(n, 31);
    int64_t **b = matrix(n, 17);
    int64_t **c = matrix(n, 0);
    for (int64_t i = 0; i < n; i = i + 1) {
        int64_t *ci = c[i];
        for (int64_t j = 0; j < n; j = j + 1) {
            int64_t s = 0;
            for (int64_t k = 0; k < n; k = k + 1) {
                s = WADD(s, a[i][k] * b[k][j]);
            }
            ci[j] = s;
        }
    }
    int64_t check = 0;
    for (int64_t i = 0; i < n; i = i + 1) {
        for (int64_t j = 0; j < n; j = j + 1) {
            check = WADD(WMUL(check, 31), c[i][j]);
        }
    }
    printf("%lld %lld %lld\n", (long long)check, (long long)c[0][0],
           (long long)c[n - 1][n - 1]);
    return 0;
}
