/*
 * classify.c: kernel names to compute type and operation class (classify.h).
 *
 * The names carry the facts: cuBLAS and CUTLASS spell the types (sm90_xmma_gemm_bf16bf16_...,
 * cutlass_80_tensorop_f16_s16816gemm_...), cuDNN too (..._fprop_implicit_gemm_tf32f32_...),
 * ATen kernels carry them as template arguments (c10::Half, c10::BFloat16, float). Rules, first
 * match wins, on the lower-cased name:
 *   fp8   e4m3, e5m2, fp8
 *   int8  int8, i8i8, s8s8, imma, i8816, i16832, "signed char"
 *   bf16  bf16, bfloat16
 *   tf32  tf32
 *   fp16  half (c10::Half, __half, half_t), fp16, f16, h1688, h16816, h884, hgemm
 *   tf32  s1688gemm with no type above (Ampere runs TF32 as m16n8k8; Turing's fp16 1688
 *         GEMMs name fp16)
 *   other double, f64, dgemm, fp4, e2m1
 *   fp32  float, f32, fp32, sgemm, scudnn
 *   else  unknown
 * Operation, first match: attention (flash, fmha, attention, sdpa), conv (conv, fprop, dgrad,
 * wgrad, winograd, implicit_convolve, cudnn::cnn), norm (batch_norm, batchnorm, bn_fw, layer_norm,
 * layernorm, group_norm, rms_norm, instance_norm), layout (nchwtonhwc, nhwctonchw), dropout,
 * gemm (gemm, gemv, matmul, cublas, cutlass, wgmma, nvjet_), copy (copy_kernel, memcpy), reduction
 * (reduce_kernel, reduction, softmax), elementwise (elementwise, pointwise), else other. Names
 * are demangled first (names.c).
 *
 * cuBLAS's nvJet GEMMs (what cuBLAS ran on the H100 fixtures, CUDA 13: nvjet_sm90_hsh_...)
 * name their types in the three letters after the architecture, input first: h fp16, t bf16
 * (on the H100 fixtures every fp16-autocast GEMM is hsh and every bf16 one tst); any other
 * letter is left to the rules above. They are GEMMs.
 *
 * Triton kernels (torch.compile, AOTInductor: triton_poi_..., triton_red_..., triton_per_...,
 * triton_tem_...) are named after the PyTorch operations they fuse, never after a dtype, so the
 * rules above would read "convolution" in a pointwise kernel that adds a conv's bias. Their own
 * rules: poi elementwise; red, per reduction; tem (a template: Inductor's GEMM and conv kernels)
 * conv when it names a convolution, gemm when it names mm, bmm, addmm or baddbmm; else other.
 * Their compute type is unknown: the name does not carry it, and neither CUPTI's kernel record
 * nor the allocator's reports (bytes, no dtype) do.
 */
#include "classify.h"
#include "../base/names.h"

#include <ctype.h>
#include <string.h>

static int has(const char *s, const char *word)
{
    return strstr(s, word) != NULL;
}

static int has_any(const char *s, const char *const *words)
{
    for (; *words; words++)
        if (has(s, *words)) return 1;
    return 0;
}

/* nvjet_sm90_hsh_...: the input type letter, 0 when the name is not of that form. */
static char nvjet_type(const char *s)
{
    if (strncmp(s, "nvjet_", 6)) return 0;
    const char *t = strchr(s + 6, '_');
    return t && t[1] && t[2] && t[3] && t[4] == '_' ? t[1] : 0;
}

static enum precision precision_of(const char *s)
{
    static const char *const fp8[] = {"e4m3", "e5m2", "fp8", NULL};
    static const char *const int8[] = {"int8",  "i8i8",   "s8s8",        "imma",
                                       "i8816", "i16832", "signed char", NULL};
    static const char *const bf16[] = {"bf16", "bfloat16", NULL};
    static const char *const fp16[] = {"half",   "fp16", "f16",   "h1688",
                                       "h16816", "h884", "hgemm", NULL};
    static const char *const other[] = {"double", "f64", "dgemm", "fp4", "e2m1", NULL};
    static const char *const fp32[] = {"float", "f32", "fp32", "sgemm", "scudnn", NULL};
    if (has_any(s, fp8)) return PREC_FP8;
    char nvjet = nvjet_type(s);
    if (nvjet == 'h') return PREC_FP16;
    if (nvjet == 't') return PREC_BF16;
    if (has_any(s, int8)) return PREC_INT8;
    if (has_any(s, bf16)) return PREC_BF16;
    if (has(s, "tf32")) return PREC_TF32;
    if (has_any(s, fp16)) return PREC_FP16;
    if (has(s, "s1688gemm")) return PREC_TF32; /* after fp16: Turing's fp16 GEMMs are 1688 too */
    if (has_any(s, other)) return PREC_OTHER;
    if (has_any(s, fp32)) return PREC_FP32;
    return PREC_UNKNOWN;
}

static enum opclass opclass_of(const char *s)
{
    static const char *const attention[] = {"flash", "fmha", "attention", "sdpa", NULL};
    static const char *const conv[] = {
        "conv", "fprop", "dgrad", "wgrad", "winograd", "implicit_convolve", "cudnn::cnn", NULL};
    static const char *const norm[] = {"batch_norm", "batchnorm",     "bn_fw",      "bn_bw",
                                       "layer_norm", "layernorm",     "group_norm", "rms_norm",
                                       "rmsnorm",    "instance_norm", NULL};
    static const char *const layout[] = {"nchwtonhwc", "nhwctonchw", NULL};
    static const char *const gemm[] = {"gemm",    "gemv",  "matmul", "cublas",
                                       "cutlass", "wgmma", "nvjet_", NULL};
    if (has_any(s, attention)) return OP_ATTENTION;
    if (has_any(s, conv)) return OP_CONV;
    if (has_any(s, norm)) return OP_NORM;
    if (has_any(s, layout)) return OP_LAYOUT;
    if (has(s, "dropout")) return OP_DROPOUT;
    if (has_any(s, gemm)) return OP_GEMM;
    static const char *const copy[] = {"copy_kernel", "memcpy", NULL};
    static const char *const reduction[] = {"reduce_kernel", "reduction", "softmax", NULL};
    static const char *const elementwise[] = {"elementwise", "pointwise", NULL};
    if (has_any(s, copy)) return OP_COPY;
    if (has_any(s, reduction)) return OP_REDUCTION;
    if (has_any(s, elementwise)) return OP_ELEMENTWISE;
    return OP_OTHER;
}

int classify_is_triton(const char *name)
{
    return !strncmp(name, "triton_", 7);
}

static enum opclass triton_opclass_of(const char *s)
{
    if (!strncmp(s, "triton_poi", 10)) return OP_ELEMENTWISE;
    if (!strncmp(s, "triton_red", 10) || !strncmp(s, "triton_per", 10)) return OP_REDUCTION;
    if (strncmp(s, "triton_tem", 10)) return OP_OTHER;
    if (has(s, "conv")) return OP_CONV;
    static const char *const mm[] = {"_mm", "_bmm", "_addmm", "_baddbmm", NULL};
    return has_any(s, mm) ? OP_GEMM : OP_OTHER;
}

void classify_kernel(const char *name, enum precision *p, enum opclass *op)
{
    if (classify_is_triton(name)) {
        if (p) *p = PREC_UNKNOWN;
        if (op) *op = triton_opclass_of(name);
        return;
    }
    /* Rules read C++ (template arguments spell the types), so mangled names are demangled. */
    char plain[2048], low[2048];
    name_demangled(name, plain, sizeof plain);
    name = plain;
    size_t n = 0;
    for (; name[n] && n + 1 < sizeof low; n++) low[n] = (char)tolower((unsigned char)name[n]);
    low[n] = 0;
    if (p) *p = precision_of(low);
    if (op) *op = opclass_of(low);
}

const char *precision_name(enum precision p)
{
    static const char *const names[PREC_COUNT] = {"fp32", "tf32", "fp16",  "bf16",
                                                  "fp8",  "int8", "other", "unknown"};
    return p < PREC_COUNT ? names[p] : "unknown";
}

const char *opclass_name(enum opclass op)
{
    static const char *const names[OP_COUNT] = {"gemm",        "conv",    "attention", "norm",
                                                "layout",      "dropout", "copy",      "reduction",
                                                "elementwise", "other"};
    return op < OP_COUNT ? names[op] : "other";
}
