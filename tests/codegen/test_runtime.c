/* A stand-in for the generated runtime (docs/codegen.md's entry points), used only by
   tests/test_codegen_isel.py to run instruction selection's output natively before the
   project's own runtime is merged. Built with gcc: tests only, never the product. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

long rt_fuel = 1L << 62, rt_depth = 100000;
struct handler { void *code; long rsp, rbp, depth; };
struct handler rt_handlers[200000];
long rt_nhandlers;
extern long rt_sites[];  /* (line, col) pairs, from the test */
extern void tiny_main(long, long, long, long, long, long);
static const char *messages[] = {"division by zero", "index out of bounds",
    "negative array length", "array too large", "unset element", "out of memory", "undefined variable"};

static void fail(const char *msg) { fflush(stdout); fprintf(stderr, "error: %s\n", msg); exit(2); }
void rt_print_int(long v) { printf("%ld", v); }
void rt_print_bool(long v) { fputs(v ? "true" : "false", stdout); }
void rt_print_space(void) { putchar(' '); }
void rt_print_newline(void) { putchar('\n'); }
void rt_trap(long code, long line, long col) {
    fflush(stdout);
    if (line) fprintf(stderr, "error: %s at %ld:%ld\n", messages[code], line, col);
    else fprintf(stderr, "error: %s\n", messages[code]);  /* Bril: no position */
    exit(2);
}
long *rt_new_array(long n, long site) {
    if (n < 0) rt_trap(2, rt_sites[2 * site], rt_sites[2 * site + 1]);
    if (n > 100000000) rt_trap(3, rt_sites[2 * site], rt_sites[2 * site + 1]);
    long *a = calloc(n + 1, 8); a[0] = n; return a;
}
long *rt_new_struct(long n) { return calloc(n + 1, 8); }
void c_step_limit(void) { fail("step limit exceeded"); }
void c_stack_overflow(void) { fail("stack overflow"); }
void c_uncaught(long v) { fflush(stdout); fprintf(stderr, "error: uncaught exception %ld\n", v); exit(2); }
__asm__(".intel_syntax noprefix\n"
 ".globl rt_step_limit\nrt_step_limit:\n and rsp, -16\n call c_step_limit\n"
 ".globl rt_stack_overflow\nrt_stack_overflow:\n and rsp, -16\n call c_stack_overflow\n"
 ".globl rt_enter\nrt_enter:\n mov rax, qword ptr [rip + rt_nhandlers]\n shl rax, 5\n"
 " lea rcx, [rip + rt_handlers]\n add rcx, rax\n mov [rcx], rdi\n lea rdx, [rsp + 8]\n"
 " mov [rcx + 8], rdx\n mov [rcx + 16], rbp\n mov rdx, [rip + rt_depth]\n mov [rcx + 24], rdx\n"
 " inc qword ptr [rip + rt_nhandlers]\n ret\n"
 ".globl rt_leave\nrt_leave:\n dec qword ptr [rip + rt_nhandlers]\n ret\n"
 ".globl rt_throw\nrt_throw:\n mov rax, qword ptr [rip + rt_nhandlers]\n test rax, rax\n"
 " jne 1f\n and rsp, -16\n call c_uncaught\n1:\n dec rax\n mov [rip + rt_nhandlers], rax\n"
 " shl rax, 5\n lea rcx, [rip + rt_handlers]\n add rcx, rax\n mov rsp, [rcx + 8]\n"
 " mov rbp, [rcx + 16]\n mov rdx, [rcx + 24]\n mov [rip + rt_depth], rdx\n mov rax, rdi\n"
 " jmp [rcx]\n"
 ".att_syntax\n");

static long args[6];
static void *run(void *unused) {
    (void)unused;
    tiny_main(args[0], args[1], args[2], args[3], args[4], args[5]);
    fflush(stdout); exit(0);
}
int main(int argc, char **argv) {
    const char *fuel = getenv("TINY_STEPS");
    if (fuel) rt_fuel = atol(fuel);
    for (int i = 1; i < argc && i <= 6; i++)
        args[i - 1] = !strcmp(argv[i], "true") ? 1 : !strcmp(argv[i], "false") ? 0 : atol(argv[i]);
    pthread_attr_t attr; pthread_t t;
    pthread_attr_init(&attr); pthread_attr_setstacksize(&attr, 1L << 30);
    pthread_create(&t, &attr, run, NULL); pthread_join(t, NULL);
    return 0;
}
