// Writes the harnesses' seed corpora into DIR/<harness>/: small valid inputs of each kind
// (a tiny synthetic GGUF with a SentencePiece vocab and one with a BPE vocab, a safetensors
// file, config.json texts, chat templates, and text in several scripts), so the fuzzer starts
// from inputs that pass the first checks. tests/fuzz/run.sh adds the real models.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "model/model_spec.h"
#include "model/synthetic_model.h"
#include "support/tiny_llama_spec.h"

namespace {

namespace fs = std::filesystem;

void write(const fs::path& p, const std::string& bytes) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << bytes;
}

kvscope::ModelSpec tiny_spec() {
  kvscope::ModelSpec s = kvscope::test::tiny_llama_spec("", 300);
  s.n_layers = 1;
  s.n_heads = 2;
  s.n_kv_heads = 1;
  s.head_dim = 16;
  s.rope_dim = 16;
  s.context_length = 64;
  s.rope_theta = 10000.0;
  s.norm_eps = 1e-5;
  return s;
}

// A safetensors file of one 2 x 2 F32 tensor.
std::string tiny_safetensors() {
  const std::string header =
      R"({"__metadata__":{"format":"pt"},"w":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]}})";
  std::string out(8, '\0');
  const std::uint64_t n = header.size();
  std::memcpy(out.data(), &n, 8);
  return out + header + std::string(16, '\0');
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_seeds DIR\n");
    return 2;
  }
  const fs::path dir = argv[1];
  fs::create_directories(dir / "gguf");
  kvscope::SyntheticVocab sp = kvscope::default_synthetic_vocab(300);
  sp.chat_template =
      "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n"
      "{% endfor %}";
  kvscope::write_synthetic_gguf((dir / "gguf/tiny_sp.gguf").string(), tiny_spec(),
                                kvscope::TensorType::F32, 1, &sp);
  kvscope::write_synthetic_gguf((dir / "gguf/tiny_q8.gguf").string(), tiny_spec(),
                                kvscope::TensorType::Q8_0, 2, &sp);

  write(dir / "safetensors/tiny.safetensors", tiny_safetensors());

  write(dir / "hf_config/llama.json",
        R"({"architectures":["LlamaForCausalLM"],"model_type":"llama","hidden_size":576,)"
        R"("intermediate_size":1536,"num_hidden_layers":30,"num_attention_heads":9,)"
        R"("num_key_value_heads":3,"max_position_embeddings":8192,"rms_norm_eps":1e-05,)"
        R"("rope_theta":100000,"vocab_size":49152,"tie_word_embeddings":true,)"
        R"("rope_scaling":null,"torch_dtype":"bfloat16"})");
  write(dir / "hf_config/qwen2.json",
        R"({"architectures":["Qwen2ForCausalLM"],"model_type":"qwen2","hidden_size":896,)"
        R"("intermediate_size":4864,"num_hidden_layers":24,"num_attention_heads":14,)"
        R"("num_key_value_heads":2,"sliding_window":32768,"use_sliding_window":false,)"
        R"("rope_scaling":{"type":"yarn","factor":4.0,"original_max_position_embeddings":32768},)"
        R"("vocab_size":151936})");

  // A SentencePiece-style and a byte-level tokenizer.json, most component types present.
  write(dir / "tokenizer_json/sp_bpe.json",
        R"({"added_tokens":[{"id":0,"content":"<unk>","special":true},)"
        R"({"id":1,"content":"<s>","special":true,"normalized":false}],)"
        R"("normalizer":{"type":"Sequence","normalizers":[{"type":"Prepend","prepend":"\u2581"},)"
        R"({"type":"Replace","pattern":{"String":" "},"content":"\u2581"}]},"pre_tokenizer":null,)"
        R"("post_processor":{"type":"TemplateProcessing","single":[{"SpecialToken":{"id":"<s>",)"
        R"("type_id":0}},{"Sequence":{"id":"A","type_id":0}}],"special_tokens":{"<s>":{"id":"<s>",)"
        R"("ids":[1],"tokens":["<s>"]}}},"decoder":{"type":"Sequence","decoders":[{"type":)"
        R"("Replace","pattern":{"String":"\u2581"},"content":" "},{"type":"ByteFallback"},)"
        R"({"type":"Fuse"},{"type":"Strip","content":" ","start":1,"stop":0}]},"model":{"type":)"
        R"("BPE","unk_token":"<unk>","byte_fallback":true,"fuse_unk":true,"vocab":{"<unk>":0,)"
        R"("<s>":1,"<0x41>":2,"\u2581":3,"a":4,"b":5,"\u2581a":6,"ab":7},)"
        R"("merges":["\u2581 a",["a","b"]]}})");
  write(dir / "tokenizer_json/byte_level.json",
        R"({"added_tokens":[{"id":5,"content":"<|im_end|>","special":true,"rstrip":true}],)"
        R"("normalizer":{"type":"NFC"},"pre_tokenizer":{"type":"Sequence","pretokenizers":[)"
        R"({"type":"Split","pattern":{"Regex":"\\p{N}{1,3}| ?\\p{L}+|\\s+"},)"
        R"("behavior":"Isolated","invert":false},{"type":"Digits","individual_digits":true},)"
        R"({"type":"ByteLevel","add_prefix_space":false,"use_regex":false}]},)"
        R"("post_processor":{"type":"ByteLevel"},"decoder":{"type":"ByteLevel"},)"
        R"("model":{"type":"BPE","ignore_merges":true,"vocab":{"a":0,"b":1,"\u0120":2,)"
        R"("ab":3,"\u0120ab":4,"<|im_end|>":5},"merges":["a b","\u0120 ab"]}})");

  // tokenizer_json_encode: each tokenizer above with each text below after a NUL, and the
  // shapes of issue #38's hostile files, small (a Split regex that rescans the text, steps
  // that grow it, added tokens sharing a prefix).
  const std::string tiny_bpe =
      R"("model":{"type":"BPE","vocab":{"a":0,"b":1,"ab":2,"\u2581":3},"merges":["a b"]})";
  const std::vector<std::pair<std::string, std::string>> hostile = {
      {R"({"pre_tokenizer":{"type":"Split","pattern":{"Regex":"a*b|a"},"behavior":"Isolated"},)" +
           tiny_bpe + "}",
       std::string(3000, 'a')},
      {R"({"normalizer":{"type":"Sequence","normalizers":[{"type":"Replace","pattern":)"
       R"({"String":"a"},"content":"aaaaaaaaaaaaaaaa"},{"type":"Prepend","prepend":"b"}]},)" +
           tiny_bpe + "}",
       std::string(64, 'a')},
      {R"({"pre_tokenizer":{"type":"Metaspace","replacement":"aaaaaaaaaaaaaaaaaaaa","split":false},)" +
           tiny_bpe + "}",
       std::string(400, ' ')},
      {R"({"added_tokens":[{"id":4,"content":"aaaaaaaaaa1"},{"id":5,"content":"aaaaaaaaaa12"},)"
       R"({"id":6,"content":"aaaaaaaaab","special":true,"lstrip":true}],)" +
           tiny_bpe + "}",
       std::string(2000, 'a') + "12 aaaaaaaaab"}};
  for (std::size_t i = 0; i < hostile.size(); ++i) {
    write(dir / ("tokenizer_json_encode/hostile" + std::to_string(i)),
          hostile[i].first + std::string(1, '\0') + hostile[i].second);
  }

  const std::vector<std::string> templates = {
      "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + "
      "message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}",
      "{{ bos_token }}{% for m in messages %}[INST] {{ m['content'] }} [/INST]{% endfor %}",
      "<|start_header_id|>user<|end_header_id|>\n\n{{ m.content }}<|eot_id|>",
      "<start_of_turn>user\nhi<end_of_turn>\n<start_of_turn>model\n",
      "plain \x01user text\x01\x02assistant text"};
  for (std::size_t i = 0; i < templates.size(); ++i) {
    write(dir / ("chat_template/t" + std::to_string(i)), templates[i]);
  }
  const std::vector<std::string> texts = {
      "Once upon a time, there was a little girl named Lily.",
      "The capital of France is Paris.\n\n  Indented  code:\tx = 1;",
      "你好，世界！今日は。Привет, мир! 🙂👍🏽 e\xcc\x81 \xe2\x80\x8d",
      "<|im_start|>user\n<|im_end|></s><s>[INST]",
      std::string("bytes \xff\xfe\x80 broken \xe4\xbd")};
  for (std::size_t i = 0; i < texts.size(); ++i) {
    write(dir / ("tokenizer/t" + std::to_string(i)), texts[i]);
    for (const char* tok : {"sp_bpe", "byte_level"}) {
      std::ifstream in(dir / "tokenizer_json" / (std::string(tok) + ".json"), std::ios::binary);
      const std::string json((std::istreambuf_iterator<char>(in)), {});
      write(dir / "tokenizer_json_encode" / (std::string(tok) + "_t" + std::to_string(i)),
            json + std::string(1, '\0') + texts[i]);
    }
  }
  return 0;
}
