"""Before/after figures for #38 item 4: `kvscope-cli serve` under hostile or careless
clients, on loopback. Not a test (serve_hostile_test.py is): it prints what it measured,
one line per figure, so that two builds can be compared.

Usage: serve_hostile_figures.py --cli build/bin/kvscope-cli [--model M.gguf] [--only NAME]
"""
import argparse
import json
import os
import socket
import sys
import threading
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
from serve_support import Server, metric_sum, shared_dir


def rss_mib(pid, field="RssAnon:"):
    """Resident memory of `pid` in MiB: RssAnon (the heap; the weights' mapped file pages
    are RssFile and grow as a model is first used)."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field):
                return int(line.split()[1]) / 1024
    return -1


def read_status(sock, limit_s):
    """(status or None, seconds): the first response line the server sends."""
    t0 = time.monotonic()
    sock.settimeout(limit_s)
    got = b""
    try:
        while b"\r\n" not in got:
            chunk = sock.recv(4096)
            if not chunk:
                break
            got += chunk
    except (socket.timeout, ConnectionResetError):
        pass
    dt = time.monotonic() - t0
    parts = got.split(b" ")
    return (int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else None), dt


def connect(port, source="127.0.0.1"):
    s = socket.socket()
    s.bind((source, 0))
    s.connect(("127.0.0.1", port))
    return s


def health_from(port, source, limit_s):
    s = connect(port, source)
    s.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    status, dt = read_status(s, limit_s)
    s.close()
    return status, dt


def tricklers(srv, n=70, lines=60, period=0.5):
    socks = []
    for i in range(n):
        s = connect(srv.port)
        s.sendall(b"GET /health HTTP/1.1\r\n")
        socks.append(s)
    time.sleep(1.0)
    results = {}

    def probe():
        results["other"] = health_from(srv.port, "127.0.0.2", 60)
        results["same"] = health_from(srv.port, "127.0.0.1", 60)

    t = threading.Thread(target=probe)
    t.start()
    t0 = time.monotonic()
    open_ = set(range(n))
    for k in range(lines):
        for i in list(open_):
            try:
                socks[i].sendall(b"X-Line-%d: y\r\n" % k)
            except OSError:
                open_.discard(i)
        time.sleep(period)
    t.join()
    print(f"tricklers: {n} clients x {lines} header lines every {period}s: /health from "
          f"127.0.0.2 -> {results['other'][0]} after {results['other'][1]:.2f}s; from "
          f"127.0.0.1 -> {results['same'][0]} after {results['same'][1]:.2f}s; "
          f"{n - len(open_)} of {n} cut by the server within {time.monotonic() - t0:.1f}s")
    for s in socks:
        s.close()


def many_headers(srv, n=100000):
    s = connect(srv.port)
    t0 = time.monotonic()
    head = b"GET /health HTTP/1.1\r\nHost: x\r\n" + b"".join(
        b"X-H%d: v\r\n" % i for i in range(n)) + b"\r\n"
    try:
        s.sendall(head)
    except OSError:
        pass
    status, _ = read_status(s, 60)
    print(f"headers: {n} header lines -> status {status} after {time.monotonic() - t0:.2f}s")
    s.close()


def content_length(srv, value):
    s = connect(srv.port)
    s.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json"
              b"\r\nContent-Length: " + value + b"\r\n\r\n{")
    status, dt = read_status(s, 60)
    print(f"content-length {value.decode()}: status {status} after {dt:.2f}s")
    s.close()


def pipelined(srv):
    s = connect(srv.port)
    s.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\nGET /v1/models HTTP/1.1\r\nHost: x\r\n"
              b"\r\n")
    s.settimeout(15)
    got = b""
    t0 = time.monotonic()
    try:
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            got += chunk
            if got.count(b"HTTP/1.1 ") >= 2 and got.endswith(b"}"):
                break
    except socket.timeout:
        pass
    print(f"pipelined: 2 requests on one connection -> {got.count(b'HTTP/1.1 ')} responses "
          f"after {time.monotonic() - t0:.2f}s")
    s.close()


def abandoned(srv, model_id, max_tokens):
    before = srv.metrics()
    body = json.dumps({"model": model_id, "prompt": "Once upon a time", "max_tokens": max_tokens,
                       "temperature": 0.8, "ignore_eos": True}).encode()
    s = connect(srv.port)
    s.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
              b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
    s.close()  # at once: the server has not started generating yet
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        after = srv.metrics()
        if metric_sum(after, "vllm:request_success_total") > metric_sum(
                before, "vllm:request_success_total"):
            break
        time.sleep(0.1)
    tokens = metric_sum(after, "vllm:generation_tokens_total") - metric_sum(
        before, "vllm:generation_tokens_total")
    aborts = metric_sum(after, 'vllm:request_success_total{model_name="%s",finished_reason='
                        '"abort"}' % model_id) - metric_sum(
        before, 'vllm:request_success_total{model_name="%s",finished_reason="abort"}' % model_id)
    print(f"abandoned non-streaming request (max_tokens {max_tokens}): {tokens:.0f} tokens "
          f"generated, {aborts:.0f} aborted")


def large(srv, model_id):
    """The longest pause between two tokens of a running stream while a large request is
    read, and the server's RSS before, at the peak, and after."""
    gaps = []
    stop = threading.Event()

    def stream():
        import http.client
        conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=300)
        while not stop.is_set():
            body = json.dumps({"model": model_id, "prompt": "Once upon a time", "max_tokens": 60,
                               "temperature": 0.8, "stream": True})
            last = time.monotonic()  # the first token's wait counts too
            conn.request("POST", "/v1/completions", body=body,
                         headers={"Content-Type": "application/json"})
            resp = conn.getresponse()
            for line in resp:
                if line.startswith(b"data: {"):
                    now = time.monotonic()
                    gaps.append(now - last)
                    last = now
            resp.read()

    t = threading.Thread(target=stream)
    t.start()
    time.sleep(2)
    rss0 = rss_mib(srv.proc.pid)  # warm: the KV blocks the stream uses are touched by now
    base = max(gaps) if gaps else 0
    gaps.clear()
    peak = [rss0]

    def watch():
        while not stop.is_set():
            peak[0] = max(peak[0], rss_mib(srv.proc.pid))
            time.sleep(0.05)

    w = threading.Thread(target=watch)
    w.start()
    import http.client
    for name, body in [
        ("100000 messages", {"model": model_id, "max_tokens": 4,
                             "messages": [{"role": "user", "content": "hi there"}] * 100000}),
        ("4 MB prompt", {"model": model_id, "max_tokens": 4, "prompt": "Once upon a time " *
                         (4000000 // 17)}),
        ("4 MB one word", {"model": model_id, "max_tokens": 4, "prompt": "a" * 4000000}),
    ]:
        data = json.dumps(body)
        t0 = time.monotonic()
        conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=300)
        conn.request("POST", "/v1/chat/completions" if "messages" in body else "/v1/completions",
                     body=data, headers={"Content-Type": "application/json"})
        resp = conn.getresponse()
        text = resp.read()
        conn.close()
        print(f"large: {name} ({len(data) / 1e6:.1f} MB) -> {resp.status} after "
              f"{time.monotonic() - t0:.2f}s ({text[:90]!r})")
    time.sleep(2)
    stop.set()
    t.join()
    w.join()
    time.sleep(1)
    print(f"large: longest pause between two streamed tokens: {max(gaps):.2f}s (alone "
          f"{base:.2f}s); RssAnon {rss0:.0f} MiB before, {peak[0]:.0f} MiB peak, "
          f"{rss_mib(srv.proc.pid):.0f} MiB after")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli", required=True)
    ap.add_argument("--model", default=os.path.join(shared_dir(), "models", "stories260K.gguf"))
    ap.add_argument("--only", default="")
    ap.add_argument("--max-tokens", type=int, default=400)
    a = ap.parse_args()
    model_id = os.path.splitext(os.path.basename(a.model))[0]
    srv = Server(a.cli, a.model, ["-np", "4"])
    try:
        for name, fn in [("content-length", lambda: [content_length(srv, v) for v in
                                                     (b"-5", b"100000000000000000000000")]),
                         ("headers", lambda: many_headers(srv)),
                         ("pipelined", lambda: pipelined(srv)),
                         ("abandoned", lambda: abandoned(srv, model_id, a.max_tokens)),
                         ("large", lambda: large(srv, model_id)),
                         ("tricklers", lambda: tricklers(srv))]:
            if not a.only or name in a.only.split(","):
                fn()
                sys.stdout.flush()
    finally:
        print(f"exit status {srv.stop()}")


if __name__ == "__main__":
    main()
