/* C twin of hash_mix.tiny: the wrapping multiplies and adds go through uint64_t;
   / and % on int64_t truncate like Tiny's (the divisors are positive constants). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define WADD(a, b) ((int64_t)((uint64_t)(a) + (uint64_t)(b)))
#define WMUL(a, b) ((int64_t)((uint64_t)(a) * (uint64_t)(b)))

int main(int argc, char **argv) {
    if (argc != 2) return 1;
    int64_t n = strtoll(argv[1], NULL, 10);
    int64_t h = 88172645463325252LL;
    int64_t acc = 7;
    for (int64_t i = 0; i < n; i = i + 1) {
        h = WADD(WMUL(h, 6364136223846793005LL), 1442695040888963407LL);
        int64_t x = h / 65536 % 1000003;
        acc = WADD(WADD(WMUL(acc, 31), x * x), i % 8);
    }
    printf("%lld %lld\n", (long long)h, (long long)acc);
    return 0;
}
