// What every Engine and scheduler test on the real model starts from: the generation
// fixtures (engines with a small context, greedy requests, the recorder, solo outputs:
// support/generation_fixtures.h), the shared-data lookup, and their names brought into
// namespace kvscope so that a test's own anonymous namespace uses them unqualified.
#pragma once

#include "run/engine.h"
#include "support/generation_fixtures.h"
#include "support/test_data.h"

namespace kvscope {

using test::greedy_request;
using test::pool_of;
using test::record_into;
using test::Recorded;
using test::run_bounded;
using test::small_options;
using test::solo_run;
using test::story_prompts;

}  // namespace kvscope
