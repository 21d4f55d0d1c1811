/* C twin of lattice.tiny (no value here can overflow for the sizes used, and the
   arithmetic is written the same way). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    if (argc != 2) return 1;
    int64_t n = strtoll(argv[1], NULL, 10);
    int64_t r2 = n * n;
    int64_t inside = 0;
    int64_t weight = 0;
    for (int64_t i = 0; i < n; i = i + 1) {
        int64_t ii = i * i;
        for (int64_t j = 0; j < n; j = j + 1) {
            if (ii + j * j < r2) {
                inside = inside + 1;
            } else {
                weight = weight + i * j - j;
            }
        }
    }
    printf("%lld %lld\n", (long long)inside, (long long)weight);
    return 0;
}
