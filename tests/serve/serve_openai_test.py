"""kvscope-cli serve through the real `openai` Python client and curl, on stories260K (and
SmolLM2 when ../shared has it): chat and completions, streaming, logprobs, stop strings, the
errors (401, 400, 404), greedy output equal to `kvscope-cli run`, 16 concurrent streaming
clients x 20 requests, and a client that disconnects mid-stream.

Loopback only; every wait is bounded; the servers stop at the end.
Usage: serve_openai_test.py --cli build/bin/kvscope-cli [--skip-large] [unittest args]
"""
import argparse
import concurrent.futures
import json
import os
import socket
import subprocess
import sys
import time
import unittest

import openai

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from serve_support import Server, metric_sum, shared_dir

CLI = None
SKIP_LARGE = False
KEY = "test-key-123"
STORIES = os.path.join(shared_dir(), "models", "stories260K.gguf")
SMOLLM2 = os.path.join(shared_dir(), "models", "SmolLM2-135M-Instruct.Q4_1.gguf")
CONTEXT = 256
CLIENTS = 16
REQUESTS_EACH = 20


def cli_greedy(model, prompt, n):
    out = subprocess.run([CLI, "run", "-m", model, "-p", prompt, "-n", str(n), "--temp", "0",
                          "-t", "2", "--json"],
                         capture_output=True, text=True, timeout=120, check=True)
    return json.loads(out.stdout)


def curl(*args):
    out = subprocess.run(["curl", "-sS", "--max-time", "60", "-w", "\n%{http_code}", *args],
                         capture_output=True, text=True, timeout=90)
    body, _, code = out.stdout.rpartition("\n")
    return int(code), body


class StoriesServer(unittest.TestCase):
    server = None

    @classmethod
    def setUpClass(cls):
        if not os.path.exists(STORIES):
            raise unittest.SkipTest(f"{STORIES} is missing")
        # A pool smaller than 16 clients need at once: requests wait or are preempted.
        cls.server = Server(CLI, STORIES, ["-np", str(CLIENTS), "-c", str(CONTEXT),
                                           "--kv-budget", "200KiB", "--max-body", "65536"],
                            api_key=KEY)
        cls.client = openai.OpenAI(base_url=cls.server.base + "/v1", api_key=KEY,
                                   max_retries=0, timeout=120)

    @classmethod
    def tearDownClass(cls):
        if cls.server:
            assert cls.server.stop() == 0, "".join(cls.server.stderr)

    def complete(self, prompt, n=24, **kw):
        return self.client.completions.create(model="stories260K", prompt=prompt, max_tokens=n,
                                              temperature=0, **kw)

    def test_models_and_health(self):
        models = self.client.models.list()
        self.assertEqual([m.id for m in models.data], ["stories260K"])
        status, body = self.server.request("GET", "/health", key=False)
        self.assertEqual((status, body), (200, {"status": "ok"}))

    def test_greedy_completion_equals_kvscope_cli_run(self):
        prompt = "Once upon a time"
        ref = cli_greedy(STORIES, prompt, 40)
        got = self.complete(prompt, n=40)
        self.assertEqual(got.choices[0].text, ref["text"])
        self.assertEqual(got.usage.prompt_tokens, len(ref["prompt_ids"]))
        self.assertEqual(got.usage.completion_tokens, len(ref["generated_ids"]))
        self.assertEqual(got.choices[0].finish_reason, "length")

    def test_chat_completion_and_its_stream_agree(self):
        messages = [{"role": "user", "content": "Tell me about a cat."}]
        whole = self.client.chat.completions.create(model="stories260K", messages=messages,
                                                    max_tokens=20, temperature=0)
        text = whole.choices[0].message.content
        self.assertTrue(text)
        self.assertEqual(whole.choices[0].message.role, "assistant")
        stream = self.client.chat.completions.create(
            model="stories260K", messages=messages, max_tokens=20, temperature=0, stream=True,
            stream_options={"include_usage": True})
        pieces, finish, usage = [], None, None
        for chunk in stream:
            if chunk.usage:
                usage = chunk.usage
            for c in chunk.choices:
                pieces.append(c.delta.content or "")
                finish = c.finish_reason or finish
        self.assertEqual("".join(pieces), text)
        self.assertEqual(finish, whole.choices[0].finish_reason)
        self.assertEqual(usage.completion_tokens, whole.usage.completion_tokens)

    def test_logprobs(self):
        got = self.client.chat.completions.create(
            model="stories260K", messages=[{"role": "user", "content": "Hi"}], max_tokens=8,
            temperature=0, logprobs=True, top_logprobs=3)
        content = got.choices[0].logprobs.content
        self.assertEqual(len(content), got.usage.completion_tokens)
        for entry in content:
            self.assertLessEqual(entry.logprob, 0.0)
            self.assertEqual(len(entry.top_logprobs), 3)
            # greedy: the chosen token is the most likely one
            self.assertEqual(entry.top_logprobs[0].token, entry.token)
            self.assertAlmostEqual(entry.top_logprobs[0].logprob, entry.logprob, places=5)
            self.assertGreaterEqual(entry.top_logprobs[0].logprob, entry.top_logprobs[1].logprob)
        comp = self.complete("Once upon a time", n=5, logprobs=2)
        self.assertEqual(len(comp.choices[0].logprobs.tokens), 5)
        self.assertEqual(len(comp.choices[0].logprobs.top_logprobs[0]), 2)

    def test_stop_string_ends_before_it(self):
        full = self.complete("Once upon a time", n=40).choices[0].text
        stop = "Lily"  # the greedy story names her
        self.assertIn(stop, full)
        got = self.complete("Once upon a time", n=40, stop=[stop, "zzz"])
        self.assertEqual(got.choices[0].text, full[:full.index(stop)])
        self.assertEqual(got.choices[0].finish_reason, "stop")

    def test_sampling_with_a_seed_repeats(self):
        kw = dict(temperature=0.9, top_p=0.9, seed=7,
                  extra_body={"top_k": 20, "min_p": 0.05, "repetition_penalty": 1.1},
                  presence_penalty=0.5, frequency_penalty=0.2)
        a = self.client.completions.create(model="stories260K", prompt="The dog", max_tokens=16,
                                           **kw)
        b = self.client.completions.create(model="stories260K", prompt="The dog", max_tokens=16,
                                           **kw)
        self.assertEqual(a.choices[0].text, b.choices[0].text)

    def test_an_ended_requests_cache_is_shared_by_the_next_with_its_prompt(self):
        prompt = "The little bird sang a song about the big green tree"
        before = self.server.metrics()
        first = self.complete(prompt, n=4)
        second = self.complete(prompt, n=4)
        after = self.server.metrics()
        self.assertEqual(first.choices[0].text, second.choices[0].text)
        hits = metric_sum(after, "vllm:prefix_cache_hits_total") - metric_sum(
            before, "vllm:prefix_cache_hits_total")
        # all of the prompt but its last token, which is run again for the logits
        self.assertGreaterEqual(hits, second.usage.prompt_tokens - 1)

    def test_wrong_or_missing_key_is_401(self):
        bad = openai.OpenAI(base_url=self.server.base + "/v1", api_key="nope", max_retries=0)
        with self.assertRaises(openai.AuthenticationError):
            bad.models.list()
        code, body = curl(self.server.base + "/v1/models")
        self.assertEqual(code, 401)
        self.assertEqual(json.loads(body)["error"]["type"], "authentication_error")

    def test_bad_json_types_and_lengths_are_400(self):
        code, body = curl("-H", "Authorization: Bearer " + KEY, "-H",
                          "Content-Type: application/json", "-d", '{"messages": [',
                          self.server.base + "/v1/chat/completions")
        self.assertEqual(code, 400)
        self.assertIn("not valid JSON", json.loads(body)["error"]["message"])
        with self.assertRaises(openai.BadRequestError) as e:
            self.client.chat.completions.create(
                model="stories260K", messages=[{"role": "user", "content": "x"}],
                temperature="hot")
        self.assertEqual(e.exception.body["param"], "temperature")
        with self.assertRaises(openai.BadRequestError) as e:
            self.complete("Once upon a time " * 100)
        self.assertIn(f"context is {CONTEXT} tokens", e.exception.body["message"])
        status, body = self.server.request("POST", "/v1/completions",
                                           raw="[" * 30000 + "]" * 30000)
        self.assertEqual(status, 400)
        status, body = self.server.request("POST", "/v1/completions",
                                           raw=json.dumps({"prompt": "x" * 100000}))
        self.assertEqual(status, 413)

    def test_unknown_model_is_404(self):
        with self.assertRaises(openai.NotFoundError) as e:
            self.client.chat.completions.create(
                model="gpt-4o", messages=[{"role": "user", "content": "x"}])
        self.assertIn("stories260K", e.exception.body["message"])

    def test_tokenize_and_detokenize(self):
        status, tok = self.server.request("POST", "/tokenize", {"content": "Once upon a time"})
        self.assertEqual(status, 200)
        self.assertEqual(tok["tokens"], cli_greedy(STORIES, "Once upon a time", 1)["prompt_ids"])
        status, detok = self.server.request("POST", "/detokenize", {"tokens": tok["tokens"][1:]})
        self.assertEqual((status, detok["content"].strip()), (200, "Once upon a time"))
        status, err = self.server.request("POST", "/detokenize", {"tokens": [1, 999999]})
        self.assertEqual(status, 400)
        self.assertIn("999999", err["error"]["message"])

    def test_zz_many_streaming_clients_then_a_disconnect(self):
        # (named to run last: the counters and the cache are checked as a whole)
        prompts = [f"Once upon a time, there was a {w}" for w in
                   ["dog", "cat", "bird", "fish", "frog", "king", "girl", "boy", "tree", "car",
                    "ball", "sun", "moon", "cake", "bear", "duck"]]
        want = {p: self.complete(p, n=24).choices[0].text for p in prompts}
        before = self.server.metrics()

        def client_run(prompt):
            client = openai.OpenAI(base_url=self.server.base + "/v1", api_key=KEY,
                                   max_retries=0, timeout=300)
            texts, tokens = [], 0
            for _ in range(REQUESTS_EACH):
                stream = client.completions.create(
                    model="stories260K", prompt=prompt, max_tokens=24, temperature=0,
                    stream=True, stream_options={"include_usage": True})
                text = ""
                for chunk in stream:
                    if chunk.usage:
                        tokens += chunk.usage.completion_tokens
                    for c in chunk.choices:
                        text += c.text
                texts.append(text)
            return prompt, texts, tokens

        with concurrent.futures.ThreadPoolExecutor(CLIENTS) as pool:
            results = list(pool.map(client_run, prompts))
        generated = 0
        for prompt, texts, tokens in results:
            generated += tokens
            for text in texts:
                self.assertEqual(text, want[prompt], prompt)
        after = self.server.metrics()
        n = CLIENTS * REQUESTS_EACH
        finished = metric_sum(after, "vllm:request_success_total") - metric_sum(
            before, "vllm:request_success_total")
        self.assertEqual(finished, n)
        self.assertEqual(metric_sum(after, "vllm:generation_tokens_total")
                         - metric_sum(before, "vllm:generation_tokens_total"), generated)
        self.assertEqual(metric_sum(after, "vllm:time_to_first_token_seconds_count")
                         - metric_sum(before, "vllm:time_to_first_token_seconds_count"), n)
        print(f"\nload: {n} requests, preemptions so far "
              f"{metric_sum(after, 'vllm:num_preemptions_total'):.0f}", file=sys.stderr)
        snap = self.server.snapshot()
        self.assertEqual(snap["scheduler"]["running"], 0)
        self.assertEqual(snap["scheduler"]["waiting"], 0)
        # Whatever is still cached belongs to kept prefixes, and goes when they are released.
        self.assertEqual(len(snap["sequences"]), snap["scheduler"]["kept_prefixes"])
        status, released = self.server.request("POST", "/v1/kvscope/release_prefixes")
        self.assertEqual((status, released["blocks_in_use"]), (200, 0))

        self.disconnect_mid_stream(after)

    def disconnect_mid_stream(self, before):
        body = json.dumps({"model": "stories260K", "prompt": "Once upon a time",
                           "max_tokens": 200, "temperature": 0.8, "stream": True,
                           "extra": "x"}).encode()
        sock = socket.create_connection(("127.0.0.1", self.server.port), timeout=60)
        sock.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\n"
                     b"Authorization: Bearer " + KEY.encode() + b"\r\n"
                     b"Content-Type: application/json\r\nContent-Length: "
                     + str(len(body)).encode() + b"\r\n\r\n" + body)
        got = b""
        while got.count(b"data: ") < 3:
            chunk = sock.recv(4096)
            self.assertTrue(chunk, "the server closed the stream early")
            got += chunk
        # The snapshot names the request's sequence ("API #n" is the n of its id cmpl-n).
        n = int(got.split(b'"id":"cmpl-')[1].split(b'"')[0])
        live = {r["api"]: r for r in self.server.snapshot()["api_requests"]}
        self.assertIn(n, live)
        seq = live[n]["sequence"]
        self.assertGreater(seq, 0)
        sock.close()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            snap = self.server.snapshot()
            if snap["scheduler"]["running"] == 0 and snap["n_used"] == 0:
                break
            time.sleep(0.05)
        self.assertNotIn(seq, [q["id"] for q in snap["sequences"]])
        self.assertEqual(snap["api_requests"], [])
        self.assertEqual(snap["scheduler"]["running"], 0)
        self.assertEqual(snap["n_used"], 0)  # cancelled: its kept cache is given back too
        after = self.server.metrics()
        self.assertEqual(metric_sum(after, 'vllm:request_success_total{model_name="stories260K",'
                                           'finished_reason="abort"}')
                         - metric_sum(before, 'vllm:request_success_total{model_name='
                                              '"stories260K",finished_reason="abort"}'), 1)


class SmolLM2Server(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not os.path.exists(SMOLLM2):
            raise unittest.SkipTest(f"{SMOLLM2} is missing")
        if SKIP_LARGE:
            raise unittest.SkipTest("--skip-large (a sanitizer build: stories260K only)")
        cls.server = Server(CLI, SMOLLM2, ["-np", "4", "-c", "512"])
        cls.client = openai.OpenAI(base_url=cls.server.base + "/v1", api_key="unused",
                                   max_retries=0, timeout=300)

    @classmethod
    def tearDownClass(cls):
        assert cls.server.stop() == 0, "".join(cls.server.stderr)

    def test_greedy_completion_equals_kvscope_cli_run(self):
        prompt = "The capital of France is"
        ref = cli_greedy(SMOLLM2, prompt, 12)
        got = self.client.completions.create(model="SmolLM2-135M-Instruct.Q4_1", prompt=prompt,
                                             max_tokens=12, temperature=0)
        self.assertEqual(got.choices[0].text, ref["text"])

    def test_chat_streams_an_answer_in_the_template(self):
        stream = self.client.chat.completions.create(
            model="SmolLM2-135M-Instruct.Q4_1", max_tokens=16, temperature=0, stream=True,
            messages=[{"role": "user", "content": "What is 2 + 2?"}])
        text = "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
        self.assertTrue(text.strip())
        self.assertNotIn("<|im_end|>", text)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--cli", required=True)
    parser.add_argument("--skip-large", action="store_true", help="stories260K only")
    args, rest = parser.parse_known_args()
    CLI = args.cli
    SKIP_LARGE = args.skip_large
    unittest.main(argv=[sys.argv[0], *rest], verbosity=2)
