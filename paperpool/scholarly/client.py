"""The one HTTP client of paperpool, shared by every service it asks.

Polite, as the services ask of their users: a User-Agent naming paperpool, the pool's
repository and its contact address (the registry's survey.repository and survey.contact;
Crossref's etiquette sends such requests to its better-served pool), the least interval
between two requests to a service (services.MIN_INTERVAL), and retries, with growing
waits, only where a retry can help (429 and 5xx answers, timeouts), honouring the
Retry-After a service sends. Answers are kept in a cache of responses on disk, beside
paperpool's cache of checked records and never in the pool, so that a repeated run asks
again only what it has not asked lately, and a test run asks nothing twice.

Every failure is one PaperpoolError naming the service, the URL and what to do: the
commands that use the network fetch everything first and write only after, so an
error always means nothing was written."""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import hashlib
import json
import time
import urllib.parse
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Self

import httpx

from paperpool.files.caches import cache_folder
from paperpool.files.problems import PaperpoolError, lone_surrogate, plural
from paperpool.files.yamlio import write_atomic

from .. import __version__
from .services import MIN_INTERVAL, Service

TIMEOUT = 30.0  # seconds for connecting and for each read; tests shorten it
# seconds for a whole answer, headers and body: a server that sends a byte every few
# seconds never trips TIMEOUT, and one link of a pull request kept refresh waiting for good
DEADLINE = 60.0
ATTEMPTS = 4  # a request and three retries
BACKOFF = 2.0  # seconds before the first retry, doubled before each next one; tests set 0
MAX_WAIT = 120.0  # seconds: a longer Retry-After is waited for this long only (the retries then say the rest)
MAX_BYTES = 20_000_000  # no answer about one paper is near this; a bigger one is not what was asked for
MAX_AGE = 86_400.0  # seconds a cached answer is used for; older ones are asked again
RETRIED = {429, 500, 502, 503, 504}
SLEEP = time.sleep  # how the client waits: tests replace it to see the waits without waiting
_last_request: dict[str, float] = {}  # service -> monotonic time of its last request, for the whole process


@dataclass
class Answer:
    status: int
    text: str
    url: str  # the URL asked (after redirects, the one that answered)


def user_agent(survey: dict) -> str:
    """paperpool/VERSION (+REPOSITORY; mailto:CONTACT), the parts the registry gives, each
    character an HTTP header cannot carry percent-encoded (an address may be written with
    any letters, as `https://exämple.org` or `jürgen@example.org`; a header is ASCII)."""
    parts = [
        f"+{_header_safe(survey['repository'])}" if isinstance(survey.get("repository"), str) else "",
        f"mailto:{_header_safe(survey['contact'])}" if isinstance(survey.get("contact"), str) else "",
    ]
    details = "; ".join(part for part in parts if part)
    return f"paperpool/{__version__}" + (f" ({details})" if details else "")


def _header_safe(text: str) -> str:
    """`text` with every character but printable ASCII as UTF-8 percent escapes."""
    return urllib.parse.quote(text, safe=_PRINTABLE_ASCII)


_PRINTABLE_ASCII = "".join(map(chr, range(0x21, 0x7F)))


class Client:
    """Asks the services; `survey` is the registry's survey block (for the User-Agent)."""

    def __init__(self, survey: dict, max_age: float = MAX_AGE):
        self.max_age = max_age
        self.notes: list[str] = []  # what an optional look-up could not do, for the command to print
        # what _Body decodes; a server that answers in another encoding is refused
        self._headers = {"User-Agent": user_agent(survey), "Accept-Encoding": "gzip, deflate"}

    def close(self) -> None:
        """Nothing is left open: each request has a connection of its own (see _fetch)."""

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def get(self, service: Service, path: str, params: dict | None = None) -> Answer | None:
        """The service's answer to GET base_url + path, or None when it says there is no
        such thing (404, 410). Anything else that is not a success raises."""
        url = str(httpx.URL(service.base_url + path, params=params))
        cached = _read_cached(url, self.max_age)
        if cached is not None:
            return cached
        answer = self._ask(service, url)
        if answer is not None:
            _store(url, answer)
        return answer

    def link_failure(self, service: Service, url: str) -> str | None:
        """Why a link of the pool fails ("HTTP 404", "could not be reached"), or None when
        it answers. HEAD first, which costs the server least; GET when HEAD is refused
        (many servers answer HEAD with 403, 404 or 405 and GET with the page)."""
        _keep_interval(service.name)
        with contextlib.suppress(httpx.HTTPError, httpx.InvalidURL):  # (a redirect to mailto: is no HTTPError)
            if self._fetch(url, "HEAD")[0] < 400:
                return None
        try:  # once: a link that fails now is asked again by the next run (two failures a week apart)
            return None if self._ask(service, url, attempts=1) is not None else "HTTP 404"
        except PaperpoolError as exc:
            return exc.message.split(") ", 1)[-1].split(";", 1)[0]

    def _ask(self, service: Service, url: str, attempts: int = ATTEMPTS) -> Answer | None:
        for attempt in range(1, attempts + 1):
            _keep_interval(service.name)
            retry = attempt < attempts
            try:
                status, text, final, retry_after = self._fetch(url)
            except httpx.TimeoutException as exc:
                if retry:
                    SLEEP(BACKOFF * 2 ** (attempt - 1))
                    continue
                overdue = isinstance(exc, _Overdue)
                late = (
                    f"did not give its whole answer within {DEADLINE:g} s" if overdue else f"did not answer within {TIMEOUT:g} s"
                )
                raise failure(service, url, f"{late} ({plural(attempts, 'try', 'tries')})", "try again later") from None
            except httpx.DecodingError as exc:
                raise malformed(service, url, _reason(exc)) from None
            except httpx.TooManyRedirects:
                raise failure(service, url, "redirected too many times", f"check {service.variable}") from None
            except (httpx.TransportError, httpx.InvalidURL, httpx.UnsupportedProtocol) as exc:
                raise failure(
                    service,
                    url,
                    f"could not be reached ({_reason(exc)})",
                    f"check the network connection, or set {service.variable} to a mirror",
                ) from None
            if status in service.absent:
                return None
            if status in RETRIED and retry:
                SLEEP(_wait(status, retry_after, attempt))
                continue
            if status == 429:
                raise failure(service, url, f"asks paperpool to slow down (HTTP 429, {ATTEMPTS} tries)", "try again later")
            if status >= 500:
                raise failure(service, url, f"failed (HTTP {status}, {ATTEMPTS} tries)", "try again later")
            if status >= 400:
                fix = (
                    "check the identifier" if status != 404 else f"check {service.variable}, which names where {service.name} is"
                )
                raise failure(service, url, f"refused the request (HTTP {status})", fix)
            return Answer(status, text, final)
        raise AssertionError("unreachable: the last attempt returns or raises")

    def _fetch(self, url: str, method: str = "GET") -> tuple[int, str, str, str | None]:
        """(status, text, final URL, Retry-After); returned, not kept on the client, which
        `refresh` shares between the threads checking links. The whole answer must come
        within DEADLINE (httpx.TimeoutException otherwise): the request runs in an event
        loop of its own, which can stop it wherever it waits, as a blocking read cannot be."""
        try:
            return asyncio.run(asyncio.wait_for(self._request(method, url), DEADLINE))
        except TimeoutError:
            raise _Overdue(f"no whole answer within {DEADLINE:g} s") from None
        except (OverflowError, ExceptionGroup) as exc:  # a redirect to a port past 65535, as the socket layer says it
            raise httpx.ConnectError(f"cannot connect: {_innermost(exc)}") from None

    async def _request(self, method: str, url: str) -> tuple[int, str, str, str | None]:
        async with (
            httpx.AsyncClient(timeout=TIMEOUT, follow_redirects=True, max_redirects=5, headers=self._headers) as http,
            http.stream(method, url) as response,
        ):
            body = _Body(response.headers.get("content-encoding", ""))
            async for chunk in response.aiter_raw():
                body.add(chunk)
            return response.status_code, body.text(), str(response.url), response.headers.get("retry-after")


def _innermost(exc: BaseException) -> str:
    """The first exception inside a group (anyio's task groups wrap the socket's own)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return str(exc) or type(exc).__name__


class _Overdue(httpx.TimeoutException):
    """An answer still coming when DEADLINE passed."""


class _Body:
    """An answer's body, decompressed as its Content-Encoding says, never past MAX_BYTES:
    httpx's own decoders give all that a chunk expands to at once, and 131 kB of zstd
    (which it decodes whenever zstandard is installed) is 4 GiB of zeros. DecodingError
    for an encoding it does not read, a corrupt stream or an answer over the limit."""

    def __init__(self, encoding: str):
        encoding = encoding.strip().lower()
        wbits = {"": None, "identity": None, "gzip": 31, "x-gzip": 31, "deflate": 15}
        if encoding not in wbits:
            raise httpx.DecodingError(f"the answer is encoded as {encoding[:40]!r}, which paperpool does not read")
        self._inflate = None if wbits[encoding] is None else zlib.decompressobj(wbits=wbits[encoding])
        self._chunks: list[bytes] = []
        self._size = 0

    def add(self, chunk: bytes) -> None:
        if self._inflate is not None:
            try:
                chunk = self._inflate.decompress(chunk, MAX_BYTES + 1 - self._size)  # at most one byte past the limit
            except zlib.error as exc:
                raise httpx.DecodingError(f"the answer's compressed body is corrupt ({exc})") from None
        self._size += len(chunk)
        if self._size > MAX_BYTES:
            raise httpx.DecodingError(f"the answer is over {MAX_BYTES:,} bytes")
        self._chunks.append(chunk)

    def text(self) -> str:
        return b"".join(self._chunks).decode("utf-8", "replace")


def failure(service: Service, url: str, what: str, todo: str) -> PaperpoolError:
    """The one line every network failure is: service, URL, what happened, what to do."""
    return PaperpoolError(f"{service.name} ({url}) {what}; {todo}. Nothing was written.")


def malformed(service: Service, url: str, detail: str) -> PaperpoolError:
    return failure(
        service,
        url,
        f"gave an answer paperpool cannot read ({detail})",
        f"try again later; if it persists, check {service.variable} or report it",
    )


def parsed_json(service: Service, url: str, text: str):
    """An answer that should be JSON, parsed; anything else is a malformed answer."""
    try:
        parsed = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise malformed(service, url, f"not JSON: {str(exc)[:120]}") from None
    if lone_surrogate(parsed):
        raise malformed(service, url, "a text holds half of a character (an unpaired \\ud800 to \\udfff)")
    return parsed


def _reason(exc: Exception) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0][:200]


def _keep_interval(service: str) -> None:
    # not locked: `refresh` asks each host from one thread only
    interval = MIN_INTERVAL.get(service, MIN_INTERVAL.get("web", 1.0))
    last = _last_request.get(service)
    if last is not None and interval > 0:
        waited = time.monotonic() - last
        if waited < interval:
            SLEEP(interval - waited)
    _last_request[service] = time.monotonic()


def _wait(status: int, retry_after: str | None, attempt: int) -> float:
    """Seconds to wait before retrying: the service's Retry-After (seconds or an HTTP
    date) when it gives one, else the growing backoff; never more than MAX_WAIT."""
    backoff = BACKOFF * 2 ** (attempt - 1)
    if not retry_after:
        return backoff
    retry_after = retry_after.strip()
    # ASCII digits only: str.isdigit() is true of "²", which float() refuses (a value
    # neither seconds nor a date is no Retry-After); float() reads any run of digits, inf at worst
    if retry_after.isascii() and retry_after.isdigit():
        return min(float(retry_after), MAX_WAIT)
    with contextlib.suppress(TypeError, ValueError, IndexError):
        when = email.utils.parsedate_to_datetime(retry_after)
        return min(max(when.timestamp() - time.time(), 0.0), MAX_WAIT)
    return backoff


# ---------------------------------------------------------------------------------
# The cache of responses: one JSON file per URL, in paperpool's cache folder. Like the
# cache of checked records it is a convenience: missing, damaged or unwritable, it is
# treated as empty, silently.
# ---------------------------------------------------------------------------------


def responses_folder() -> Path | None:
    folder = cache_folder()
    return folder / "responses" if folder is not None else None


def _cache_file(url: str) -> Path | None:
    folder = responses_folder()
    return folder / f"{hashlib.blake2b(url.encode(), digest_size=16).hexdigest()}.json" if folder else None


def _read_cached(url: str, max_age: float) -> Answer | None:
    path = _cache_file(url)
    if path is None or max_age <= 0:
        return None
    try:
        stored = json.loads(path.read_text(encoding="utf-8"))
        if stored["url"] == url and time.time() - float(stored["fetched"]) < max_age:
            return Answer(int(stored["status"]), str(stored["text"]), str(stored["final"]))
    except (OSError, ValueError, KeyError, TypeError):
        pass
    return None


def _store(url: str, answer: Answer) -> None:
    path = _cache_file(url)
    if path is None:
        return
    with contextlib.suppress(OSError, PaperpoolError):
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        write_atomic(
            path,
            json.dumps({"url": url, "fetched": time.time(), "status": answer.status, "text": answer.text, "final": answer.url}),
        )
