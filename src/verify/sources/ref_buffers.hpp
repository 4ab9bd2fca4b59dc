// verify's own statement of which source tensors llama.cpp's converter skips as non-parameter
// buffers (conversion/base.py ModelBase.prepare_tensors: names ending in
// ".attention.masked_bias", ".attention.bias" or ".rotary_emb.inv_freq", for every class;
// conversion/bert.py BertModel.filter_tensors: "embeddings.position_ids" after its "bert." /
// "roberta." / "model." prefix, for BertModel and the classes derived from it). A GGUF without
// such a tensor is complete; the writer's list (arch::is_converter_buffer) is not consulted.
#pragma once

#include <string_view>

namespace rebox::verify_ref {

// bert_model_class: the architecture's converter class is BertModel or derives from it
// (RefArch::bert_model_class).
bool is_skipped_buffer(bool bert_model_class, std::string_view source_name);

}  // namespace rebox::verify_ref
