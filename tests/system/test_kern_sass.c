/* test_kern_sass — the machine code of the GPU backend plugin, checked
 * without a GPU: disassembles libservesim_gpu.so (built beside the servesim
 * binary, argv[1], with -DSERVESIM_CUDA=ON) with cuobjdump and asserts, per
 * architecture the build holds, that each rung of the kernel ladder uses
 * the instructions that make it that rung — sm_80: cp.async (LDGSTS),
 * ldmatrix (LDSM) and mma.sync (HMMA) in the GEMMs and the grouped GEMM
 * (and warp shuffles in its tile-list builder), and in the tensor-core
 * flash prefill also ldmatrix.trans (LDSM.16.MT88) and ex2 (MUFU.EX2), in
 * the tensor-core paged decode cp.async, ldmatrix.trans and mma.sync; sm_90a: the tensor
 * memory accelerator (UTMALDG), mbarriers (SYNCS), wgmma (HGMMA) and
 * setmaxnreg (USETMAXREG) in kern_gemm_sm90 and in the grouped GEMM's
 * Hopper rung (kern_grouped_sm90, whose weights come through a 3-D tensor
 * map: UTMALDG.3D), and the same with the fp8
 * wgmma (QGMMA) in kern_gemm_fp8_sm90, and in the Hopper flash prefill
 * (kern_attn_sm90) TMA, mbarriers, setmaxnreg, ex2, the named-barrier
 * arrivals of its consumers' ping-pong (BAR.ARV) and wgmma for both of
 * its GEMMs (a rule's need may name the second operand: "HGMMA gdesc" has
 * A in shared memory, Q·Kᵀ; "HGMMA R" A in registers, P·V); sm_100a: TMA, mbarriers,
 * tcgen05.mma (UTCHMMA), tcgen05.commit (UTCBAR) and tcgen05.ld (LDTM) in
 * kern_gemm_sm100 with the epilogue warps' plain arrivals
 * (SYNCS.ARRIVE.TRANS64.A1T0) that hand an accumulator back to the MMA
 * thread of its persistent grid, and in kern_gemm_mxfp8_sm100 TMA,
 * mbarriers, tcgen05.commit and tcgen05.ld with cp.async
 * (LDGSTS) for the scales, tcgen05.cp into Tensor Memory (UTCCP) and the
 * block-scaled fp8 tcgen05.mma (UTCQMMA); the vectorised RMSNorm's 16-byte loads and stores
 * (LDG.E.128, STG.E.128) and the quantisation kernels' 16-byte loads,
 * shuffled amax and 8-byte stores —, that the warp-specialised sm_90a
 * kernels' setmaxnreg split fits the registers their launch gives the CTA
 * (else the consumers' allocation spins forever), and that no kernel of any
 * architecture spills (stack frame and local memory 0 in the resource
 * report, no LDL/STL instruction). A rule whose architecture the build
 * lacks (CMAKE_CUDA_ARCHITECTURES narrowed) is reported and not checked;
 * a build that holds none of the rules' architectures fails. The kernel
 * named by a rule must exist in that architecture's code. cuobjdump is
 * found by scripts/cuda-tool.sh (the PyPI wheel nvidia-cuda-cuobjdump,
 * which scripts/setup.sh installs for the CUDA build); without it, in a
 * build with the plugin, the test fails. Without the plugin (a build
 * without CUDA) the test skips. */
#include "test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SASS_MAX_NEED 7
#define SASS_MAX_ARCH 16

typedef struct {
    const char *arch;   /* "sm_80" */
    const char *kernel; /* the kernel's unmangled name, e.g. "gemm_bf16_kernel" */
    const char *need[SASS_MAX_NEED];
    const char *rung; /* what the instructions mean */
} sass_rule;

/* The ladder, rung by rung: only rungs that exist are listed. */
static const sass_rule rules[] = {
    {"sm_80", "gemm_bf16_kernel", {"LDGSTS", "LDSM", "HMMA"}, "Ampere rung: cp.async ring, ldmatrix, mma.sync"},
    {"sm_80", "gemm_bf16_splitk_kernel", {"LDGSTS", "LDSM", "HMMA"}, "Ampere rung, split-K for skinny GEMMs"},
    {"sm_80", "grouped_tiles_kernel", {"LDGSTS", "LDSM", "HMMA"},
     "grouped GEMM, Ampere rung: the GEMM's cp.async ring and mma.sync over the tile list"},
    {"sm_80", "grouped_plan_kernel", {"SHFL.UP", "STG.E.64"},
     "grouped GEMM's tile list: a block scan of the experts' tile counts (warp shuffles), 16-byte tiles written"},
    {"sm_90a", "gemm_sm90_kernel", {"UTMALDG", "SYNCS", "HGMMA", "USETMAXREG"},
     "Hopper rung: TMA into an mbarrier ring, wgmma, setmaxnreg"},
    {"sm_90a", "grouped_sm90_kernel", {"UTMALDG", "UTMALDG.3D", "SYNCS", "HGMMA", "USETMAXREG"},
     "grouped GEMM, Hopper rung: TMA (the experts' weights through a 3-D map) into an mbarrier ring, wgmma over the "
     "tile list, setmaxnreg"},
    {"sm_90a", "gemm_fp8_sm90_kernel", {"UTMALDG", "SYNCS", "QGMMA", "USETMAXREG"},
     "Hopper fp8 rung: TMA into an mbarrier ring, fp8 wgmma (e4m3), setmaxnreg"},
    {"sm_80", "attn_prefill_mma_kernel", {"LDGSTS", "LDSM.16.M88", "LDSM.16.MT88", "HMMA", "MUFU.EX2"},
     "attention, Ampere rung: K/V cp.async ring, ldmatrix (.trans for V), mma.sync, exp2 online softmax"},
    {"sm_90a", "attn_prefill_sm90_kernel",
     {"UTMALDG", "SYNCS", "HGMMA gdesc", "HGMMA R", "USETMAXREG", "MUFU.EX2", "BAR.ARV"},
     "attention, Hopper rung: Q/K/V TMA into an mbarrier ring, wgmma for Q·Kᵀ (A from shared memory) and P·V "
     "(P from registers), setmaxnreg, exp2 online softmax, the consumers' ping-pong on named barriers"},
    {"sm_80", "decode_split_mma_kernel", {"LDGSTS", "LDSM.16.MT88", "HMMA"},
     "paged decode, Ampere rung: cache pages through a cp.async ring, the GQA group as the mma's rows"},
    {"sm_80", "rmsnorm_vec_kernel", {"LDG.E.128", "STG.E.128"}, "row kernels: 16-byte vector loads and stores"},
    {"sm_80", "softmax_warp_vec_kernel", {"LDG.E.128", "STG.E.128"}, "softmax: rows in registers as float4"},
    {"sm_80", "softmax_block_vec_kernel", {"LDG.E.128", "STG.E.128", "BAR.SYNC"},
     "softmax, a CTA per row: the row in registers as float4, block reductions through shared memory"},
    {"sm_80", "quant_vec_kernel", {"LDG.E.128", "SHFL.BFLY", "STG.E.64"}, "quantisation: 16-byte loads, shuffled amax"},
    {"sm_100a", "gemm_sm100_kernel",
     {"UTMALDG", "SYNCS.PHASECHK", "UTCHMMA", "UTCBAR", "LDTM", "SYNCS.ARRIVE.TRANS64.A1T0"},
     "Blackwell rung: TMA, tcgen05.mma into two Tensor Memory accumulators, tcgen05.commit, a tcgen05.ld epilogue "
     "whose warps hand each accumulator back with a plain mbarrier arrival"},
    {"sm_100a", "gemm_mxfp8_sm100_kernel", {"UTMALDG", "SYNCS", "LDGSTS", "UTCCP", "UTCQMMA", "UTCBAR", "LDTM"},
     "Blackwell MXFP8 rung: TMA for A and B, cp.async for the E8M0 scales, tcgen05.cp of the scales into Tensor "
     "Memory, the block-scaled fp8 tcgen05.mma (kind::mxf8f6f4), tcgen05.commit, tcgen05.ld epilogue"},
};
#define N_RULES (sizeof rules / sizeof rules[0])

typedef struct {
    char plugin[4200];
    char tool[4096];
    char *sass; /* cuobjdump -sass */
    char *res;  /* cuobjdump -res-usage */
    int ok;
} sass_ctx;

/* Set once by main for the cases (the test's one shared input). */
static sass_ctx ctx_;

/* The function name `kernel` appears mangled as <length><name> followed by
 * E (end of a nested name: the kernels live in an anonymous namespace) or
 * I (template arguments). What precedes the length may be a digit (the
 * anonymous namespace's hash), so only the end is checked. */
static int names_kernel(const char *mangled, const char *kernel)
{
    char pat[160];
    size_t n = strlen(kernel);
    snprintf(pat, sizeof pat, "%zu%s", n, kernel);
    for (const char *p = strstr(mangled, pat); p; p = strstr(p + 1, pat)) {
        char after = p[strlen(pat)];
        if (after == 'E' || after == 'I') return 1;
    }
    return 0;
}

/* The opcode of a SASS line (address comment, optional predicate guard,
 * mnemonic: "@!P0 LDG.E.64 R2, [R2.64] ;" gives "LDG.E.64"), copied into
 * op (empty when the line is no instruction); the operands that follow
 * ("R2, [R2.64] ;") in *args when args is not NULL. */
static void sass_opcode_args(const char *line, char *op, size_t len, const char **args)
{
    op[0] = '\0';
    if (args) *args = "";
    const char *p = strstr(line, "*/");
    if (!p || !strstr(line, "/*")) return;
    p += 2;
    while (*p == ' ' || *p == '\t') p++;
    if (*p == '@') { /* a predicate guard */
        while (*p && *p != ' ') p++;
        while (*p == ' ') p++;
    }
    size_t n = 0;
    while (p[n] && ((p[n] >= 'A' && p[n] <= 'Z') || (p[n] >= 'a' && p[n] <= 'z') || (p[n] >= '0' && p[n] <= '9') ||
                    p[n] == '.' || p[n] == '_') &&
           n + 1 < len)
        n++;
    memcpy(op, p, n);
    op[n] = '\0';
    if (args) *args = p + n + strspn(p + n, " \t");
}
static void sass_opcode(const char *line, char *op, size_t len)
{
    sass_opcode_args(line, op, len, NULL);
}

/* op is the mnemonic `need` or one of its variants (HGMMA.64x256x16...). */
static int op_is(const char *op, const char *need)
{
    size_t n = strlen(need);
    return strncmp(op, need, n) == 0 && (op[n] == '\0' || op[n] == '.');
}

/* A rule's need: a mnemonic as op_is matches it, optionally followed by a
 * space and the start of the instruction's second operand — "HGMMA gdesc"
 * is a wgmma with A in shared memory (a descriptor), "HGMMA R" one with A
 * in registers ("HGMMA.64x128x16.F32.BF16 R88, R56, gdesc[UR4].tnspB"). */
static int need_is(const char *op, const char *args, const char *need)
{
    const char *sp = strchr(need, ' ');
    if (!sp) return op_is(op, need);
    char mn[64];
    size_t n = (size_t)(sp - need) < sizeof mn - 1 ? (size_t)(sp - need) : sizeof mn - 1;
    memcpy(mn, need, n);
    mn[n] = '\0';
    const char *comma = strchr(args, ',');
    if (!op_is(op, mn) || !comma) return 0;
    comma += 1 + strspn(comma + 1, " ");
    return strncmp(comma, sp + 1, strlen(sp + 1)) == 0;
}

/* Copies the line at *p into line (cut to len - 1) and moves *p past it;
 * 0 at the end of the text. */
static int next_line(const char **p, char *line, size_t len)
{
    if (!**p) return 0;
    const char *nl = strchr(*p, '\n');
    size_t n = nl ? (size_t)(nl - *p) : strlen(*p);
    size_t c = n < len ? n : len - 1;
    memcpy(line, *p, c);
    line[c] = '\0';
    *p += nl ? n + 1 : n;
    return 1;
}

/* Walks the SASS listing: for each "code for ARCH" section and each
 * "Function : NAME" in it, calls visit for every instruction. */
typedef void (*sass_visit)(void *u, const char *arch, const char *fn, const char *op, const char *args);
static void sass_walk(const char *sass, sass_visit visit, void *u)
{
    char arch[32] = "", fn[1024] = "", line[2048], op[64];
    const char *args;
    for (const char *p = sass; next_line(&p, line, sizeof line);) {
        const char *q;
        if ((q = strstr(line, "code for "))) {
            sscanf(q + 9, "%31s", arch);
            fn[0] = '\0';
        } else if ((q = strstr(line, "Function : "))) {
            sscanf(q + 11, "%1023s", fn);
        } else if (arch[0] && fn[0]) {
            sass_opcode_args(line, op, sizeof op, &args);
            if (op[0]) visit(u, arch, fn, op, args);
        }
    }
}

/* The architectures of the SASS listing. */
static int sass_archs(const char *sass, char archs[][32], int max)
{
    int n = 0;
    for (const char *q = strstr(sass, "code for "); q && n < max; q = strstr(q + 1, "code for ")) {
        char a[32];
        if (sscanf(q + 9, "%31s", a) != 1) continue;
        int seen = 0;
        for (int i = 0; i < n; i++) seen |= !strcmp(archs[i], a);
        if (!seen) snprintf(archs[n++], 32, "%s", a);
    }
    return n;
}

static void setup(void)
{
    sass_ctx *c = &ctx_;
    memset(c, 0, sizeof *c);
    snprintf(c->plugin, sizeof c->plugin, "%s", test_servesim);
    char *slash = strrchr(c->plugin, '/');
    snprintf(slash ? slash + 1 : c->plugin, sizeof c->plugin - (size_t)(slash ? slash + 1 - c->plugin : 0),
             "libservesim_gpu.so");
}

/* cuobjdump found and both listings read. */
static void case_disassemble(void)
{
    sass_ctx *c = &ctx_;
    char cmd[16384], *out = NULL;
    snprintf(cmd, sizeof cmd, "bash '%s/scripts/cuda-tool.sh' cuobjdump", test_srcdir);
    int rc = test_sh(cmd, &out);
    REQUIRE_MSG_OR(rc == 0 && out && out[0], { free(out); return; },
                   "cuobjdump not found: pip install nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm "
                   "(scripts/setup.sh does with SERVESIM_CUDA=1), or set SERVESIM_CUOBJDUMP");
    out[strcspn(out, "\n")] = '\0';
    snprintf(c->tool, sizeof c->tool, "%s", out);
    free(out);
    snprintf(cmd, sizeof cmd, "'%s' -sass '%s' 2>&1", c->tool, c->plugin);
    rc = test_sh(cmd, &c->sass);
    REQUIRE_MSG(rc == 0 && c->sass, "%s failed (rc %d)", cmd, rc);
    snprintf(cmd, sizeof cmd, "'%s' -res-usage '%s' 2>&1", c->tool, c->plugin);
    rc = test_sh(cmd, &c->res);
    REQUIRE_MSG(rc == 0 && c->res, "%s failed (rc %d)", cmd, rc);
    char archs[SASS_MAX_ARCH][32];
    int na = sass_archs(c->sass, archs, SASS_MAX_ARCH);
    CHECK_MSG(na > 0, "no SASS in %s", c->plugin);
    printf("test_kern_sass: %s with %s: %d architectures:", c->plugin, c->tool, na);
    for (int i = 0; i < na; i++) printf(" %s", archs[i]);
    printf("\n");
    c->ok = na > 0;
}

typedef struct {
    const sass_rule *r;
    int found;          /* the kernel exists in r->arch */
    int has[SASS_MAX_NEED];
} rule_state;

static void visit_rule(void *u, const char *arch, const char *fn, const char *op, const char *args)
{
    rule_state *s = u;
    if (strcmp(arch, s->r->arch) != 0 || !names_kernel(fn, s->r->kernel)) return;
    s->found = 1;
    for (int i = 0; i < SASS_MAX_NEED && s->r->need[i]; i++)
        if (need_is(op, args, s->r->need[i])) s->has[i] = 1;
}

/* Each rung's kernel uses its generation's instructions. */
static void case_rungs(void)
{
    sass_ctx *c = &ctx_;
    REQUIRE(c->ok);
    char archs[SASS_MAX_ARCH][32];
    int na = sass_archs(c->sass, archs, SASS_MAX_ARCH), checked = 0;
    for (size_t k = 0; k < N_RULES; k++) {
        const sass_rule *r = &rules[k];
        int built = 0;
        for (int i = 0; i < na; i++) built |= !strcmp(archs[i], r->arch);
        if (!built) {
            printf("test_kern_sass: %s not in this build: %s (%s) not checked\n", r->arch, r->kernel, r->rung);
            continue;
        }
        rule_state s = {r, 0, {0}};
        sass_walk(c->sass, visit_rule, &s);
        CHECK_MSG(s.found, "%s: no kernel %s in the SASS (%s)", r->arch, r->kernel, r->rung);
        for (int i = 0; i < SASS_MAX_NEED && r->need[i]; i++)
            CHECK_MSG(!s.found || s.has[i], "%s %s: no %s instruction (%s)", r->arch, r->kernel, r->need[i], r->rung);
        printf("test_kern_sass: %s %s: %s\n", r->arch, r->kernel, r->rung);
        checked++;
    }
    CHECK_MSG(checked > 0, "the build holds none of the architectures the rules cover");
}

typedef struct {
    int spill_ops;
    char first[1200];
} spill_state;

static void visit_spill(void *u, const char *arch, const char *fn, const char *op, const char *args)
{
    (void)args;
    spill_state *s = u;
    if (op_is(op, "LDL") || op_is(op, "STL")) {
        if (!s->spill_ops++) snprintf(s->first, sizeof s->first, "%s %s: %s", arch, fn, op);
    }
}

/* No kernel spills: stack frame and local memory 0, no LDL/STL. */
static void case_no_spills(void)
{
    sass_ctx *c = &ctx_;
    REQUIRE(c->ok);
    char arch[32] = "", fn[1024] = "", line[2048];
    int functions = 0, bad = 0;
    for (const char *p = c->res; next_line(&p, line, sizeof line);) {
        const char *q;
        long reg = -1, stack = -1, local = -1;
        if ((q = strstr(line, "arch = "))) sscanf(q + 7, "%31s", arch);
        else if ((q = strstr(line, " Function "))) {
            sscanf(q + 10, "%1023s", fn);
            fn[strcspn(fn, ":")] = '\0';
        } else if ((q = strstr(line, "REG:")) && fn[0]) {
            const char *s = strstr(line, "STACK:"), *l = strstr(line, "LOCAL:");
            reg = strtol(q + 4, NULL, 10);
            if (s) stack = strtol(s + 6, NULL, 10);
            if (l) local = strtol(l + 6, NULL, 10);
            functions++;
            CHECK_MSG(stack == 0 && local == 0, "%s %s: REG %ld, stack frame %ld and local memory %ld bytes (spills)",
                      arch, fn, reg, stack, local);
            bad += !(stack == 0 && local == 0);
            fn[0] = '\0';
        }
    }
    CHECK_MSG(functions > 0, "no function in the resource report of %s", c->plugin);
    spill_state s = {0, ""};
    sass_walk(c->sass, visit_spill, &s);
    CHECK_MSG(s.spill_ops == 0, "%d local-memory instructions, the first %s", s.spill_ops, s.first);
    printf("test_kern_sass: %d kernels (all architectures), %d with a stack frame or local memory, %d LDL/STL\n",
           functions, bad, s.spill_ops);
}

/* The warp-specialised Hopper kernels' setmaxnreg (USETMAXREG): 384
 * threads, one producer warpgroup that gives registers back to the CTA's
 * pool (DEALLOC n) and two consumer warpgroups that take them from it
 * (TRY_ALLOC m, retried until it succeeds). The pool is what the launch
 * gave: the registers at entry (resource report) × 384. When 128·n + 256·m
 * exceeds it, the consumers' allocation never succeeds and the kernel
 * hangs: 40 / 232 need 168 at entry (64,512 of the 65,536). */
enum { SETMAXNREG_THREADS = 384, SETMAXNREG_FNS = 16 };
typedef struct {
    char fn[SETMAXNREG_FNS][1024];
    long dealloc[SETMAXNREG_FNS], alloc[SETMAXNREG_FNS];
    int n;
} setmaxnreg_state;

static void visit_setmaxnreg(void *u, const char *arch, const char *fn, const char *op, const char *args)
{
    setmaxnreg_state *s = u;
    if (strcmp(arch, "sm_90a") != 0 || !op_is(op, "USETMAXREG")) return;
    int i = 0;
    while (i < s->n && strcmp(s->fn[i], fn) != 0) i++;
    if (i == s->n) {
        if (s->n == SETMAXNREG_FNS) return;
        snprintf(s->fn[s->n], sizeof s->fn[0], "%s", fn);
        s->dealloc[s->n] = s->alloc[s->n] = -1;
        s->n++;
    }
    const char *hex = strstr(args, "0x");
    long v = hex ? strtol(hex, NULL, 16) : -1;
    if (strstr(op, "DEALLOC")) s->dealloc[i] = v;
    else if (strstr(op, "ALLOC")) s->alloc[i] = v;
}

/* The registers at entry of `fn` in `arch` from the resource report; -1
 * when it is not there. */
static long entry_regs(const char *res, const char *want_arch, const char *want_fn)
{
    char arch[32] = "", fn[1024] = "", line[2048];
    for (const char *p = res; next_line(&p, line, sizeof line);) {
        const char *q;
        if ((q = strstr(line, "arch = "))) sscanf(q + 7, "%31s", arch);
        else if ((q = strstr(line, " Function "))) {
            sscanf(q + 10, "%1023s", fn);
            fn[strcspn(fn, ":")] = '\0';
        } else if ((q = strstr(line, "REG:")) && !strcmp(arch, want_arch) && !strcmp(fn, want_fn))
            return strtol(q + 4, NULL, 10);
    }
    return -1;
}

static void case_setmaxnreg_budget(void)
{
    sass_ctx *c = &ctx_;
    REQUIRE(c->ok);
    char archs[SASS_MAX_ARCH][32];
    int na = sass_archs(c->sass, archs, SASS_MAX_ARCH), built = 0;
    for (int i = 0; i < na; i++) built |= !strcmp(archs[i], "sm_90a");
    if (!built) {
        test_case_skip("no sm_90a code in this build");
        return;
    }
    static setmaxnreg_state s; /* 16 KB of names: off the stack */
    memset(&s, 0, sizeof s);
    sass_walk(c->sass, visit_setmaxnreg, &s);
    CHECK_MSG(s.n >= 4, "%d sm_90a kernels with setmaxnreg (the bf16, fp8, grouped GEMMs and the prefill have it)", s.n);
    for (int i = 0; i < s.n; i++) {
        long reg = entry_regs(c->res, "sm_90a", s.fn[i]);
        long need = 128 * s.dealloc[i] + 256 * s.alloc[i];
        CHECK_MSG(s.dealloc[i] > 0 && s.alloc[i] > 0 && s.dealloc[i] % 8 == 0 && s.alloc[i] % 8 == 0,
                  "%s: setmaxnreg dealloc %ld / alloc %ld (multiples of 8 expected)", s.fn[i], s.dealloc[i], s.alloc[i]);
        CHECK_MSG(reg > 0 && need <= reg * SETMAXNREG_THREADS,
                  "%s: %ld registers at entry × %d threads = %ld, setmaxnreg needs 128·%ld + 256·%ld = %ld (the "
                  "consumers' allocation would never succeed)",
                  s.fn[i], reg, SETMAXNREG_THREADS, reg * SETMAXNREG_THREADS, s.dealloc[i], s.alloc[i], need);
        printf("test_kern_sass: sm_90a setmaxnreg %ld / %ld with %ld registers at entry: %s\n", s.dealloc[i],
               s.alloc[i], reg, s.fn[i]);
    }
}

/* The parsers on known lines, so a change of cuobjdump's format fails here
 * rather than passing vacuously. */
static void case_parsers(void)
{
    char op[64];
    sass_opcode("        /*0070*/                   LDG.E.64 R2, [R2.64] ;    /* 0x0000001002027981 */", op, sizeof op);
    CHECK(!strcmp(op, "LDG.E.64"));
    sass_opcode("        /*1a30*/              @!P0 HGMMA.64x256x16.F32.BF16 R24, gdesc[UR4], R24 ;", op, sizeof op);
    CHECK(!strcmp(op, "HGMMA.64x256x16.F32.BF16") && op_is(op, "HGMMA") && !op_is(op, "HGMM"));
    sass_opcode("        /*11d0*/                   QGMMA.64x128x32.F32.E4M3.E4M3 R24, gdesc[UR16], R24, gsb0 ;", op,
                sizeof op);
    CHECK(!strcmp(op, "QGMMA.64x128x32.F32.E4M3.E4M3") && op_is(op, "QGMMA") && !op_is(op, "HGMMA"));
    const char *args;
    sass_opcode_args("        /*3650*/                   HGMMA.64x128x16.F32.BF16 R88, R48, gdesc[UR12].tnspB, R88 ;",
                     op, sizeof op, &args);
    CHECK(need_is(op, args, "HGMMA") && need_is(op, args, "HGMMA R") && !need_is(op, args, "HGMMA gdesc"));
    sass_opcode_args("        /*0c00*/                   HGMMA.64x128x16.F32.BF16 R24, gdesc[UR12], R24 ;", op, sizeof op,
                     &args);
    CHECK(need_is(op, args, "HGMMA gdesc") && !need_is(op, args, "HGMMA R") && !need_is(op, args, "QGMMA gdesc"));
    sass_opcode("                                                     /* 0x000fe400078e00ff */", op, sizeof op);
    CHECK(op[0] == '\0');
    CHECK(names_kernel("_ZN45_GLOBAL__N__94bb8a8f_12_kern_gemm_cu_7c2b34c816gemm_bf16_kernelEPKtS1_Ptlll",
                       "gemm_bf16_kernel"));
    CHECK(!names_kernel("_ZN45_GLOBAL__N__94bb8a8f_12_kern_gemm_cu_7c2b34c823gemm_bf16_splitk_kernelEPKtS1_Pflll",
                        "gemm_bf16_kernel"));
    CHECK(names_kernel("_ZN12_GLOBAL__N_119grouped_plan_kernelILb1EEEvPKl", "grouped_plan_kernel"));
    CHECK(!names_kernel("_ZN12_GLOBAL__N_119grouped_plan_kernelILb1EEEvPKl", "grouped_plan_kerne"));
    const char *fp8_sm90 = "_ZN54_GLOBAL__N__760a3b47_21_kern_gemm_fp8_sm90_cu_061e694d"
                           "20gemm_fp8_sm90_kernelE14CUtensorMap_stS0_PKfS2_Ptiii";
    CHECK(names_kernel(fp8_sm90, "gemm_fp8_sm90_kernel") && !names_kernel(fp8_sm90, "gemm_fp8_kernel"));
    const char *listing = "\tcode for sm_90a\n\t\tFunction : _ZN12_GLOBAL__N_116gemm_sm90_kernelEv\n"
                          "        /*0000*/                   UTMALDG.2D [UR8], [UR4] ;\n"
                          "\tcode for sm_80\n\t\tFunction : _ZN12_GLOBAL__N_116gemm_sm90_kernelEv\n"
                          "        /*0000*/                   EXIT ;\n";
    char archs[SASS_MAX_ARCH][32];
    CHECK(sass_archs(listing, archs, SASS_MAX_ARCH) == 2 && !strcmp(archs[0], "sm_90a") && !strcmp(archs[1], "sm_80"));
    sass_rule r = {"sm_90a", "gemm_sm90_kernel", {"UTMALDG", "HGMMA"}, "test"};
    rule_state s = {&r, 0, {0}};
    sass_walk(listing, visit_rule, &s);
    CHECK(s.found && s.has[0] && !s.has[1]); /* the sm_80 section's EXIT is not counted for sm_90a */
}

static const test_case cases[] = {
    {"parsers", case_parsers},
    {"disassemble", case_disassemble},
    {"rungs", case_rungs},
    {"no_spills", case_no_spills},
    {"setmaxnreg_budget", case_setmaxnreg_budget},
};

int main(int argc, char **argv)
{
    test_args(argc, argv);
    if (!test_servesim || !test_srcdir) {
        fprintf(stderr, "usage: test_kern_sass SERVESIM_BINARY SOURCE_DIR\n");
        return 2;
    }
    setup();
    if (access(ctx_.plugin, F_OK) != 0) {
        case_parsers();
        return test_skip("test_kern_sass", "no GPU backend plugin beside servesim (configure with -DSERVESIM_CUDA=ON)");
    }
    int rc = test_run("test_kern_sass", cases);
    free(ctx_.sass);
    free(ctx_.res);
    return rc;
}
