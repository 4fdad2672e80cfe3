// Whether a file that should be a model is one: a download answered with an HTML page, cut
// short, or a file of zeros must not be renamed to model.gguf and reported as done.
#pragma once

#include <string>
#include <string_view>

namespace kvscope {

// "" when the file's header reads as the format `name` says (".gguf": GGUF, ".safetensors":
// safetensors; other names: only the checks below), else what the file is instead, for a
// message: "an HTML page (550 bytes)", "an empty file", "4096 bytes of zeros", "not a GGUF
// file: <the reader's error>". `name` is the file name the download will have (its .part
// file has another).
std::string model_file_problem(const std::string& path, std::string_view name);

}  // namespace kvscope
