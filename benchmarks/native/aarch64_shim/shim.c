/* A freestanding C library for the benchmark kernels on aarch64 Linux: what they call
   (strtoll, calloc, printf with %lld) over three system calls, so gcc's code and ours
   are measured under the same emulator with no libc start-up in the count. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

static long sys3(long n, long a, long b, long c) {
    register long x8 __asm__("x8") = n, x0 __asm__("x0") = a, x1 __asm__("x1") = b,
        x2 __asm__("x2") = c;
    __asm__ volatile("svc #0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2) : "memory");
    return x0;
}

static long sys6(long n, long a, long b, long c, long d, long e, long f) {
    register long x8 __asm__("x8") = n, x0 __asm__("x0") = a, x1 __asm__("x1") = b,
        x2 __asm__("x2") = c, x3 __asm__("x3") = d, x4 __asm__("x4") = e, x5 __asm__("x5") = f;
    __asm__ volatile("svc #0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4),
                     "r"(x5) : "memory");
    return x0;
}

void *memset(void *p, int c, size_t n) {
    unsigned char *q = p;
    while (n--) *q++ = (unsigned char)c;
    return p;
}

void *memcpy(void *d, const void *s, size_t n) {
    unsigned char *q = d;
    const unsigned char *r = s;
    while (n--) *q++ = *r++;
    return d;
}

long long strtoll(const char *s, char **end, int base) {
    (void)end; (void)base;
    int neg = *s == '-';
    if (neg) s++;
    unsigned long long v = 0;
    while (*s >= '0' && *s <= '9') v = v * 10 + (unsigned long long)(*s++ - '0');
    return neg ? -(long long)v : (long long)v;
}

void *calloc(size_t n, size_t size) {
    size_t bytes = (n * size + 4095) & ~(size_t)4095;
    long p = sys6(222, 0, (long)(bytes ? bytes : 4096), 3, 0x22, -1, 0);
    return (void *)p;
}

int printf(const char *fmt, ...) {
    char buf[512];
    int len = 0;
    va_list ap;
    va_start(ap, fmt);
    for (const char *f = fmt; *f; f++) {
        if (f[0] == '%' && f[1] == 'l' && f[2] == 'l' && f[3] == 'd') {
            long long v = va_arg(ap, long long);
            char digits[24];
            int k = 0;
            unsigned long long u = v < 0 ? -(unsigned long long)v : (unsigned long long)v;
            do { digits[k++] = (char)('0' + u % 10); u /= 10; } while (u);
            if (v < 0) buf[len++] = '-';
            while (k) buf[len++] = digits[--k];
            f += 3;
        } else {
            buf[len++] = *f;
        }
    }
    va_end(ap);
    sys3(64, 1, (long)buf, len);
    return len;
}

int main(int argc, char **argv);

void start_c(long *sp) {
    int argc = (int)sp[0];
    char **argv = (char **)(sp + 1);
    sys3(94, main(argc, argv), 0, 0);
}

__asm__(".globl _start\n_start:\n    mov x0, sp\n    bl start_c\n");
