"""An OpenAI-compatible endpoint (vLLM, llama.cpp's server, Ollama, LM Studio, a hosted API):
where it is, whether data may go there, and one request at a time with timeouts and back-off.

- The address: a base URL ending where the API's paths start (".../v1"). An address that is not
  loopback (127.0.0.0/8, ::1, "localhost") receives topics and documents only with consent
  (`allow_remote`); credentials in the URL are refused (the key comes from an environment
  variable, named by `key_env`, and is read when a request is sent).
- The key never leaves the request header: the `Endpoint` keeps only the variable's name, and any
  text a server sends back is scrubbed of the key before an error quotes it (`scrub`).
- Back-off: 429 and 5xx answers, dropped connections and timeouts are retried up to `retries`
  times, waiting `Retry-After` when the server gives it (seconds or an HTTP date; a wait longer
  than MAX_WAIT is an error saying so), else BACKOFF * 2^attempt seconds with jitter. Other 4xx
  answers are errors at once.
- A request that still fails raises `EndpointError`, one line naming the address and the cause.
"""

from __future__ import annotations

import email.utils
import ipaddress
import json
import os
import random
import threading
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from ..errors import MethodError, TealeavesError, shorten

BACKOFF = 1.0  # seconds before the first retry (doubled at each)
MAX_WAIT = 120.0  # the longest wait between two tries: a longer Retry-After is an error
RETRY_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})


class EndpointError(TealeavesError):
    """The server could not be reached, did not answer in time, or refused a request."""


def is_loopback(host: str) -> bool:
    """True for "localhost" and the loopback addresses (127.0.0.0/8, ::1); a name is not looked up
    (what it resolves to can change between the check and the request)."""
    host = host.strip("[]").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_url(base_url: str) -> tuple[str, bool]:
    """The base URL as it is recorded (no trailing slash) and whether it is remote; one-line
    errors for what is not an http(s) address or carries credentials."""
    if not isinstance(base_url, str) or not base_url.strip():
        raise MethodError("base_url must be the server's address, e.g. http://127.0.0.1:8080/v1")
    parts = urlsplit(base_url.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise MethodError(f"base_url must be an http:// or https:// address, got {shorten(base_url)!r}",
                          options=("base_url",))
    if parts.username is not None or parts.password is not None:
        raise MethodError("base_url must not hold credentials (user:password@); put the key in an "
                          "environment variable and name it with key_env", options=("base_url", "key_env"))
    if parts.fragment:
        raise MethodError(f"base_url must not have a #fragment, got {shorten(base_url)!r}",
                          options=("base_url",))
    url = urlunsplit((parts.scheme, parts.netloc, parts.path.rstrip("/"), parts.query, ""))
    return url, not is_loopback(parts.hostname)


@dataclass
class Endpoint:
    """Where requests go and how they are sent. `key_env` names the environment variable that
    holds the API key (none needed when it is unset or empty: local servers take no key)."""

    base_url: str
    allow_remote: bool = False
    key_env: str | None = "OPENAI_API_KEY"
    timeout: float = 120.0
    connect_timeout: float = 10.0
    retries: int = 4
    max_rps: float | None = None  # requests per second, at most (None: no limit)
    remote: bool = field(init=False)
    _client: Any = field(default=None, init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)
    _next_slot: float = field(default=0.0, init=False, repr=False)
    _stopped: threading.Event = field(default_factory=threading.Event, init=False, repr=False)

    def __post_init__(self) -> None:
        from ..util.limits import check_float, check_int

        self.base_url, self.remote = check_url(self.base_url)
        self.timeout = check_float("timeout", self.timeout, 0, low_open=True)
        self.connect_timeout = check_float("connect_timeout", self.connect_timeout, 0, low_open=True)
        self.retries = check_int("retries", self.retries, 0, 20)
        if self.max_rps is not None:
            self.max_rps = check_float("max_rps", self.max_rps, 0, low_open=True)
        if self.key_env is not None and (not isinstance(self.key_env, str) or not self.key_env.strip()):
            raise MethodError("key_env must name an environment variable (or be None)", options=("key_env",))

    def __getstate__(self) -> dict[str, Any]:
        """Picklable (for worker processes): no connection, lock or event travels."""
        return {k: v for k, v in self.__dict__.items() if k not in ("_client", "_lock", "_stopped")}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state, _client=None, _lock=threading.Lock(), _stopped=threading.Event())

    def check_consent(self, what: str) -> None:
        """Refuse to send `what` to a remote address without `allow_remote`."""
        if self.remote and not self.allow_remote:
            host = urlsplit(self.base_url).hostname
            raise MethodError(f"{what} would be sent to {host}, which is not this machine; pass "
                              "allow_remote=True (CLI --allow-remote) to consent", options=("allow_remote",))

    def _key(self) -> str | None:
        return os.environ.get(self.key_env) or None if self.key_env else None

    def scrub(self, text: str) -> str:
        """`text` with the API key (if any) replaced by ***."""
        key = self._key()
        return text.replace(key, "***") if key else text

    def _http(self) -> Any:
        if self._client is None:
            try:
                import httpx
            except ImportError:
                raise MethodError('LLM judges need httpx: pip install "tealeaves[judge]"') from None
            with self._lock:
                if self._client is None:
                    timeout = httpx.Timeout(self.timeout, connect=self.connect_timeout)
                    self._client = httpx.Client(timeout=timeout, follow_redirects=False,
                                                limits=httpx.Limits(max_keepalive_connections=32))
        return self._client

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    def stop(self) -> None:
        """End the requests in flight (their connections closed) and refuse new ones: what an
        interrupted run does, so that Ctrl-C does not wait for answers."""
        self._stopped.set()
        client, self._client = self._client, None
        if client is not None:
            client.close()

    def restart(self) -> None:
        """Accept requests again after `stop`."""
        self._stopped.clear()

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        key = self._key()
        if key:
            headers["Authorization"] = f"Bearer {key}"
        return headers

    def _pace(self) -> None:
        """Wait for this request's slot under `max_rps`."""
        if self.max_rps is None:
            return
        with self._lock:
            now = time.monotonic()
            slot = max(now, self._next_slot)
            self._next_slot = slot + 1.0 / self.max_rps
        if slot > now:
            time.sleep(slot - now)

    def get(self, path: str) -> dict[str, Any]:
        return self._send("GET", path, None)

    def post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        return self._send("POST", path, body)

    def _send(self, method: str, path: str, body: dict[str, Any] | None) -> dict[str, Any]:
        """One request with retries; the answer's JSON object, or an EndpointError."""
        import httpx

        url = self.base_url + path
        cause = ""
        for attempt in range(self.retries + 1):
            if self._stopped.is_set():
                raise EndpointError(f"{url}: stopped")
            self._pace()
            wait = None
            try:
                r = self._http().request(method, url, headers=self._headers(),
                                         content=None if body is None else json.dumps(body))
            except httpx.TimeoutException:
                cause = f"no answer within {self.timeout:g} s (timeout)"
            except (httpx.TransportError, RuntimeError) as exc:  # RuntimeError: closed by stop()
                if self._stopped.is_set():
                    raise EndpointError(f"{url}: stopped") from None
                cause = f"cannot connect ({_transport(exc)})"
                if attempt == 0 and isinstance(exc, httpx.ConnectError) and path == "/models":
                    break  # nothing listening: say so at once, before any work
            else:
                if r.status_code == 200:
                    return self._json(r, url)
                detail = self.scrub(_detail(r))
                cause = f"HTTP {r.status_code}" + (f": {detail}" if detail else "")
                if r.status_code not in RETRY_STATUS:
                    raise EndpointError(f"{url} refused the request: {cause}")
                wait = retry_after(r.headers.get("Retry-After"))
                if wait is not None and wait > MAX_WAIT and attempt < self.retries:
                    raise EndpointError(f"{url}: {cause}; the server asks to wait {wait:,.0f} s "
                                        f"(Retry-After), more than {MAX_WAIT:g} s: try again later")
            if attempt < self.retries:
                time.sleep(min(MAX_WAIT, wait if wait is not None else
                               BACKOFF * 2 ** attempt * (0.5 + random.random() / 2)))
        tries = f" ({attempt + 1} tr{'y' if attempt == 0 else 'ies'})"
        raise EndpointError(f"{url}: {cause}{tries}")

    def _json(self, r: Any, url: str) -> dict[str, Any]:
        try:
            data = r.json()
        except (ValueError, UnicodeDecodeError):
            raise EndpointError(f"{url} answered with something that is not JSON: "
                                f"{shorten(self.scrub(r.text), 80)!r}") from None
        if not isinstance(data, dict):
            raise EndpointError(f"{url} answered with JSON that is not an object")
        return data


def _transport(exc: Exception) -> str:
    text = str(exc) or type(exc).__name__
    return shorten(text.splitlines()[0] if text else type(exc).__name__, 80)


def _detail(r: Any) -> str:
    """What an error answer says (its JSON error message, or its text), on one line."""
    try:
        data = r.json()
        err = data.get("error", data.get("detail", data)) if isinstance(data, dict) else data
        if isinstance(err, dict):
            err = err.get("message", err)
        text = str(err)
    except (ValueError, UnicodeDecodeError):
        text = r.text
    return shorten(" ".join(text.split()), 120)


def retry_after(value: str | None) -> float | None:
    """Seconds to wait from a Retry-After header (delay seconds or an HTTP date), or None."""
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        if when is None:
            return None
        seconds = when.timestamp() - time.time()
    if seconds != seconds:  # NaN
        return None
    return max(0.0, seconds)


__all__ = ["Endpoint", "EndpointError", "check_url", "is_loopback", "retry_after"]
