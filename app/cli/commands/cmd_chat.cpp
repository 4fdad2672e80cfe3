// `kvscope-cli chat -m MODEL`: an interactive chat in the terminal with the model's chat
// template (recognised from the file, rendered natively, never executed). Each line typed
// is a user message; an empty line or end of input ends the chat.
#include <cstdio>
#include <iostream>
#include <limits>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli/command.h"
#include "cli/engine_args.h"
#include "cli/sampling_args.h"
#include "run/engine.h"

namespace kvscope::cli {

int cmd_chat(const Args& args) {
  ArgParser p("chat", "-m MODEL [-sys TEXT] [-n N] [--temp T] [options]");
  declare_engine_options(p);
  p.option({"-sys", "--system-prompt"}, "system prompt");
  p.option({"-n", "--n-predict"}, "most tokens per reply (default 512)");
  declare_sampling_options(p);
  if (!p.parse(args)) return 0;
  Engine engine(p.required("-m"), engine_options(p));
  if (!engine.backend_note().empty()) fmt::print(stderr, "note: {}\n", engine.backend_note());
  print_sampling_notes(engine);
  const SamplingParams sampling = sampling_options(p, engine);
  fmt::print(stderr, "chat template: {}{}\n", template_family_name(engine.template_family()),
             engine.template_family() == TemplateFamily::None
                 ? " (base model: a plain User/Assistant format is used)"
                 : "");
  std::vector<ChatMessage> messages;
  if (auto sys = p.get("-sys")) messages.push_back({"system", *sys});
  for (std::string line;;) {
    fmt::print("> ");
    std::fflush(stdout);
    if (!std::getline(std::cin, line) || line.empty()) break;
    messages.push_back({"user", line});
    GenerationRequest r;
    r.prompt = engine.tokenize_chat(messages);
    r.max_tokens = p.get_int("-n", 512, 1, std::int64_t{1} << 30);
    r.sampling = sampling;
    r.stop_strings = engine.chat_stop_strings();
    const RequestResult result = engine.generate(std::move(r), [](const TokenEvent& ev) {
      fmt::print("{}", ev.text);
      std::fflush(stdout);
    });
    fmt::print("\n");
    if (result.reason == FinishReason::ContextFull) {
      fmt::print(stderr, "note: {}; the chat ends here\n", result.error);
      break;
    }
    messages.push_back({"assistant", result.text});
  }
  return 0;
}

}  // namespace kvscope::cli
