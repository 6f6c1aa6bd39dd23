# SPDX-License-Identifier: MIT
"""gemm_autotune.py - a TileLang-Ascend GEMM factory whose tile sizes come from tiletune.

The kernel is the one of templates/gemm.py.in (the gemm template's source): TileLang-Ascend's
intrinsic (expert-mode) GEMM, launched on ``core_num`` cube cores that walk the output tiles
persistently (or one block per tile), with an S1-deep GM->L1 ring, an S2-deep L1->L0A/L0B ring and one fp32 L0C
accumulator, synchronised with explicit set_flag/wait_flag pairs.  Its tunables are the
template's params: block_M, block_N, block_K, K_L1, S1, S2, core_num (0: one block per output
tile, else a persistent kernel on that many cores) and swizzle (tile rasterisation panels).

``@tiletune.autotune`` goes above ``@tilelang.jit``: a call with the shape only
(``gemm(M, N, K)``) asks tiletune for the stored best of that shape (else the nearest tuned
shape, else the cost model's top-1, marked predicted), fills the tunables in and returns the
compiled kernel; ``tune="background"`` also submits a tuning job for shapes without a stored
best and uses its result once it has finished.  Needs an Ascend NPU with tilelang-ascend and
torch_npu, and a tiletuned (TILETUNE_URL, TILETUNE_TOKEN for tuning):

    TILETUNE_URL=http://tuner:7878 TILETUNE_TOKEN=... python3 gemm_autotune.py 4096 4096 4096
"""
import sys

import tilelang
import tilelang.language as T

import tiletune


@tiletune.autotune(template="gemm", key=["M", "N", "K", "dtype", "out_dtype"], target="a2",
                   tune="background", budget=32)
@tilelang.jit(out_idx=[-1], platform="A2")
def gemm(M, N, K, block_M, block_N, block_K, K_L1, S1, S2, dtype="float16",
         out_dtype="float16", core_num=0, swizzle=1):
    """C[M, N] = A[M, K] @ B[K, N] on the cube cores (fp32 accumulation)."""
    m_num = (M + block_M - 1) // block_M
    n_num = (N + block_N - 1) // block_N
    tiles = m_num * n_num
    cores = min(core_num, tiles) if core_num > 0 else tiles   # 0: one block per tile
    k_slices = (K + K_L1 - 1) // K_L1          # GM -> L1 slices of K_L1
    k_steps = K_L1 // block_K                  # L1 -> L0 steps of block_K per slice

    @T.macro
    def arm_flags():                           # every ring slot starts free
        for s in T.serial(S1):
            T.set_flag("mte1", "mte2", s)
        for s in T.serial(S2):
            T.set_flag("m", "mte1", s)
        T.set_flag("fix", "m", 0)

    @T.macro
    def drain_flags():
        for s in T.serial(S1):
            T.wait_flag("mte1", "mte2", s)
        for s in T.serial(S2):
            T.wait_flag("m", "mte1", s)
        T.wait_flag("fix", "m", 0)

    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype),
             C: T.Tensor((M, N), out_dtype)):
        with T.Kernel(cores, is_npu=True) as (cid, _):
            A_L1 = T.alloc_L1((S1, block_M, K_L1), dtype)
            B_L1 = T.alloc_L1((S1, K_L1, block_N), dtype)
            A_L0 = T.alloc_L0A((S2, block_M, block_K), dtype)
            B_L0 = T.alloc_L0B((S2, block_K, block_N), dtype)
            C_L0 = T.alloc_L0C((block_M, block_N), "float32")
            with T.Scope("C"):
                arm_flags()
                for i in T.serial(T.ceildiv(tiles, cores)):
                    tile = i * cores + cid
                    if swizzle > 1:                    # rasterise in panels for L2 re-use
                        tile = T.use_swizzle(tile, M, N, K, block_M, block_N, off=swizzle)
                    if tile < tiles:
                        bx = tile // n_num
                        by = tile % n_num
                        # first K slice into L1 slot 0
                        T.wait_flag("mte1", "mte2", 0)
                        T.copy(A[bx * block_M, 0], A_L1[0, :, :])
                        T.copy(B[0, by * block_N], B_L1[0, :, :])
                        T.set_flag("mte2", "mte1", 0)
                        T.wait_flag("fix", "m", 0)     # L0C is free again
                        for k in T.serial(k_slices):
                            if k < k_slices - 1:       # prefetch the next slice
                                nxt = (k + 1) % S1
                                T.wait_flag("mte1", "mte2", nxt)
                                T.copy(A[bx * block_M, (k + 1) * K_L1], A_L1[nxt, :, :])
                                T.copy(B[(k + 1) * K_L1, by * block_N], B_L1[nxt, :, :])
                                T.set_flag("mte2", "mte1", nxt)
                            T.wait_flag("mte2", "mte1", k % S1)
                            steps = T.min(k_steps, T.ceildiv(K - k * K_L1, block_K))
                            for kk in T.serial(steps):
                                slot = kk % S2
                                T.wait_flag("m", "mte1", slot)
                                T.copy(A_L1[k % S1, 0, kk * block_K], A_L0[slot, :, :])
                                T.copy(B_L1[k % S1, kk * block_K, 0], B_L0[slot, :, :])
                                if kk == steps - 1:
                                    T.set_flag("mte1", "mte2", k % S1)   # L1 slot consumed
                                T.set_flag("mte1", "m", slot)
                                T.wait_flag("mte1", "m", slot)
                                T.mma(A_L0[slot, :, :], B_L0[slot, :, :], C_L0,
                                      init=T.And(k == 0, kk == 0))
                                T.set_flag("m", "mte1", slot)
                        T.set_flag("m", "fix", 0)
                        T.wait_flag("m", "fix", 0)
                        T.copy(C_L0, C[bx * block_M, by * block_N])
                        T.set_flag("fix", "m", 0)
                drain_flags()

    return main


def run(M, N, K):
    """Compile with the resolved tile sizes, check against torch and print the timing."""
    import torch
    import torch_npu  # noqa: F401
    from tilelang.profiler import do_bench

    how = gemm.resolve(M, N, K)
    label = "cost-model prediction" if how.predicted else how.source
    print(f"gemm {M}x{N}x{K}: {how.config} ({label}"
          f"{', server down: last known' if how.stale else ''})")
    kernel = gemm(M, N, K)
    a = torch.randn(M, K, dtype=torch.float16).npu()
    b = torch.randn(K, N, dtype=torch.float16).npu()
    c = kernel(a, b)
    torch.testing.assert_close(c.float(), (a.float() @ b.float()), rtol=1e-2, atol=1e-2)
    print(f"ok, {do_bench(lambda: kernel(a, b)):.4f} ms")
    if how.job:
        print(f"tuning job {how.job} runs in the background; the next run uses its best")


if __name__ == "__main__":
    run(*(int(x) for x in (sys.argv[1:4] if len(sys.argv) >= 4 else (4096, 4096, 4096))))
