/* C twin of insertion_sort.tiny (the LCG stays below 2^62; the checksum wraps through
   uint64_t). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define WADD(a, b) ((int64_t)((uint64_t)(a) + (uint64_t)(b)))
#define WMUL(a, b) ((int64_t)((uint64_t)(a) * (uint64_t)(b)))

int main(int argc, char **argv) {
    if (argc != 2) return 1;
    int64_t n = strtoll(argv[1], NULL, 10);
    int64_t *a = calloc((size_t)n, sizeof *a);
    int64_t x = 12345;
    for (int64_t i = 0; i < n; i = i + 1) {
        x = (x * 1103515245 + 12345) % 2147483648LL;
        a[i] = x % 100000;
    }
    for (int64_t i = 1; i < n; i = i + 1) {
        int64_t v = a[i];
        int64_t j = i - 1;
        while (j >= 0 && a[j] > v) {
            a[j + 1] = a[j];
            j = j - 1;
        }
        a[j + 1] = v;
    }
    int64_t check = 0;
    for (int64_t i = 0; i < n; i = i + 1) {
        check = WADD(WMUL(check, 17), a[i]);
    }
    printf("%lld %lld %lld %lld\n", (long long)a[0], (long long)a[n / 2],
           (long long)a[n - 1], (long long)check);
    return 0;
}
