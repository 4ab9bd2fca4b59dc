// rebox meta: apply KV / chat-template / tensor-name edits to a GGUF (or the shards of a split set
// that hold what changes) and rewrite it: new metadata block padded to the file's alignment, then
// each tensor's bytes copied file to file at its (unchanged) offset inside the data section.
#include "gguf_tools/meta_edit.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>

#include "format/atomic_output.hpp"
#include "format/atomic_output_set.hpp"
#include "format/background_writeback.hpp"
#include "format/gguf_layout.hpp"
#include "format/gguf_shards.hpp"
#include "gguf_tools/file_identity.hpp"
#include "gguf_tools/known_keys.hpp"
#include "gguf_tools/kv_text.hpp"
#include "rebox/error.hpp"

namespace rebox {
namespace {

namespace fs = std::filesystem;

constexpr uint64_t kMaxChatTemplateBytes = 64ull << 20;

bool is_split_key(std::string_view key) {
    return key == kSplitNoKey || key == kSplitCountKey || key == kSplitTensorsCountKey;
}

std::vector<GgufKV>::iterator find_key(std::vector<GgufKV>& kvs, std::string_view key) {
    return std::find_if(kvs.begin(), kvs.end(), [&](const GgufKV& kv) { return kv.key == key; });
}

void refuse_split_key(const std::string& file, const std::string& key) {
    if (is_split_key(key))
        throw_input_error(file, key, "split keys describe the shard set and cannot be edited",
                          "rebox merge, then edit the merged file");
}

void apply_delete(const std::string& file, std::vector<GgufKV>& kvs, const std::string& key,
                  std::vector<std::string>& changes) {
    refuse_split_key(file, key);
    auto it = find_key(kvs, key);
    if (it == kvs.end()) throw_input_error(file, key, "--delete: no such key");
    kvs.erase(it);
    changes.push_back("deleted " + key);
}

// "KEY=VALUE", "KEY:TYPE=VALUE", "KEY:ARRAY[TYPE]=@file.json".
void apply_set(const std::string& file, std::vector<GgufKV>& kvs, const std::string& spec,
               std::vector<std::string>& touched, std::vector<std::string>& changes) {
    const size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0)
        throw_input_error("--set", spec, "no '='", "KEY=VALUE or KEY:TYPE=VALUE");
    std::string key = spec.substr(0, eq);
    const std::string text = spec.substr(eq + 1);
    std::optional<GgufTypeSpec> type;
    if (const size_t colon = key.find(':'); colon != std::string::npos) {
        const std::string type_text = key.substr(colon + 1);
        key.resize(colon);
        type = parse_gguf_type_spec(type_text);
        if (!type)
            throw_input_error("--set", key, "unknown type '" + type_text + "'",
                              "UINT8, INT8, UINT16, INT16, UINT32, INT32, UINT64, INT64, FLOAT32, "
                              "FLOAT64, BOOL, STRING or ARRAY[TYPE]");
    }
    if (key.empty()) throw_input_error("--set", spec, "empty key", "KEY=VALUE");
    refuse_split_key(file, key);
    auto it = find_key(kvs, key);
    if (it != kvs.end() && it->value.is_array())
        throw_input_error(file, key,
                          "is an array (" + gguf_type_spec_name(it->value) + " x" +
                              std::to_string(it->value.array.size()) +
                              "); --set does not change arrays in place",
                          "--delete " + key + " --set '" + key + ":" +
                              gguf_type_spec_name(it->value) + "=@file.json'");
    if (it == kvs.end() && !type)
        throw_input_error(file, key, "no such key; a new key needs its type",
                          "--set " + key +
                              ":TYPE=VALUE with TYPE one of UINT8..FLOAT64, BOOL, "
                              "STRING, or " +
                              key + ":ARRAY[TYPE]=@file.json");
    if (it != kvs.end() && type && (type->type != it->value.type || type->type == GgufType::ARRAY))
        throw_input_error(
            file, key, "has type " + gguf_type_spec_name(it->value) + "; --set keeps a key's type",
            "--delete " + key + " first to give it another type");
    const GgufTypeSpec want = type ? *type : GgufTypeSpec{it->value.type, GgufType::STRING};
    GgufValue value;
    if (want.type == GgufType::ARRAY) {
        if (!text.starts_with("@"))
            throw_input_error("--set", key, "an array value must come from a JSON file",
                              key + ":ARRAY[TYPE]=@file.json");
        value = read_gguf_array_json(key, want.elem_type, text.substr(1));
    } else {
        value = parse_gguf_scalar(key, want.type, text);
    }
    const std::string shown = gguf_value_to_string(value);
    if (it != kvs.end()) {
        changes.push_back("set " + key + " = " + shown + " (was " +
                          gguf_value_to_string(it->value) + ")");
        it->value = std::move(value);
    } else {
        changes.push_back("added " + key + " = " + shown);
        kvs.push_back(GgufKV{key, std::move(value)});
    }
    touched.push_back(key);
}

std::string read_chat_template(const fs::path& path) {
    std::error_code ec;
    const auto size = fs::file_size(path, ec);
    if (ec)
        throw_input_error(path.string(), "--chat-template-file", "cannot read: " + ec.message());
    if (size > kMaxChatTemplateBytes)
        throw_input_error(path.string(), "--chat-template-file", "larger than 64 MiB");
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    if (!in) throw_input_error(path.string(), "--chat-template-file", "cannot read");
    return text.str();
}

uint32_t alignment_of(const std::vector<GgufKV>& kvs) {
    for (const GgufKV& kv : kvs)
        if (kv.key == "general.alignment") return *kv.value.as_u32();  // checked before
    return kGgufDefaultAlignment;
}

class ReadFd {
  public:
    explicit ReadFd(const std::string& path) : fd_(::open(path.c_str(), O_RDONLY | O_CLOEXEC)) {
        if (fd_ < 0)
            throw_input_error(path, "", std::string("cannot open: ") + std::strerror(errno));
    }
    ~ReadFd() { ::close(fd_); }
    ReadFd(const ReadFd&) = delete;
    ReadFd& operator=(const ReadFd&) = delete;
    int get() const { return fd_; }

  private:
    int fd_;
};

// One shard (or plain file) to rewrite: its new KVs and tensor names, and where it goes.
struct Rewrite {
    size_t shard = 0;
    std::vector<GgufKV> kvs;
    std::vector<std::string> names;  // per tensor of the shard, in file order
    fs::path target;
};

// A file replaced in place keeps its permission bits (the temporary is created 0644).
void keep_mode(const fs::path& target, const fs::path& temp) {
    struct stat st {};
    if (::stat(target.c_str(), &st) == 0) ::chmod(temp.c_str(), st.st_mode & 07777);
}

}  // namespace

MetaEditResult edit_gguf_metadata(const fs::path& input, const std::optional<fs::path>& output,
                                  const MetaEdits& edits, bool force) {
    if (edits.empty())
        throw_input_error("rebox meta", "", "nothing to do",
                          "at least one of --set, --delete, --chat-template-file, --rename-tensor");
    const GgufSet set = GgufSet::open(input);
    const GgufFile& head = set.shard(0);
    const std::string file = head.display_name();
    const bool is_split = head.find(kSplitCountKey) != nullptr;
    if (output) {
        if (is_split)
            throw_input_error(file, "-o", "a split set is edited in place (its first shard)",
                              "no -o, or rebox merge first");
        for (size_t s = 0; s < set.shard_count(); ++s)
            if (same_file(*output, set.shard(s).display_name()))
                throw_input_error(output->string(), "-o",
                                  "is the input file; meta would overwrite what it reads",
                                  "another output path, or no -o to edit the input in place");
        if (!force && fs::exists(*output))
            throw_input_error(output->string(), "-o", "already exists", "--force to replace it");
    }

    MetaEditResult result;
    std::vector<GgufKV> kvs = head.kvs();
    std::vector<std::string> touched;
    for (const std::string& key : edits.deletes) apply_delete(file, kvs, key, result.changes);
    for (const std::string& spec : edits.sets) apply_set(file, kvs, spec, touched, result.changes);
    if (edits.chat_template_file) {
        std::string text = read_chat_template(*edits.chat_template_file);
        const std::string key = "tokenizer.chat_template";
        auto it = find_key(kvs, key);
        if (it != kvs.end() && it->value.type != GgufType::STRING)
            throw_input_error(file, key, "has type " + gguf_type_spec_name(it->value), "STRING");
        result.changes.push_back((it == kvs.end() ? "added " : "set ") + key + " (" +
                                 std::to_string(text.size()) + " bytes from " +
                                 edits.chat_template_file->string() + ")");
        if (it != kvs.end())
            it->value = GgufValue::str(std::move(text));
        else
            kvs.push_back(GgufKV{key, GgufValue::str(std::move(text))});
        touched.push_back(key);
    }
    // A required key may be deleted only to be set again (to change its type).
    const GgufValue* arch = head.find("general.architecture");
    const std::string arch_name =
        arch != nullptr && arch->as_string() != nullptr ? *arch->as_string() : std::string();
    for (const std::string& key : edits.deletes)
        if (llama_requires_key(key, arch_name) && find_key(kvs, key) == kvs.end())
            throw_input_error(file, key, "--delete would leave a file llama.cpp cannot load",
                              "--set " + key + "=VALUE to change it instead");
    check_llama_kv_rules(file, kvs, touched);

    // Tensor names per shard, with the renames applied.
    std::vector<std::vector<std::string>> names(set.shard_count());
    for (size_t s = 0; s < set.shard_count(); ++s)
        for (const GgufTensorInfo& t : set.shard(s).tensors()) names[s].push_back(t.name);
    std::set<std::string> all_names;
    for (const auto& t : set.tensors()) all_names.insert(t.info->name);
    std::set<size_t> renamed_shards;
    for (const std::string& spec : edits.renames) {
        const size_t eq = spec.find('=');
        if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size())
            throw_input_error("--rename-tensor", spec, "not OLD=NEW", "--rename-tensor OLD=NEW");
        const std::string from = spec.substr(0, eq), to = spec.substr(eq + 1);
        if (all_names.count(from) == 0)
            throw_input_error(file, "tensor '" + from + "'", "--rename-tensor: no such tensor");
        if (all_names.count(to) != 0)
            throw_input_error(file, "tensor '" + to + "'",
                              "--rename-tensor: a tensor of that name exists already");
        if (to.size() > kGgmlMaxNameBytes)
            throw_input_error("--rename-tensor", to,
                              "name is " + std::to_string(to.size()) + " bytes long",
                              "at most 63 bytes");
        all_names.erase(from);
        all_names.insert(to);
        for (size_t s = 0; s < set.shard_count(); ++s) {
            auto it = std::find(names[s].begin(), names[s].end(), from);
            if (it == names[s].end()) continue;
            *it = to;
            renamed_shards.insert(s);
        }
        result.changes.push_back("renamed tensor " + from + " -> " + to);
    }

    // What to rewrite: the first shard for KV edits, any shard holding a renamed tensor.
    const bool kv_changed =
        !edits.deletes.empty() || !edits.sets.empty() || edits.chat_template_file;
    std::vector<Rewrite> rewrites;
    for (size_t s = 0; s < set.shard_count(); ++s) {
        if (!(s == 0 && kv_changed) && renamed_shards.count(s) == 0) continue;
        Rewrite r;
        r.shard = s;
        r.kvs = s == 0 ? std::move(kvs) : set.shard(s).kvs();  // a vocabulary is tens of MB
        r.names = names[s];
        // In place through a symlink: replace the file it points to, not the link.
        r.target = output && s == 0 ? *output : fs::canonical(set.shard(s).display_name());
        rewrites.push_back(std::move(r));
    }

    // Build every layout (all checks) before creating any output.
    std::vector<GgufLayout> layouts;
    for (Rewrite& r : rewrites) {
        GgufLayout layout(alignment_of(r.kvs));
        for (GgufKV& kv : r.kvs) layout.add_kv(std::move(kv.key), std::move(kv.value));
        r.kvs.clear();
        const auto& tensors = set.shard(r.shard).tensors();
        for (size_t i = 0; i < tensors.size(); ++i)
            layout.add_tensor(r.names[i], tensors[i].ne, tensors[i].type);
        layouts.push_back(std::move(layout));
    }
    std::vector<std::unique_ptr<AtomicOutput>> outputs;
    BackgroundWriteback writeback;  // declared after outputs: finishes before they are destroyed
    for (size_t k = 0; k < rewrites.size(); ++k) {
        const Rewrite& r = rewrites[k];
        const GgufFile& source = set.shard(r.shard);
        const GgufLayout& layout = layouts[k];
        const bool in_place = !(output && r.shard == 0);
        outputs.push_back(std::make_unique<AtomicOutput>(r.target, in_place || force));
        AtomicOutput& out = *outputs.back();
        out.resize(layout.file_size());
        out.pwrite(layout.serialize_metadata(), 0);
        const ReadFd fd(source.display_name());
        // data_offset() walks every KV (a vocabulary is 150k strings): once, not per tensor.
        const uint64_t data_offset = layout.data_offset();
        for (size_t i = 0; i < layout.tensors().size(); ++i) {
            const GgufTensorInfo& from = source.tensors()[i];
            const uint64_t to = data_offset + layout.tensors()[i].offset;
            out.copy_from(fd.get(), source.data_offset() + from.offset, from.nbytes, to);
            // The disk writes this tensor while the next one is copied (started from the
            // writeback thread: the copy never waits for the disk queue); commit()'s fsync then
            // waits only for the tail.
            writeback.push(out, to, from.nbytes);
        }
    }
    // Every output durable before any is renamed (a failing fsync leaves every input untouched);
    // commit()'s own fsync then finds nothing left to write.
    writeback.finish();
    for (auto& out : outputs) out->sync();
    for (size_t k = 0; k < outputs.size(); ++k)
        keep_mode(rewrites[k].target, outputs[k]->temp_path());
    // All or nothing: each rewritten shard replaces its file only once all are in place (shard 1
    // renamed last), and a failure between two renames puts the previous files back.
    commit_all(outputs);
    for (const Rewrite& r : rewrites) result.written.push_back(r.target);
    return result;
}

}  // namespace rebox
