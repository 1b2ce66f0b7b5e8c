/* kern_tma_plan — see kern_tma_plan.h. */
#include "kern_tma_plan.h"

#include "kern_desc.h"

int kern_tma_tiled_plan(uintptr_t addr, uint32_t elem, int64_t rows, int64_t cols, int64_t batch, uint32_t box_cols,
                        uint32_t box_rows, kern_tma_tiled *t, sim_err *err)
{
    const int64_t dim_max = (int64_t)1 << 32, stride_max = (int64_t)1 << 40;
    if (addr % 16) return sim_err_set(err, SIM_EINVAL, "tensor map: address %#llx not 16-byte aligned", (unsigned long long)addr);
    if (elem != 1 && elem != 2 && elem != 4) return sim_err_set(err, SIM_EINVAL, "tensor map: %u-byte elements", elem);
    if (rows < 1 || cols < 1 || batch < 0 || rows > dim_max || cols > dim_max || batch > dim_max)
        return sim_err_set(err, SIM_EINVAL, "tensor map: %lld × %lld (× %lld) elements", (long long)rows, (long long)cols,
                           (long long)batch);
    int64_t row_bytes = cols * (int64_t)elem;
    if (row_bytes % 16 || row_bytes >= stride_max || (batch > 0 && rows > (stride_max - 1) / row_bytes))
        return sim_err_set(err, SIM_EINVAL, "tensor map: a row of %lld bytes (strides must be multiples of 16 below 2^40)",
                           (long long)row_bytes);
    uint32_t box_row_bytes = box_cols * elem;
    if (box_cols < 1 || box_rows < 1 || box_cols > 256 || box_rows > 256 || box_row_bytes % 16 ||
        box_row_bytes > KERN_SW128_SPAN)
        return sim_err_set(err, SIM_EINVAL,
                           "tensor map: box %u × %u of %u-byte elements (sides 1-256, a box row a multiple of 16 bytes "
                           "within the 128-byte swizzle span)",
                           box_rows, box_cols, elem);
    t->rank = batch > 0 ? 3 : 2;
    t->dims[0] = (uint64_t)cols;
    t->dims[1] = (uint64_t)rows;
    t->dims[2] = batch > 0 ? (uint64_t)batch : 1;
    t->strides[0] = (uint64_t)row_bytes;
    t->strides[1] = batch > 0 ? (uint64_t)rows * (uint64_t)row_bytes : 0;
    t->box[0] = box_cols;
    t->box[1] = box_rows;
    t->box[2] = 1;
    t->elem_strides[0] = t->elem_strides[1] = t->elem_strides[2] = 1;
    t->box_bytes = kern_tma_box_bytes(elem, box_cols, box_rows);
    return 0;
}
