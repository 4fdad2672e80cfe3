"""Load figure for `kvscope-cli serve`: requests/s, aggregate generated tokens/s and the p50 /
p99 time to first token at several client counts, streaming chat completions.

  python3 tests/serve/serve_load.py --cli build/bin/kvscope-cli -m MODEL [-t 2] \\
      [--clients 1,4,16] [--requests 4] [--max-tokens 64] [--np 16] [-c 2048]
  python3 tests/serve/serve_load.py --url http://127.0.0.1:8080 ...   (a running server)

Each client sends its requests one after another (a new one when the last ends); prompts
differ per client and request, so prefix sharing helps only with the chat template's head.
Clients are plain http.client connections reading the SSE stream, to keep the client side
light on a small machine. Not a test: it prints figures (also as JSON with --json).
"""
import argparse
import http.client
import json
import statistics
import sys
import threading
import time
import urllib.parse

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from serve_support import Server

TOPICS = ["the sea", "a red fox", "winter", "a lost key", "the moon", "bread", "a river",
          "trains", "a garden", "the wind", "a small robot", "music", "an old map", "rain",
          "a lighthouse", "bees"]


def one_request(host, port, prompt, max_tokens, key):
    """(seconds to first token, seconds in all, tokens generated) of one streamed request."""
    body = json.dumps({"messages": [{"role": "user", "content": prompt}], "stream": True,
                       "max_tokens": max_tokens, "temperature": 0.7, "seed": 1,
                       "stream_options": {"include_usage": True}})
    headers = {"Content-Type": "application/json"}
    if key:
        headers["Authorization"] = "Bearer " + key
    start = time.perf_counter()
    conn = http.client.HTTPConnection(host, port, timeout=600)
    conn.request("POST", "/v1/chat/completions", body=body, headers=headers)
    resp = conn.getresponse()
    if resp.status != 200:
        raise RuntimeError(f"HTTP {resp.status}: {resp.read()[:300]!r}")
    first, tokens = None, 0
    for raw in resp:
        line = raw.decode("utf-8", "replace").strip()
        if not line.startswith("data: ") or line == "data: [DONE]":
            continue
        chunk = json.loads(line[6:])
        if chunk.get("usage"):
            tokens = chunk["usage"]["completion_tokens"]
        for c in chunk.get("choices", []):
            if first is None and c.get("delta", {}).get("content"):
                first = time.perf_counter() - start
    conn.close()
    return first if first is not None else time.perf_counter() - start, \
        time.perf_counter() - start, tokens


def run_level(host, port, clients, requests, max_tokens, key):
    ttfts, tokens, errors = [], [0], []
    lock = threading.Lock()

    def client(i):
        for r in range(requests):
            prompt = f"Write a short poem about {TOPICS[i % len(TOPICS)]} (number {r})."
            try:
                ttft, _, n = one_request(host, port, prompt, max_tokens, key)
            except Exception as e:  # reported, not fatal: the figure says how many failed
                with lock:
                    errors.append(str(e))
                continue
            with lock:
                ttfts.append(ttft)
                tokens[0] += n

    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    seconds = time.perf_counter() - start
    ttfts.sort()

    def pct(p):
        return ttfts[min(len(ttfts) - 1, int(round(p / 100 * (len(ttfts) - 1))))] if ttfts else 0

    return {"clients": clients, "requests": len(ttfts), "failed": len(errors),
            "seconds": seconds, "requests_per_s": len(ttfts) / seconds,
            "tokens_per_s": tokens[0] / seconds, "generated_tokens": tokens[0],
            "ttft_p50_s": pct(50), "ttft_p99_s": pct(99),
            "ttft_mean_s": statistics.mean(ttfts) if ttfts else 0}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli")
    ap.add_argument("-m", "--model")
    ap.add_argument("--url")
    ap.add_argument("-t", "--threads", default="2")
    ap.add_argument("--np", default="16")
    ap.add_argument("-c", "--ctx", default="2048", help="context per sequence (the pool holds "
                    "--np of them)")
    ap.add_argument("--clients", default="1,4,16")
    ap.add_argument("--requests", type=int, default=4, help="requests per client")
    ap.add_argument("--max-tokens", type=int, default=64)
    ap.add_argument("--api-key")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    server = None
    if args.url:
        u = urllib.parse.urlparse(args.url)
        host, port = u.hostname, u.port
    else:
        if not (args.cli and args.model):
            ap.error("give --url, or --cli and -m")
        server = Server(args.cli, args.model, ["-np", args.np, "-c", args.ctx],
                        api_key=args.api_key,
                        threads=args.threads)
        host, port = "127.0.0.1", server.port
    try:
        one_request(host, port, "Warm up.", 4, args.api_key)
        rows = [run_level(host, port, int(c), args.requests, args.max_tokens, args.api_key)
                for c in args.clients.split(",")]
    finally:
        if server:
            server.stop()
    if args.json:
        print(json.dumps(rows, indent=1))
        return
    print(f"{'clients':>7} {'requests':>8} {'failed':>6} {'req/s':>7} {'gen tok/s':>9} "
          f"{'TTFT p50':>9} {'TTFT p99':>9}")
    for r in rows:
        print(f"{r['clients']:>7} {r['requests']:>8} {r['failed']:>6} {r['requests_per_s']:>7.2f} "
              f"{r['tokens_per_s']:>9.1f} {r['ttft_p50_s']:>8.3f}s {r['ttft_p99_s']:>8.3f}s")


if __name__ == "__main__":
    sys.exit(main())
