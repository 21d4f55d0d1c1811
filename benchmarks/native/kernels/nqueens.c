/* C twin of nqueens.tiny (byte flags, as a Tiny [bool] element is natively). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static int64_t place(int64_t row, int64_t n, unsigned char *cols, unsigned char *up,
                     unsigned char *down) {
    if (row == n) {
        return 1;
    }
    int64_t count = 0;
    for (int64_t c = 0; c < n; c = c + 1) {
        if (!cols[c] && !up[row + c] && !down[row - c + n - 1]) {
            cols[c] = 1;
            up[row + c] = 1;
            down[row - c + n - 1] = 1;
            count = count + place(row + 1, n, cols, up, down);
            cols[c] = 0;
            up[row + c] = 0;
            down[row - c + n - 1] = 0;
        }
    }
    return count;
}

int main(int argc, char **argv) {
    if (argc != 2) return 1;
    int64_t n = strtoll(argv[1], NULL, 10);
    unsigned char *cols = calloc((size_t)n, sizeof *cols);
    unsigned char *up = calloc((size_t)(2 * n), sizeof *up);
    unsigned char *down = calloc((size_t)(2 * n), sizeof *down);
    printf("%lld\n", (long long)place(0, n, cols, up, down));
    return 0;
}
