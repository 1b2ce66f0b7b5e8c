/* kern_arch — which code of a CUDA build a device runs, as the CUDA driver
 * picks it: from a build for the architectures `archs` (CMake's list, comma-
 * or semicolon-separated: "80,89,90a,100a,120"; each entry builds SASS for
 * sm_XY and PTX for compute_XY, as CMake does by default), a device of
 * compute capability cc (major·10 + minor) runs the SASS of the highest
 * sm_XY with the same major and XY ≤ cc (an "a" arch only on exactly its
 * cc), else the highest non-"a" PTX ≤ cc compiled just in time. The result
 * is the virtual architecture the code was compiled for — the
 * __CUDA_ARCH__ its device code saw, what cudaFuncAttributes.ptxVersion
 * reports — or 0 when the device can run nothing of the build.
 * kern_fp8_mma_ok says whether code compiled for that architecture has the
 * fp8 e4m3 mma.sync path of kern_gemm_fp8.cu (sm_89+) rather than its
 * trapping stub. kern_arch_has_specific says whether the build holds the
 * architecture-specific code ("90a", "100a": wgmma, setmaxnreg, tcgen05)
 * of exactly compute capability cc, which the plugin's Hopper and
 * Blackwell rungs need. Pure functions. */
#ifndef KERN_ARCH_H
#define KERN_ARCH_H

#ifdef __cplusplus
extern "C" {
#endif

int kern_arch_code_for(const char *archs, int cc);
int kern_fp8_mma_ok(int virtual_arch);
int kern_arch_has_specific(const char *archs, int cc);

#ifdef __cplusplus
}
#endif

#endif
