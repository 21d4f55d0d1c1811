/* C twin of sieve.tiny. A Tiny [bool] element is one byte natively, so the twin uses
   unsigned char flags too (the same memory traffic); the length travels with the array
   as it does in Tiny. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static int64_t sieve(unsigned char *composite, int64_t n) {
    for (int64_t i = 0; i < n; i = i + 1) {
        composite[i] = 0;
    }
    int64_t count = 0;
    for (int64_t i = 2; i < n; i = i + 1) {
        if (!composite[i]) {
            count = count + 1;
            for (int64_t j = i * i; j < n; j = j + i) {
                composite[j] = 1;
            }
        }
    }
    return count;
}

int main(int argc, char **argv) {
    if (argc != 3) return 1;
    int64_t n = strtoll(argv[1], NULL, 10);
    int64_t reps = strtoll(argv[2], NULL, 10);
    unsigned char *composite = calloc((size_t)n, sizeof *composite);
    int64_t total = 0;
    for (int64_t r = 0; r < reps; r = r + 1) {
        total = total + sieve(composite, n);
    }
    printf("%lld %lld\n", (long long)(total / reps), (long long)total);
    return 0;
}
