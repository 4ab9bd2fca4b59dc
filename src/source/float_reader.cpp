// read_float_model: safetensors files -> SourceModel with format "float", one float SourceTensor
// per F32/F16/BF16 tensor (its bytes mapped, never converted here), a Blocker for any other dtype.
#include "source/float_reader.hpp"

#include "format/safetensors.hpp"
#include "source_helpers.hpp"

namespace rebox {

SourceModel read_float_model(const ModelDir& model_dir) {
    SourceModel model;
    model.dir = model_dir.path();
    model.format = "float";
    const SafetensorsModel& st = model_dir.safetensors();
    for (const auto& file : st.files()) {
        model.files.push_back(file);
        for (const StTensorInfo& info : file->tensors()) {
            const std::optional<FloatDtype> dtype = source_detail::float_dtype(info.dtype);
            if (!dtype) {
                model.blockers.push_back(Blocker{
                    info.name,
                    file->display_name() + ": dtype " + std::string(st_dtype_name(info.dtype)) +
                        " has no exact GGUF float type (expected F32, F16 or BF16)",
                    "store the tensor as F32, F16 or BF16"});
                continue;
            }
            model.tensors.push_back(source_detail::float_tensor(*file, info, *dtype));
        }
    }
    return model;
}

}  // namespace rebox
