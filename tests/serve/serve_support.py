"""Starts `kvscope-cli serve` on a free loopback port for a test and stops it again.

The server prints "listening on http://HOST:PORT" once it accepts connections; every wait
here is bounded, and the process is killed if it does not stop when asked.
"""
import http.client
import json
import os
import re
import subprocess
import threading
import time


class Server:
    def __init__(self, cli, model, extra_args=(), api_key=None, threads="2"):
        self.api_key = api_key
        args = [cli, "serve", "-m", model, "--port", "0", "-t", str(threads), *extra_args]
        if api_key:
            args += ["--api-key", api_key]
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True)
        self.stderr = []
        threading.Thread(target=self._drain_stderr, daemon=True).start()
        self.port = self._wait_for_port(timeout=120)
        self.base = f"http://127.0.0.1:{self.port}"

    def _drain_stderr(self):
        for line in self.proc.stderr:
            self.stderr.append(line)

    def _wait_for_port(self, timeout):
        found = {}

        def read():
            for line in self.proc.stdout:
                m = re.search(r"listening on http://[^:]+:(\d+)", line)
                if m:
                    found["port"] = int(m.group(1))
                    return

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        reader.join(timeout)
        if "port" not in found:
            self.stop()
            raise RuntimeError("kvscope-cli serve did not start: " + "".join(self.stderr))
        # Keep reading stdout so the server never blocks on a full pipe.
        threading.Thread(target=lambda: [None for _ in self.proc.stdout], daemon=True).start()
        return found["port"]

    def headers(self, key=True):
        h = {"Content-Type": "application/json"}
        if key and self.api_key:
            h["Authorization"] = "Bearer " + self.api_key
        return h

    def request(self, method, path, body=None, key=True, raw=None, timeout=120):
        """(status, parsed JSON or text) of one request on a fresh connection."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        data = raw if raw is not None else (json.dumps(body) if body is not None else None)
        conn.request(method, path, body=data, headers=self.headers(key))
        resp = conn.getresponse()
        text = resp.read().decode("utf-8", "replace")
        conn.close()
        ctype = resp.getheader("Content-Type", "")
        return resp.status, (json.loads(text) if "json" in ctype else text)

    def metrics(self):
        status, text = self.request("GET", "/metrics")
        assert status == 200, text
        values = {}
        for line in text.splitlines():
            if line.startswith("#") or not line.strip():
                continue
            name, value = line.rsplit(" ", 1)
            values[name] = float(value)
        return values

    def snapshot(self):
        status, snap = self.request("GET", "/v1/kvscope/snapshot")
        assert status == 200, snap
        return snap

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=30)
        return self.proc.returncode


def metric_sum(values, prefix):
    """Sum of every series whose name (with labels) starts with prefix."""
    return sum(v for k, v in values.items() if k.startswith(prefix))


def shared_dir():
    here = os.path.dirname(os.path.abspath(__file__))
    return os.environ.get("KVSCOPE_SHARED_DIR", os.path.join(here, "..", "..", "..", "shared"))
