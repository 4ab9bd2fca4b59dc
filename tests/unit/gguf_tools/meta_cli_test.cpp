// `rebox meta` as a user runs it on a converted tiny fixture: edits read back through the strict
// reader with every tensor's bytes unchanged, alignment kept or changed, split sets edited through
// shard 1, and each refused edit giving one line, exit 1, no output and an untouched input.
#include <fstream>

#include "format/gguf_file.hpp"
#include "format/gguf_shards.hpp"
#include "gguf_tools/tool_fixture.hpp"
#include "test_files.hpp"
#include "test_process.hpp"

namespace rebox {
namespace {

namespace fs = std::filesystem;
using test::contains;
using test::quoted;

class MetaCli : public test::GgufToolTest {};

// Every tensor of `a` has the same name (or its renamed name), ne, type and bytes in `b`.
void expect_same_tensor_bytes(const GgufFile& a, const GgufFile& b,
                              const std::string& renamed_from = "",
                              const std::string& renamed_to = "") {
    ASSERT_EQ(a.tensors().size(), b.tensors().size());
    for (size_t i = 0; i < a.tensors().size(); ++i) {
        const GgufTensorInfo& ta = a.tensors()[i];
        const GgufTensorInfo& tb = b.tensors()[i];
        EXPECT_EQ(ta.name == renamed_from ? renamed_to : ta.name, tb.name);
        EXPECT_EQ(ta.ne, tb.ne);
        EXPECT_EQ(ta.type, tb.type);
        const auto da = a.tensor_data(ta), db = b.tensor_data(tb);
        EXPECT_TRUE(std::equal(da.begin(), da.end(), db.begin(), db.end())) << ta.name;
    }
}

TEST_F(MetaCli, InPlaceSetsNameAndChatTemplateAndKeepsTensorBytes) {
    const fs::path file = converted("a.gguf");
    fs::copy_file(file, dir_ / "orig.gguf");
    const std::string tmpl = "{% for m in messages %}<|im_start|>{{ m.content }}{% endfor %}\n";
    std::ofstream(dir_ / "t.jinja") << tmpl;
    const auto r = rebox("meta " + quoted(file) + " --set general.name=renamed-model" +
                         " --chat-template-file " + quoted(dir_ / "t.jinja"));
    ASSERT_EQ(r.exit_code, 0) << r.err;
    // The fixture directory "model" is named "Model" (the converter's str.title() casing).
    EXPECT_TRUE(contains(r.out, "set general.name = 'renamed-model' (was 'Model')")) << r.out;
    const auto orig = GgufFile::open(dir_ / "orig.gguf");
    const auto edited = GgufFile::open(file);
    EXPECT_EQ(*edited->find("general.name")->as_string(), "renamed-model");
    EXPECT_EQ(*edited->find("tokenizer.chat_template")->as_string(), tmpl);
    EXPECT_EQ(edited->kvs().size(),
              orig->kvs().size() + (orig->find("tokenizer.chat_template") ? 0 : 1));
    // The data section moved (the header grew) and stays 32-aligned.
    EXPECT_GT(edited->data_offset(), orig->data_offset());
    EXPECT_EQ(edited->data_offset() % 32, 0u);
    expect_same_tensor_bytes(*orig, *edited);
    // No temporary file left beside it.
    size_t entries = 0;
    for (const auto& e : fs::directory_iterator(dir_))
        entries += contains(e.path().string(), "rebox-tmp");
    EXPECT_EQ(entries, 0u);
}

TEST_F(MetaCli, NewTypedKeysArraysDeleteAndRename) {
    const fs::path file = converted("a.gguf");
    std::ofstream(dir_ / "arr.json") << "[1, -2, 300]";
    const auto r = rebox("meta " + quoted(file) + " -o " + quoted(dir_ / "b.gguf") +
                         " --set my.count:UINT16=65535 --set my.ratio:FLOAT32=0.1 " +
                         "--set my.flag:BOOL=true --set 'my.list:ARRAY[INT16]=@" +
                         (dir_ / "arr.json").string() + "' --delete general.quantization_version" +
                         " --rename-tensor token_embd.weight=tok.weight");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto orig = GgufFile::open(file);
    const auto b = GgufFile::open(dir_ / "b.gguf");
    const GgufValue* count = b->find("my.count");
    ASSERT_NE(count, nullptr);
    EXPECT_EQ(count->type, GgufType::UINT16);
    EXPECT_EQ(count->as_u16(), 65535);
    EXPECT_EQ(b->find("my.ratio")->as_f32(), 0.1f);  // rounded to the nearest float
    EXPECT_EQ(b->find("my.flag")->as_bool(), true);
    const GgufValue* list = b->find("my.list");
    ASSERT_NE(list, nullptr);
    EXPECT_EQ(list->elem_type, GgufType::INT16);
    EXPECT_EQ(list->array, (std::vector<GgufScalar>{int64_t{1}, int64_t{-2}, int64_t{300}}));
    EXPECT_EQ(b->find("general.quantization_version"), nullptr);
    expect_same_tensor_bytes(*orig, *b, "token_embd.weight", "tok.weight");
}

TEST_F(MetaCli, AlignmentChangeMovesDataToTheNewBoundary) {
    const fs::path file = converted("a.gguf");
    const auto r = rebox("meta " + quoted(file) + " -o " + quoted(dir_ / "b.gguf") +
                         " --set general.alignment:UINT32=4096");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto orig = GgufFile::open(file);
    const auto b = GgufFile::open(dir_ / "b.gguf");
    EXPECT_EQ(b->alignment(), 4096u);
    EXPECT_EQ(b->data_offset() % 4096, 0u);
    for (const GgufTensorInfo& t : b->tensors()) EXPECT_EQ(t.offset % 4096, 0u) << t.name;
    expect_same_tensor_bytes(*orig, *b);
    // And back: deleting the key returns to 32 with a smaller file.
    const auto back = rebox("meta " + quoted(dir_ / "b.gguf") + " --delete general.alignment");
    ASSERT_EQ(back.exit_code, 0) << back.err;
    const auto c = GgufFile::open(dir_ / "b.gguf");
    EXPECT_EQ(c->alignment(), 32u);
    EXPECT_EQ(c->file_size(), orig->file_size());
    expect_same_tensor_bytes(*orig, *c);
}

TEST_F(MetaCli, SplitSetIsEditedThroughShardOneOnly) {
    const fs::path file = converted("a.gguf");
    const auto split =
        rebox("split " + quoted(file) + " " + quoted(dir_ / "s") + " --split-max-tensors 10");
    ASSERT_EQ(split.exit_code, 0) << split.err;
    const fs::path first = dir_ / "s-00001-of-00003.gguf";
    const auto shard2_before = test::read_file_bytes(dir_ / "s-00002-of-00003.gguf");
    const auto r = rebox("meta " + quoted(first) + " --set general.name=split-edit");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(test::read_file_bytes(dir_ / "s-00002-of-00003.gguf"), shard2_before);
    const GgufSet set = GgufSet::open(first);
    EXPECT_EQ(*set.find("general.name")->as_string(), "split-edit");
    EXPECT_EQ(set.tensors().size(), GgufFile::open(file)->tensors().size());
    // -o is refused for a split set; split keys cannot be edited.
    const auto with_out =
        rebox("meta " + quoted(first) + " -o " + quoted(dir_ / "x.gguf") + " --set general.name=y");
    EXPECT_EQ(with_out.exit_code, 1);
    EXPECT_TRUE(contains(with_out.err, "in place")) << with_out.err;
    const auto split_key = rebox("meta " + quoted(first) + " --set split.count=5");
    EXPECT_EQ(split_key.exit_code, 1);
    EXPECT_TRUE(contains(split_key.err, "split.count: split keys")) << split_key.err;
}

TEST_F(MetaCli, InPlaceThroughASymlinkKeepsTheLinkAndTheFileMode) {
    const fs::path file = converted("a.gguf");
    fs::permissions(file, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
    fs::create_symlink(file, dir_ / "link.gguf");
    const auto r = rebox("meta " + quoted(dir_ / "link.gguf") + " --set general.name=via-link");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(fs::is_symlink(dir_ / "link.gguf"));
    EXPECT_EQ(*GgufFile::open(file)->find("general.name")->as_string(), "via-link");
    EXPECT_EQ(fs::status(file).permissions() & fs::perms::all,
              fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
}

struct BadCase {
    const char* name;
    std::string args;  // after "meta FILE"
    const char* message;
};

TEST_F(MetaCli, BadInputIsOneLineExitOneAndTouchesNothing) {
    const fs::path file = converted("a.gguf");
    std::ofstream(dir_ / "bad.json") << "[1, 2,";
    std::ofstream(dir_ / "mixed.json") << "[1, \"two\"]";
    std::ofstream(dir_ / "not.gguf") << "this is not a gguf file at all, but long enough";
    const std::string out = " -o " + quoted(dir_ / "out.gguf");
    const std::vector<BadCase> cases = {
        {"no edit", "", "nothing to do"},
        {"missing key", out + " --set no.such.key=1",
         "no.such.key: no such key; a new key needs its type"},
        {"delete missing", out + " --delete no.such.key", "no.such.key: --delete: no such key"},
        {"known key wrong type", out + " --set tokenizer.ggml.mask_token_id:INT32=3",
         "tokenizer.ggml.mask_token_id: type INT32 would make llama.cpp refuse the file (expected "
         "UINT32"},
        {"architecture type", out + " --set general.architecture:UINT32=1",
         "general.architecture: has type STRING; --set keeps a key's type"},
        {"delete architecture", out + " --delete general.architecture",
         "general.architecture: --delete"},
        {"delete block count", out + " --delete qwen3.block_count",
         "qwen3.block_count: --delete would leave a file llama.cpp cannot load"},
        {"delete vocabulary", out + " --delete tokenizer.ggml.tokens",
         "tokenizer.ggml.tokens: --delete"},
        {"alignment not power of two", out + " --set general.alignment:UINT32=48",
         "48 is not a power of two"},
        {"alignment wrong type", out + " --set general.alignment:UINT64=64",
         "general.alignment: has type UINT64"},
        {"existing key other type", out + " --set general.name:UINT8=3",
         "general.name: has type STRING"},
        {"value not of type", out + " --set qwen3.block_count=many",
         "'many' is not a UINT32 value"},
        {"value out of range", out + " --set qwen3.block_count=4294967296",
         "is not a UINT32 value"},
        {"unknown type", out + " --set a.b:WORD=1", "unknown type 'WORD'"},
        {"array in place", out + " --set tokenizer.ggml.tokens=x",
         "--set does not change arrays in place"},
        {"bad json", out + " --set 'my.a:ARRAY[INT32]=@" + (dir_ / "bad.json").string() + "'",
         "not valid JSON"},
        {"mixed json", out + " --set 'my.a:ARRAY[INT32]=@" + (dir_ / "mixed.json").string() + "'",
         "my.a[1]: \"two\" is not in range"},
        {"array without file", out + " --set 'my.a:ARRAY[INT32]=[1]'",
         "must come from a JSON file"},
        {"rename missing tensor", out + " --rename-tensor nope=x",
         "tensor 'nope': --rename-tensor: no such tensor"},
        {"rename onto existing", out + " --rename-tensor output_norm.weight=token_embd.weight",
         "a tensor of that name exists already"},
        {"output is input", " -o " + quoted(file) + " --set general.name=x",
         "-o: is the input file"},
        {"output is input by another name",
         " -o " + quoted(dir_ / "." / "a.gguf") + " --set general.name=x", "-o: is the input file"},
    };
    const auto before = test::read_file_bytes(file);
    for (const BadCase& c : cases) {
        const auto r = rebox("meta " + quoted(file) + c.args);
        EXPECT_EQ(r.exit_code, 1) << c.name << ": " << r.err;
        EXPECT_EQ(test::line_count(r.err), 1u) << c.name << ": " << r.err;
        EXPECT_TRUE(contains(r.err, c.message)) << c.name << ": " << r.err;
        EXPECT_FALSE(fs::exists(dir_ / "out.gguf")) << c.name;
        EXPECT_EQ(test::read_file_bytes(file), before) << c.name;
    }
    // Not a GGUF, and a split set with a missing shard.
    const auto not_gguf = rebox("meta " + quoted(dir_ / "not.gguf") + " --set general.name=x");
    EXPECT_EQ(not_gguf.exit_code, 1);
    EXPECT_EQ(test::line_count(not_gguf.err), 1u) << not_gguf.err;
    EXPECT_TRUE(contains(not_gguf.err, "not.gguf")) << not_gguf.err;
    ASSERT_EQ(rebox("split " + quoted(file) + " " + quoted(dir_ / "s") + " --split-max-tensors 10")
                  .exit_code,
              0);
    fs::remove(dir_ / "s-00003-of-00003.gguf");
    const auto shard1 = test::read_file_bytes(dir_ / "s-00001-of-00003.gguf");
    const auto missing =
        rebox("meta " + quoted(dir_ / "s-00001-of-00003.gguf") + " --set general.name=x");
    EXPECT_EQ(missing.exit_code, 1);
    EXPECT_TRUE(contains(missing.err, "shard 3 of 3 is missing")) << missing.err;
    EXPECT_EQ(test::read_file_bytes(dir_ / "s-00001-of-00003.gguf"), shard1);
}

}  // namespace
}  // namespace rebox
