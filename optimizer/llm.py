"""Access to a language model through any OpenAI-compatible chat-completions endpoint (docs/tuning.md, §6).

Hosted services and local servers (llama.cpp's server, vLLM, Ollama...) work alike: mapperopt talks to them with
the `openai` client, with its own endpoint, model, key, timeout and retry settings, never through LiteLLM's
configuration. Settings come from options or the environment:

| setting | option | environment variable | default |
|---|---|---|---|
| endpoint | `--llm-base-url` | `MAPPEROPT_LLM_BASE_URL` | the OpenAI API when only a model is given |
| model | `--llm-model` | `MAPPEROPT_LLM_MODEL` | `gpt-4o` (the paper's) |
| key | `--llm-api-key` | `MAPPEROPT_LLM_API_KEY` | `OPENAI_API_KEY`, else a placeholder (local servers need none) |
| timeout | `--llm-timeout` | `MAPPEROPT_LLM_TIMEOUT` | 120 s per request (its whole wall time) |
| retries | `--llm-retries` | `MAPPEROPT_LLM_RETRIES` | 3, with exponential back-off from 1 s |
| model time per iteration | `--llm-cap` | `MAPPEROPT_LLM_CAP` | 300 s (requests and back-off waits) |

An endpoint is *configured* when a base URL or a model is given; otherwise the offline optimizer is the default.
The key is never written to any file.

Endpoint faults — a timeout, a refused connection, HTTP 408/409/429/5xx, a reply that is not a chat completion
(e.g. a 200 with an HTML page or cut-off JSON) — are retried with back-off; they never use up a tuning iteration.
When the retries or the per-iteration cap are used up, `ModelError` stops the tuning run (the journal keeps every
finished iteration). HTTP 401/403 (the key) and 404 (the model) cannot get better: `ModelError` at once. Other HTTP
errors (400 bad request) are not retried.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import os
import time
import urllib.parse
from dataclasses import dataclass
from typing import Any, Coroutine

from mapperopt.errors import MapperoptError

ENV = {"base_url": "MAPPEROPT_LLM_BASE_URL", "model": "MAPPEROPT_LLM_MODEL", "api_key": "MAPPEROPT_LLM_API_KEY",
       "timeout_s": "MAPPEROPT_LLM_TIMEOUT", "max_retries": "MAPPEROPT_LLM_RETRIES",
       "max_model_s": "MAPPEROPT_LLM_CAP"}
OPTIONS = {"base_url": "llm-base-url", "model": "llm-model", "api_key": "llm-api-key", "timeout_s": "llm-timeout",
           "max_retries": "llm-retries", "max_model_s": "llm-cap"}  # `tune`'s options
BACKOFF_S = 1.0       # the first wait before a retry; doubled each time...
MAX_BACKOFF_S = 30.0  # ...up to this
RETRIED_STATUS = (408, 409, 429)  # and every 5xx
# HTTP errors no retry or later iteration can overcome (`fatal_hint` says how to fix each).
FATAL_STATUS = (401, 403, 404)
OPENAI_KEY = "OPENAI_API_KEY"  # the openai library's own variable: the key when mapperopt's is not set
DEFAULT_MODEL = "gpt-4o"
# Either variable configures an endpoint (`LLMConfig.configured`).
CONFIGURE = f"{ENV['base_url']} or {ENV['model']} (either will do: a model alone means OpenAI's API)"
PLACEHOLDER_KEY = "not-needed"


@dataclass(frozen=True)
class LLMConfig:
    """Where and how to reach the model.

    Attributes:
        base_url: the endpoint's base URL (ending in `/v1` for most servers), or None for the OpenAI API.
        model: the model name sent with each request.
        api_key: the key, or None (a placeholder is sent: local servers need none).
        key_from: where the key came from (`--llm-api-key`, `MAPPEROPT_LLM_API_KEY` or `OPENAI_API_KEY`), or None.
        timeout_s: seconds before one request is abandoned.
        max_retries: retries of a request after an endpoint fault (see the module), with exponential back-off.
        max_model_s: seconds of model time (requests and waits) one iteration may use.
    """

    base_url: str | None = None
    model: str | None = None
    api_key: str | None = None
    key_from: str | None = None
    timeout_s: float = 120.0
    max_retries: int = 3
    max_model_s: float = 300.0

    @property
    def configured(self) -> bool:
        return bool(self.base_url or self.model)

    @property
    def key_note(self) -> str:
        """Where the key sent comes from, never the key: OPENAI_API_KEY goes to any endpoint configured."""
        return f"key from {self.key_from}" if self.key_from else "no key: a placeholder is sent"

    @classmethod
    def from_env(cls, **overrides: Any) -> LLMConfig:
        """Options given (not None) win over the environment variables of `ENV`.

        Raises:
            MapperoptError: a timeout or cap that is not a positive finite number, a retry count that is not a whole
                number of 0 or more, a base URL that is not an http(s) URL (the error names the variable or option).
        """
        values: dict[str, Any] = {}
        source: dict[str, str] = {}  # how the error names each setting: the variable, or the option given
        for name, var in ENV.items():
            value = overrides.get(name)
            values[name] = value if value is not None else (os.environ.get(var) or None)
            source[name] = var if value is None else f"--{OPTIONS[name]}"
        numbers: dict[str, Any] = {}
        for name, kind in (("timeout_s", float), ("max_retries", int), ("max_model_s", float)):
            if values[name] is None:
                numbers[name] = getattr(cls, name)
                continue
            unit = "a whole number of 0 or more" if kind is int else "a positive, finite number of seconds"
            try:
                number = kind(values[name])
            except ValueError:
                number = None
            if number is None or not math.isfinite(number) or number < 0 or (kind is float and number == 0):
                raise MapperoptError(f"bad language-model setting: {source[name]}={values[name]} is not {unit}",
                                     hint=f"{ENV[name]} (--{OPTIONS[name]}) takes {unit}; unset, it is "
                                          f"{getattr(cls, name):g}")
            numbers[name] = number
        url = values["base_url"]
        if url is not None and not _is_http_url(url):
            what = "an http:// or https:// URL with a host" if "://" in url else "a URL (no http:// or https://)"
            raise MapperoptError(f"bad language-model setting: {source['base_url']}={url} is not {what}",
                                 hint=f"{ENV['base_url']} (--{OPTIONS['base_url']}) takes the endpoint's URL, e.g. "
                                      "http://localhost:8000/v1 for a local server; unset, with a model given, "
                                      "it is OpenAI's API")
        key, key_from = values["api_key"], source["api_key"]
        if key is None and os.environ.get(OPENAI_KEY):  # as the openai library reads it
            key, key_from = os.environ[OPENAI_KEY], OPENAI_KEY
        timeout, retries, cap = numbers["timeout_s"], numbers["max_retries"], numbers["max_model_s"]
        return cls(base_url=values["base_url"], model=values["model"], api_key=key,
                   key_from=key_from if key is not None else None, timeout_s=timeout, max_retries=retries,
                   max_model_s=cap)

    def public(self) -> dict:
        """The settings without the key, for settings.json."""
        return {"base_url": self.base_url, "model": self.model or DEFAULT_MODEL, "timeout_s": self.timeout_s,
                "max_retries": self.max_retries, "max_model_s": self.max_model_s}


class ModelError(MapperoptError):
    """The model endpoint failed and the retries or the per-iteration cap are used up, or it refused the key or the
    model (`FATAL_STATUS`): tuning stops without using an iteration."""


class MalformedReply(Exception):
    """The endpoint answered, but not with a chat completion (e.g. a 200 with an HTML page)."""


class ChatModel:
    """A callable with the contract OptoPrime expects of its `llm` (docs/tuning.md): `model(messages=...,
    **kwargs)` returns the chat-completions response object. Every request's token counts are recorded.
    Endpoint faults are retried with back-off (see the module); `begin_iteration` starts the per-iteration cap.

    Args:
        config: the endpoint settings.

    Attributes:
        calls: one dict per request: {"model", "seconds", "prompt_tokens", "completion_tokens", "total_tokens",
            "error"} (token counts 0 when the server reported none or the request failed).
    """

    def __init__(self, config: LLMConfig):
        import openai  # imported here: the offline path never needs it

        self.config = config
        # Retries are ours: they must respect the per-iteration cap and check what a 200 carries. The client is the
        # asynchronous one, run on a loop of our own: the HTTP client's timeout bounds each read, not the request
        # (a server that sends a byte now and then never reaches it); asyncio's bounds the whole request, and
        # cancelling it closes its connection.
        self.client = openai.AsyncOpenAI(base_url=config.base_url, api_key=config.api_key or PLACEHOLDER_KEY,
                                         timeout=config.timeout_s, max_retries=0)
        self._loop = asyncio.new_event_loop()
        self.calls: list[dict] = []
        self.iteration_started = time.monotonic()

    @property
    def model_name(self) -> str:
        return self.config.model or DEFAULT_MODEL

    def begin_iteration(self) -> None:
        """Starts the clock of `config.max_model_s` for one iteration's requests."""
        self.iteration_started = time.monotonic()

    def __call__(self, messages: list[dict], **kwargs: Any) -> Any:
        """Sends one chat-completions request, retrying endpoint faults.

        Raises:
            ModelError: an endpoint fault persisted through the retries, the iteration's model time ran out, or
                the endpoint refused the key or the model (`FATAL_STATUS`).
            openai.APIStatusError: another HTTP error that is not retried (e.g. openai.BadRequestError for a server
                that rejects an option; the caller may try without it).
        """
        import openai

        errors: list[str] = []
        last: BaseException | None = None  # the last fault, for a hint that fits it
        for attempt in range(self.config.max_retries + 1):
            left = self.config.max_model_s - (time.monotonic() - self.iteration_started)
            if left <= 0:
                break
            try:
                return self._request(messages, min(self.config.timeout_s, left), kwargs)
            except openai.APIStatusError as exc:
                if exc.status_code in FATAL_STATUS:
                    raise ModelError(self.calls[-1]["error"], hint=fatal_hint(exc.status_code, self.config)) from None
                if exc.status_code not in RETRIED_STATUS and exc.status_code < 500:
                    raise
                errors.append(self.calls[-1]["error"])
                last = exc
            except (openai.APITimeoutError, openai.APIConnectionError, MalformedReply) as exc:
                errors.append(self.calls[-1]["error"])
                last = exc
            wait = min(MAX_BACKOFF_S, BACKOFF_S * 2 ** attempt)
            left = self.config.max_model_s - (time.monotonic() - self.iteration_started)
            if attempt < self.config.max_retries and left > wait:
                time.sleep(wait)
        if not errors:
            errors.append("no request was sent")
        capped = time.monotonic() - self.iteration_started >= self.config.max_model_s
        cap = f"; the cap of {self.config.max_model_s:g} s of model time per iteration is used up" if capped else ""
        raise ModelError(f"the language model failed {len(errors)} time(s) in a row{cap}: {errors[-1]}",
                         hint=fault_hint(last, capped, config=self.config)) from last

    def _request(self, messages: list[dict], timeout_s: float, kwargs: dict) -> Any:
        start = time.monotonic()
        entry = {"model": self.model_name, "seconds": 0.0, "prompt_tokens": 0, "completion_tokens": 0,
                 "total_tokens": 0, "error": None}
        try:
            try:
                response = self._within(timeout_s, self.client.chat.completions.create(
                    model=self.model_name, messages=messages, timeout=timeout_s, **kwargs))
            except json.JSONDecodeError as exc:  # a 200 whose body was cut off (a proxy, a dropped connection)
                raise MalformedReply("answered with JSON that is cut off or broken, not a chat completion (it "
                                     f"begins: {' '.join(exc.doc.split())[:120]!r})") from None
            check_reply(response)
        except Exception as exc:
            entry["error"] = describe_error(exc, self.config, timeout_s)
            raise
        finally:
            entry["seconds"] = round(time.monotonic() - start, 3)
            self.calls.append(entry)
        usage = getattr(response, "usage", None)
        for name in ("prompt_tokens", "completion_tokens", "total_tokens"):
            entry[name] = int(getattr(usage, name, 0) or 0)
        return response

    def _within(self, timeout_s: float, request: Coroutine) -> Any:
        """Runs `request` on the model's loop, cancelled (its connection closed) after `timeout_s` seconds of wall
        time, or at once when the wait is interrupted (Ctrl-C).

        Raises:
            openai.APITimeoutError: it did not end within `timeout_s`.
        """
        import httpx
        import openai

        task = self._loop.create_task(asyncio.wait_for(request, timeout_s))
        try:
            return self._loop.run_until_complete(task)
        except TimeoutError:
            url = f"{str(self.client.base_url).rstrip('/')}/chat/completions"
            raise openai.APITimeoutError(request=httpx.Request("POST", url)) from None
        finally:
            if not task.done():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    self._loop.run_until_complete(task)

    def close(self) -> None:
        """Closes the client's connections to the endpoint (kept alive between requests) and the model's loop."""
        if self._loop.is_closed():
            return
        try:
            self._loop.run_until_complete(self.client.close())
        finally:
            self._loop.close()

    def usage_since(self, first_call: int) -> dict:
        """Usage of the calls from index `first_call` on: {"calls": [...], "prompt_tokens", "completion_tokens",
        "total_tokens"}."""
        calls = self.calls[first_call:]
        totals = {n: sum(c[n] for c in calls) for n in ("prompt_tokens", "completion_tokens", "total_tokens")}
        return {"calls": calls, **totals}


PROBE = [{"role": "user", "content": "Say OK."}]  # the one-token question of `ask_one_token`


def ask_one_token(model: ChatModel) -> None:
    """Asks `model` for one token (`mapperopt doctor`'s check, and `tune`'s before a new run): raises as a model
    call does (`ChatModel.__call__`)."""
    model(messages=PROBE, max_tokens=1)


def check_endpoint(config: LLMConfig) -> None:
    """Asks the endpoint of `config` for one token, with its timeout, retries and cap, as a tuning iteration would.

    Raises:
        ModelError: the endpoint failed (see `ChatModel.__call__`).
        MapperoptError: it answered another HTTP error (e.g. 400: the server takes no such request).
    """
    import openai

    model = ChatModel(config)
    try:
        ask_one_token(model)
    except openai.APIStatusError:
        raise MapperoptError(model.calls[-1]["error"], hint=f"check {ENV['base_url']} (it usually ends in /v1) and "
                                                             f"{ENV['model']}") from None
    finally:
        model.close()


def _is_http_url(text: str) -> bool:
    try:
        parts = urllib.parse.urlsplit(text)
    except ValueError:  # e.g. an unclosed [ of an IPv6 address
        return False
    return parts.scheme in ("http", "https") and bool(parts.hostname)


def _setting(name: str) -> str:
    return f"--{OPTIONS[name]} ({ENV[name]})"


def fatal_hint(status: int, config: LLMConfig) -> str:
    """How to fix an HTTP error of `FATAL_STATUS` with the settings `config`."""
    if status == 404:
        return (f"set {ENV['model']} (or --llm-model) to a model the endpoint serves, and check "
                + (f"{ENV['base_url']} (it usually ends in /v1)" if config.base_url else
                   f"that it is an OpenAI model, or set {ENV['base_url']} to the endpoint that serves it"))
    where = f"set {ENV['api_key']} (or --llm-api-key, or {OPENAI_KEY})"
    if config.api_key is None:
        return f"no key was set (a placeholder was sent): {where} to a key the endpoint accepts"
    of = f" of {config.key_from}" if config.key_from else ""
    return f"the endpoint refused the key{of}: {where} to one it accepts"


def fault_hint(exc: BaseException | None, capped: bool = False, doctor: bool = False,
               config: LLMConfig | None = None) -> str:
    """What to do about an endpoint fault that persisted (`exc`, the last one), in the user's settings (`config`);
    `capped`: the iteration's model time ran out; `doctor`: for `mapperopt doctor`, which continues no run and
    retries nothing."""
    import openai

    if doctor and isinstance(exc, openai.APIStatusError):
        return ("the endpoint limits the request rate: wait, then run doctor again" if exc.status_code == 429 else
                "the server failed: check its log, then run doctor again")
    if capped:
        return (f"a slow model needs more time per iteration: raise {_setting('max_model_s')}, and "
                f"{_setting('timeout_s')} if one request takes longer")
    if isinstance(exc, openai.APITimeoutError):
        return f"a slow model (or one loading) needs a longer timeout: raise " \
               f"{ENV['timeout_s'] if doctor else _setting('timeout_s')}"
    if isinstance(exc, openai.APIStatusError) and exc.status_code == 429:
        return (f"the endpoint limits the request rate: wait and continue the run, or raise "
                f"{_setting('max_retries')} to retry longer (waits double, up to {MAX_BACKOFF_S:g} s)")
    if isinstance(exc, openai.APIStatusError):
        return (f"the server failed (see its log); continue the run when it answers again, or raise "
                f"{_setting('max_retries')}")
    if config is not None and not config.base_url:  # OpenAI's API: no URL of the user's to check
        return (f"check the network connection to the OpenAI API and the model name; for another endpoint, set "
                f"{ENV['base_url']} (a local server's usually ends in /v1)")
    return f"check the endpoint ({ENV['base_url']} usually ends in /v1), that its server runs, and the model name"


def check_reply(response: Any) -> None:
    """Raises MalformedReply, saying what came instead, unless `response` is a chat completion with a message."""
    if isinstance(response, (str, bytes)):
        text = response.decode(errors="replace") if isinstance(response, bytes) else response
        kind = "an HTML page" if "<html" in text[:2000].lower() or "<!doctype" in text[:200].lower() else "text"
        first = " ".join(text.split())[:120]
        raise MalformedReply(f"answered with {kind}, not a chat completion (it begins: {first!r})")
    choices = getattr(response, "choices", None)
    if not choices or getattr(choices[0], "message", None) is None:
        extra = getattr(response, "model_extra", None) or {}
        detail = f": {json.dumps(extra.get('error'))[:200]}" if extra.get("error") else ""
        raise MalformedReply(f"answered with JSON that is not a chat completion (no choices){detail}")


def describe_error(exc: BaseException, config: LLMConfig, timeout_s: float | None = None) -> str:
    """One line saying what went wrong with a model request, in words a user can act on; `timeout_s`: the request's
    timeout (`config.timeout_s` when None; less when cut to what is left of the iteration's cap)."""
    import openai

    where = config.base_url or "the OpenAI API"
    endpoint = f"the model endpoint {config.base_url}" if config.base_url else "the OpenAI API"
    if isinstance(exc, openai.APITimeoutError):
        return f"the model at {where} did not answer within {round(timeout_s or config.timeout_s, 1):g} s (timeout)"
    if isinstance(exc, openai.APIConnectionError):
        return f"cannot connect to {endpoint} (connection refused or unreachable)"
    if isinstance(exc, openai.APIStatusError):
        return f"{endpoint} answered HTTP {exc.status_code}: {_reply_body(exc) or _first_line(exc.message)}"
    if isinstance(exc, MalformedReply):
        return f"{endpoint} {exc}"
    return f"{type(exc).__name__}: {_first_line(str(exc))}"


def _reply_body(exc: Any) -> str:
    """The start of an HTTP error's reply body, quoted: where a server (vLLM, Ollama, a proxy) says the cause, which
    the client's message ("Error code: 500") leaves out. Empty where there is none."""
    try:
        text = " ".join(exc.response.text.split())
    except Exception:  # a reply streamed and not read, or none: the client's message says what is known
        return ""
    return f"its reply: {text[:200] + '…' if len(text) > 200 else text!r}" if text else ""


def _first_line(text: str) -> str:
    return (text or "").strip().splitlines()[0][:300] if (text or "").strip() else ""
