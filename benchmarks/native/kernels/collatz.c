/* C twin of collatz.tiny (no overflow for starts below 10^8). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    if (argc != 2) return 1;
    int64_t n = strtoll(argv[1], NULL, 10);
    int64_t total = 0;
    int64_t best = 0;
    int64_t best_start = 0;
    for (int64_t start = 1; start <= n; start = start + 1) {
        int64_t x = start;
        int64_t steps = 0;
        while (x != 1) {
            if (x % 2 == 0) {
                x = x / 2;
            } else {
                x = 3 * x + 1;
            }
            steps = steps + 1;
        }
        total = total + steps;
        if (steps > best) {
            best = steps;
            best_start = start;
        }
    }
    printf("%lld %lld %lld\n", (long long)total, (long long)best, (long long)best_start);
    return 0;
}
