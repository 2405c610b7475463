"""A tiny language model the tests write themselves, and llama.cpp's OpenAI-compatible server
(`python -m llama_cpp.server`, from PyPI's llama-cpp-python) started on it: no model download.

The model is a GGUF file of the llama architecture written with the `gguf` package: a
SentencePiece-style vocabulary (the special tokens, the 256 byte tokens every text falls back to,
digits and a few letters, with and without the word-start mark), a chat template in its metadata,
and one transformer block.

Two kinds of weights:
- `designed`: every embedding is the same vector (c, 0, ..., 0) and the block's weights are zero,
  so the residual stream at every position is that vector; RMS normalisation makes it
  (sqrt(n_embd), 0, ..., 0), and the output matrix's first column is `logit / sqrt(n_embd)`. The
  next-token distribution is then softmax(`logits`) at every position, whatever the prompt: the
  tests know the exact distribution the server must report and sample from.
- `random`: Gaussian weights (seeded), whose free text is what a model that ignores the
  instructions writes: malformed answers.
- `noisy`: the designed model's logits (every digit alike, `NOISY_LOGITS`) moved by the prompt's
  letters: uniform attention carries the mean of the letters' random vectors to the last position,
  which the digits' output rows read through random weights of scale `noise` (seeded). A judge
  whose answers are well-formed and differ from topic to topic but know nothing of topics: its
  agreement with people is chance.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping
from pathlib import Path

import numpy as np

N_EMBD = 32
N_HEAD = 4
N_FF = 64
N_CTX = 8192  # ProxAnn's prompts (seven documents of up to 1,000 characters) fit

SPECIAL = ["<unk>", "<s>", "</s>"]
WORD_START = "\u2581"  # SentencePiece's mark of a word's start (a space before it)
PIECES = (
    [str(d) for d in range(10)]
    + [WORD_START + str(d) for d in range(10)]
    + list("abcdefghijklmnopqrstuvwxyz")
    + [WORD_START + c for c in "abcdefghijklmnopqrstuvwxyz"]
    + [WORD_START, ",", "\n"]
)
# role markers and the end of a turn, written as plain text the byte tokens spell out
CHAT_TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|>\n{{ m['content'] }}</s>\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>\n{% endif %}"
)

# The designed model's next-token logits (every other token: OTHER): the digit answers, one of
# them also as a word-start piece, a letter that is no answer, and the end of text.
DESIGNED_LOGITS = {"2": 1.0, WORD_START + "2": 0.5, "1": 0.7, "3": 0.0, "4": -0.5, "5": -1.0,
                   "a": 0.2, "</s>": -0.3}
OTHER = -25.0
NOISY_LOGITS = {**{str(d): 0.0 for d in range(1, 10)}, "</s>": -1.0}
LETTERS = {"a": 1.0, "b": 0.5, "</s>": 0.0}  # never a digit first: a judge that answers nothing
# for sampling: a reply is "d" then the end of text with probability q_d * P(end), a quarter of
# replies well-formed; answers far from uniform, so that reading them wrongly shows
SAMPLER = {"1": -2.0, "2": 2.0, "3": 0.0, "</s>": 2.0}


def judge_models(folder: str | os.PathLike) -> dict[str, Path]:
    """The models the judge's server tests serve (tests/conftest.py, `gguf_models`)."""
    d = Path(folder)
    return {"designed": write_model(d / "designed.gguf"),
            "random": write_model(d / "random.gguf", kind="random", seed=3),
            "letters": write_model(d / "letters.gguf", logits=LETTERS),
            "sampler": write_model(d / "sampler.gguf", logits=SAMPLER),
            "noisy": write_model(d / "noisy.gguf", kind="noisy", seed=5, noise=2.0)}


def vocabulary() -> list[str]:
    """The model's tokens in id order."""
    return SPECIAL + [f"<0x{b:02X}>" for b in range(256)] + PIECES


def token_text(token: str) -> str:
    """The text a token stands for (a byte token's byte, the word-start mark as a space)."""
    if token.startswith("<0x") and len(token) == 6:
        return chr(int(token[3:5], 16))
    return token.replace(WORD_START, " ")


def logit_vector(logits: Mapping[str, float]) -> np.ndarray:
    """The full logit vector of the designed model: `logits` by token, OTHER elsewhere."""
    vocab = vocabulary()
    out = np.full(len(vocab), OTHER)
    for tok, value in logits.items():
        out[vocab.index(tok)] = value
    return out


def write_model(path: str | os.PathLike, kind: str = "designed", logits: Mapping[str, float] | None = None,
                seed: int = 0, noise: float = 4.0) -> Path:
    """Write the tiny model to `path` (a .gguf file) and return the path."""
    import gguf

    vocab = vocabulary()
    n_vocab = len(vocab)
    w = gguf.GGUFWriter(os.fspath(path), "llama")
    w.add_name(f"tealeaves-tiny-{kind}")
    w.add_context_length(N_CTX)
    w.add_embedding_length(N_EMBD)
    w.add_block_count(1)
    w.add_feed_forward_length(N_FF)
    w.add_head_count(N_HEAD)
    w.add_head_count_kv(N_HEAD)
    w.add_rope_dimension_count(N_EMBD // N_HEAD)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_file_type(gguf.LlamaFileType.ALL_F32)
    w.add_tokenizer_model("llama")
    w.add_token_list(vocab)
    scores = [0.0] * len(SPECIAL) + [0.0] * 256 + [-float(len(p)) for p in PIECES]
    w.add_token_scores(scores)
    types = ([gguf.TokenType.UNKNOWN, gguf.TokenType.CONTROL, gguf.TokenType.CONTROL]
             + [gguf.TokenType.BYTE] * 256 + [gguf.TokenType.NORMAL] * len(PIECES))
    w.add_token_types(types)
    w.add_unk_token_id(0)
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    w.add_add_bos_token(True)
    w.add_add_eos_token(False)
    w.add_chat_template(CHAT_TEMPLATE)

    f32 = np.float32
    if kind == "designed":
        embd = np.zeros((n_vocab, N_EMBD), f32)
        embd[:, 0] = 100.0  # RMS-normalised to sqrt(N_EMBD) at every position
        out = np.zeros((n_vocab, N_EMBD), f32)
        out[:, 0] = logit_vector(DESIGNED_LOGITS if logits is None else logits) / np.sqrt(N_EMBD)

        def block(shape: tuple[int, int]) -> np.ndarray:
            return np.zeros(shape, f32)
    elif kind == "random":
        rng = np.random.default_rng(seed)
        embd = rng.normal(0, 1, (n_vocab, N_EMBD)).astype(f32)
        out = rng.normal(0, 1, (n_vocab, N_EMBD)).astype(f32)

        def block(shape: tuple[int, int]) -> np.ndarray:
            return rng.normal(0, 1 / np.sqrt(shape[1]), shape).astype(f32)
    elif kind == "noisy":
        # every token: B in dimension 0; letters also a random vector in the others. Attention is
        # uniform (zero queries and keys) and carries those vectors (values: the identity but for
        # dimension 0), so the last position holds B and the mean letter vector of the prompt; the
        # digits' output rows read that mean through random weights of scale `noise`
        rng = np.random.default_rng(seed)
        embd = np.zeros((n_vocab, N_EMBD), f32)
        embd[:, 0] = 10.0
        bare = [t.lstrip(WORD_START) for t in vocab]
        letters = [i for i, t in enumerate(bare) if len(t) == 1 and t.isalpha()]
        embd[letters, 1:] = rng.normal(0, 1, (len(letters), N_EMBD - 1))
        base = logit_vector(NOISY_LOGITS if logits is None else logits)
        out = np.zeros((n_vocab, N_EMBD), f32)
        out[:, 0] = base / np.sqrt(N_EMBD)
        answers = base > OTHER
        out[answers, 1:] = rng.normal(0, noise, (int(answers.sum()), N_EMBD - 1))
        values = np.eye(N_EMBD, dtype=f32)
        values[0, 0] = 0.0
        fixed = {"attn_v": values, "attn_output": np.eye(N_EMBD, dtype=f32)}

        def block(shape: tuple[int, int], name: str = "") -> np.ndarray:
            return fixed.get(name, np.zeros(shape, f32))
    else:
        raise ValueError(f"kind must be 'designed', 'random' or 'noisy', got {kind!r}")
    w.add_tensor("token_embd.weight", embd)
    w.add_tensor("output_norm.weight", np.ones(N_EMBD, f32))
    w.add_tensor("output.weight", out)
    w.add_tensor("blk.0.attn_norm.weight", np.ones(N_EMBD, f32))
    for name in ("attn_q", "attn_k", "attn_v", "attn_output"):
        w.add_tensor(f"blk.0.{name}.weight", block((N_EMBD, N_EMBD), name) if kind == "noisy" else
                     block((N_EMBD, N_EMBD)))
    w.add_tensor("blk.0.ffn_norm.weight", np.ones(N_EMBD, f32))
    w.add_tensor("blk.0.ffn_gate.weight", block((N_FF, N_EMBD)))
    w.add_tensor("blk.0.ffn_up.weight", block((N_FF, N_EMBD)))
    w.add_tensor("blk.0.ffn_down.weight", block((N_EMBD, N_FF)))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return Path(path)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_listening(port: int, proc: subprocess.Popen, timeout: float, log: Path,
                   api_key: str | None = None) -> None:
    """Wait (at most `timeout` seconds) until the server answers /v1/models."""
    import httpx

    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"llama.cpp server exited ({proc.returncode}):\n{log.read_text()[-3000:]}")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/v1/models", timeout=2, headers=headers).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"llama.cpp server did not answer within {timeout:.0f} s:\n{log.read_text()[-3000:]}")


class Server:
    """A running llama.cpp server: its process, port, base URL and log."""

    def __init__(self, proc: subprocess.Popen, port: int, log: Path) -> None:
        self.proc, self.port, self.log = proc, port, log
        self.url = f"http://127.0.0.1:{port}/v1"


def start_server(models: Mapping[str, str | os.PathLike], port: int | None = None, timeout: float = 120.0,
                 api_key: str | None = None) -> Server:
    """llama.cpp's OpenAI-compatible server (`python -m llama_cpp.server`) on a loopback port
    (free, unless given) serving `models` ({alias: gguf path}), answering within `timeout` s."""
    port = free_port() if port is None else port
    tmp = Path(tempfile.mkdtemp(prefix="tl-llama-"))
    config = {
        "host": "127.0.0.1",
        "port": port,
        "models": [{"model": os.fspath(p), "model_alias": alias, "n_ctx": N_CTX, "n_threads": 1,
                    "n_batch": 512, "verbose": False} for alias, p in models.items()],
    }
    if api_key is not None:
        config["api_key"] = api_key
    (tmp / "config.json").write_text(json.dumps(config))
    log = tmp / "server.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "llama_cpp.server", "--config_file",
                                 str(tmp / "config.json")], stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)
    try:
        wait_listening(port, proc, timeout, log, api_key)
    except BaseException:
        stop(proc)
        raise
    return Server(proc, port, log)


@contextlib.contextmanager
def llama_server(models: Mapping[str, str | os.PathLike], **kw: object) -> Iterator[Server]:
    """`start_server`, stopped (SIGTERM, then SIGKILL) on exit."""
    server = start_server(models, **kw)
    try:
        yield server
    finally:
        stop(server.proc)


@contextlib.contextmanager
def silent_server() -> Iterator[str]:
    """A TCP server on loopback that accepts connections and never answers (a server that is
    slow); yields its base URL. A test harness, not an OpenAI server."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    held: list[socket.socket] = []
    done = threading.Event()

    def accept() -> None:
        sock.settimeout(0.2)
        while not done.is_set():
            try:
                conn, _ = sock.accept()
                held.append(conn)
            except OSError:
                continue

    t = threading.Thread(target=accept, daemon=True)
    t.start()
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}/v1"
    finally:
        done.set()
        t.join(5)
        for c in held:
            c.close()
        sock.close()


@contextlib.contextmanager
def fault_proxy(upstream: str, faults: list[str]) -> Iterator[tuple[str, list[str]]]:
    """A reverse proxy on loopback in front of the real server: request i gets `faults[i]` when
    there is one ("429" with Retry-After: 0, "503", "500", "not-json", "no-logprobs": the real
    answer with its log-probabilities removed), else the real answer. Yields (base URL, the list of
    paths requested). A test harness, minimal on purpose."""
    import http.server

    import httpx

    seen: list[str] = []
    lock = threading.Lock()

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def _reply(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
            self.send_response(status)
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _forward(self, method: str) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            path = self.path.split("/v1", 1)[-1]
            with lock:
                seen.append(path)
                fault = faults[len(seen) - 1] if len(seen) <= len(faults) else ""
            if fault == "429":
                return self._reply(429, b'{"error": {"message": "slow down"}}', {"Retry-After": "0"})
            if fault in ("500", "503"):
                return self._reply(int(fault), b'{"error": {"message": "busy"}}')
            r = httpx.request(method, upstream + path, content=body or None,
                              headers={"Content-Type": "application/json"}, timeout=60)
            data = r.content
            if fault == "not-json":
                data = b"<html>gateway</html>"
            elif fault == "no-logprobs" and r.status_code == 200:
                doc = json.loads(data)
                for c in doc.get("choices", []):
                    c["logprobs"] = None
                data = json.dumps(doc).encode()
            self._reply(r.status_code, data)

        def do_GET(self) -> None:
            self._forward("GET")

        def do_POST(self) -> None:
            self._forward("POST")

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    t = threading.Thread(target=httpd.serve_forever, daemon=True)
    t.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/v1", seen
    finally:
        httpd.shutdown()
        httpd.server_close()
        t.join(5)


def stop(proc: subprocess.Popen) -> None:
    """End the server process (its own session) and wait for it."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)
