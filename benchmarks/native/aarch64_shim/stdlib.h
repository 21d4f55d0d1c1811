#include <stddef.h>
long long strtoll(const char *s, char **end, int base);
void *calloc(size_t n, size_t size);
