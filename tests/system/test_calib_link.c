/* test_calib_link — the simulator links no CUDA library: reads the ELF
 * dynamic section of the servesim binary (argv[1]) and of every test and
 * benchmark executable beside it (test_*, bench_*: they link servesim_core)
 * and fails if any DT_NEEDED entry is a CUDA driver/runtime, cuBLAS, NCCL,
 * NVML or cuDNN library.
 * Only the GPU backend plugin libservesim_gpu.so (loaded by
 * `servesim calibrate --backend gpu`) may need them: when it is built
 * beside servesim, the test checks that its dynamic section does name
 * cuBLAS, so the parser is shown to see such entries. */
#include "test_util.h"

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_NEEDED 64

typedef struct {
    int n;
    char name[MAX_NEEDED][128];
    int type; /* e_type */
} needed_list;

/* Reads the DT_NEEDED names of a 64-bit little-endian ELF file; 0, or -1
 * with the reason in why. */
static int elf_needed(const char *path, needed_list *out, char *why, size_t wlen)
{
    size_t len = 0;
    unsigned char *f = NULL;
    FILE *fp = fopen(path, "rb");
    int rc = -1;
    memset(out, 0, sizeof *out);
    if (!fp) {
        snprintf(why, wlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    if (fseek(fp, 0, SEEK_END) == 0) {
        long sz = ftell(fp);
        if (sz > 0 && fseek(fp, 0, SEEK_SET) == 0 && (f = malloc((size_t)sz)) && fread(f, 1, (size_t)sz, fp) == (size_t)sz)
            len = (size_t)sz;
    }
    fclose(fp);
    if (!len) {
        snprintf(why, wlen, "%s: cannot read", path);
        goto out;
    }
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)f;
    if (len < sizeof *eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0) {
        snprintf(why, wlen, "%s: not an ELF file", path);
        goto out;
    }
    if (eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_ident[EI_DATA] != ELFDATA2LSB) {
        snprintf(why, wlen, "%s: not a 64-bit little-endian ELF file", path);
        goto out;
    }
    out->type = eh->e_type;
    if (eh->e_shoff == 0 || eh->e_shentsize != sizeof(Elf64_Shdr) || eh->e_shoff > len ||
        (len - eh->e_shoff) / sizeof(Elf64_Shdr) < eh->e_shnum) {
        snprintf(why, wlen, "%s: section headers out of the file", path);
        goto out;
    }
    const Elf64_Shdr *sh = (const Elf64_Shdr *)(f + eh->e_shoff);
    int found = 0;
    for (int i = 0; i < eh->e_shnum; i++) {
        if (sh[i].sh_type != SHT_DYNAMIC) continue;
        found = 1;
        if (sh[i].sh_link >= eh->e_shnum || sh[i].sh_offset > len || sh[i].sh_size > len - sh[i].sh_offset) {
            snprintf(why, wlen, "%s: dynamic section out of the file", path);
            goto out;
        }
        const Elf64_Shdr *str = &sh[sh[i].sh_link];
        if (str->sh_offset > len || str->sh_size > len - str->sh_offset) {
            snprintf(why, wlen, "%s: dynamic string table out of the file", path);
            goto out;
        }
        const Elf64_Dyn *d = (const Elf64_Dyn *)(f + sh[i].sh_offset);
        size_t nd = sh[i].sh_size / sizeof *d;
        for (size_t j = 0; j < nd && d[j].d_tag != DT_NULL; j++) {
            if (d[j].d_tag != DT_NEEDED) continue;
            if (d[j].d_un.d_val >= str->sh_size || out->n == MAX_NEEDED) {
                snprintf(why, wlen, "%s: bad DT_NEEDED entry", path);
                goto out;
            }
            const char *s = (const char *)f + str->sh_offset + d[j].d_un.d_val;
            size_t max = str->sh_size - d[j].d_un.d_val;
            snprintf(out->name[out->n++], sizeof out->name[0], "%.*s", (int)strnlen(s, max), s);
        }
    }
    if (!found) {
        snprintf(why, wlen, "%s: no dynamic section (statically linked?)", path);
        goto out;
    }
    rc = 0;
out:
    free(f);
    return rc;
}

/* The libraries the simulator must not need. */
static const char *const gpu_libs[] = {"libcuda.", "libcudart", "libcublas", "libnccl", "libnvidia-ml", "libcudnn"};

static const char *gpu_lib_in(const needed_list *l)
{
    for (int i = 0; i < l->n; i++)
        for (size_t g = 0; g < sizeof gpu_libs / sizeof gpu_libs[0]; g++)
            if (strncmp(l->name[i], gpu_libs[g], strlen(gpu_libs[g])) == 0) return l->name[i];
    return NULL;
}

static int has_prefix(const needed_list *l, const char *p)
{
    for (int i = 0; i < l->n; i++)
        if (strncmp(l->name[i], p, strlen(p)) == 0) return 1;
    return 0;
}

static void check_no_gpu_lib(const char *path)
{
    needed_list l;
    char why[512] = "";
    int rc = elf_needed(path, &l, why, sizeof why);
    REQUIRE_MSG(rc == 0, "%s", why);
    CHECK_MSG(has_prefix(&l, "libc.so"), "%s: libc.so.* not among its %d DT_NEEDED entries: the parser is wrong", path, l.n);
    const char *bad = gpu_lib_in(&l);
    CHECK_MSG(bad == NULL, "%s needs %s: CUDA libraries belong in the GPU plugin only", path, bad ? bad : "");
    printf("test_calib_link: %s needs %d libraries, no CUDA one\n", path, l.n);
}

/* servesim needs no CUDA library; the GPU plugin, when built beside it, is where cuBLAS is. */
static void case_servesim(void)
{
    check_no_gpu_lib(test_servesim);
    /* The plugin, when built, is where the CUDA libraries are. */
    char plugin[4200];
    snprintf(plugin, sizeof plugin, "%s", test_servesim);
    char *slash = strrchr(plugin, '/');
    snprintf(slash ? slash + 1 : plugin, sizeof plugin - (size_t)(slash ? slash + 1 - plugin : 0), "libservesim_gpu.so");
    if (access(plugin, F_OK) == 0) {
        needed_list l;
        char why[512];
        int rc = elf_needed(plugin, &l, why, sizeof why);
        CHECK_MSG(rc == 0, "%s", why);
        CHECK(l.type == ET_DYN);
        CHECK_MSG(has_prefix(&l, "libcublas"), "%s does not need cuBLAS: is it the GPU plugin?", plugin);
        printf("test_calib_link: %s needs %d libraries, cuBLAS among them\n", plugin, l.n);
    } else {
        printf("test_calib_link: no GPU plugin built beside %s (-DSERVESIM_CUDA=ON builds it)\n", test_servesim);
    }
}

static void case_tests_and_benchmarks(void)
{
    /* The tests and benchmarks built beside servesim. */
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", test_servesim);
    char *ds = strrchr(dir, '/');
    if (ds) *ds = '\0';
    else snprintf(dir, sizeof dir, ".");
    DIR *dp = opendir(dir);
    int others = 0;
    CHECK(dp != NULL);
    for (struct dirent *e; dp && (e = readdir(dp));) {
        if ((strncmp(e->d_name, "test_", 5) != 0 && strncmp(e->d_name, "bench_", 6) != 0) || strchr(e->d_name, '.')) continue;
        char p[8192];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        if (access(p, X_OK) != 0) continue;
        check_no_gpu_lib(p);
        others++;
    }
    if (dp) closedir(dp);
    CHECK(others >= 1); /* this test at least */
}

static void case_not_elf(void)
{
    /* The parser refuses what is not an ELF file. */
    needed_list l;
    char why[512], tmp[] = "/tmp/servesim_link_XXXXXX";
    int fd = mkstemp(tmp);
    CHECK(fd >= 0);
    if (fd >= 0) {
        CHECK(write(fd, "#!/bin/sh\nexit 0\n", 17) == 17);
        close(fd);
        CHECK(elf_needed(tmp, &l, why, sizeof why) == -1);
        const char *w = why; /* a pointer: CHECK_CONTAINS tests it for NULL */
        CHECK_CONTAINS(w, "not an ELF file");
        unlink(tmp);
    }
    CHECK(elf_needed("/nonexistent/servesim", &l, why, sizeof why) == -1);
}

static const test_case cases[] = {
    {"servesim", case_servesim},
    {"tests_and_benchmarks", case_tests_and_benchmarks},
    {"not_elf", case_not_elf},
};

int main(int argc, char **argv)
{
    argc = test_args(argc, argv);
    if (argc < 3) {
        fprintf(stderr, "usage: test_calib_link SERVESIM SRCDIR\n");
        return 2;
    }
    return test_run("test_calib_link", cases);
}
