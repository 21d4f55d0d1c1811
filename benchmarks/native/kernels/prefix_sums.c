/* C twin of prefix_sums.tiny. Tiny's ints are 64-bit and wrap: additions go through
   uint64_t so overflow is defined. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define WADD(a, b) ((int64_t)((uint64_t)(a) + (uint64_t)(b)))

int main(int argc, char **argv) {
    if (argc != 2) return 1;
    int64_t n = strtoll(argv[1], NULL, 10);
    int64_t *a = calloc((size_t)n, sizeof *a);
    for (int64_t i = 0; i < n; i = i + 1) {
        a[i] = i * 7 % 1000;
    }
    int64_t total = 0;
    for (int64_t pass = 0; pass < 20; pass = pass + 1) {
        int64_t s = 0;
        for (int64_t i = 0; i < n; i = i + 1) {
            s = WADD(s, a[i]);
            a[i] = s;
        }
        total = WADD(total, s);
    }
    printf("%lld %lld %lld\n", (long long)total, (long long)a[n / 2], (long long)a[n - 1]);
    return 0;
}
