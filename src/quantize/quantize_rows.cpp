// rebox::quantize_rows / rebox::dequantize_row: validate, then the fastest kernel path this CPU
// runs (every path writes ggml's bytes).
#include "quantize/quantize.hpp"
#include "rebox/rebox.hpp"

namespace rebox {

std::size_t quantize_rows(GgmlType type, const float* src, void* dst, int64_t nrows,
                          int64_t n_per_row, const float* imatrix) {
    return quant::quantize_rows_with(quant::best_kernel_path(), type, src, dst, nrows, n_per_row,
                                     imatrix);
}

void dequantize_row(GgmlType type, const void* src, float* dst, int64_t n) {
    quant::check_dequantize_args(type, n);
    if (n == 0) return;
    quant::dequantize_row_scalar(type, src, dst, n);
}

}  // namespace rebox
