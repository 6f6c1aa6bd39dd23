# SPDX-License-Identifier: MIT
"""client.py - tiletune.Client: the HTTP API of tiletuned (docs/api.md) from Python.

Standard library only (urllib).  Every method returns the server's JSON document as a dict
(or text for the text export formats) and raises a ``tiletune.TiletuneError`` subclass on
failure (errors.py).  Connection failures are retried with exponential back-off: every
request when the connection was refused (nothing reached the server) or answered ``503 busy``
(the server refuses it before doing any of it), and the idempotent ones (GET, predict,
simulate) also after a timeout or a reset connection; a job submission is never sent twice.

Thread-safety: a Client holds no connection (one per request) and may be shared by threads.
"""
from __future__ import annotations

import errno
import http.client
import ipaddress
import json
import random
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Dict, Iterable, Iterator, List, Mapping, Optional, Tuple, Union

from . import __version__
from .config import Settings
from .errors import ERRORS, BadAnswer, ServerUnreachable, from_response
from .job import Job, as_job_id

Problem = Union[str, Mapping[str, Any]]

def problem_items(problem: Optional[Problem]) -> List[Tuple[str, str]]:
    """``"M=1,N=2"`` or ``{"M": 1, "N": 2}`` as ordered (name, text value) pairs; None (or
    ``""``, ``{}``) is the empty problem of a template without inputs."""
    if problem is None:
        return []
    if not isinstance(problem, (str, Mapping)):
        raise TypeError(f"a problem is a 'K=V,..' string or a mapping, got {problem!r}")
    if isinstance(problem, str):
        out = []
        for part in problem.split(","):
            part = part.strip()
            if not part:
                continue
            if "=" not in part:
                raise ValueError(f"problem: {part!r} is not K=V")
            k, v = part.split("=", 1)
            out.append((k.strip(), v.strip()))
        return out
    return [(str(k), _text(v)) for k, v in problem.items()]


def problem_str(problem: Optional[Problem]) -> str:
    """The ``K=V,..`` form the API accepts (tlctl sends the same)."""
    return ",".join(f"{k}={v}" for k, v in problem_items(problem))


def _text(v: Any) -> str:
    if isinstance(v, bool):
        return "1" if v else "0"
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(getattr(v, "name", v)) if not isinstance(v, (int, str)) else str(v)


def _body_problem(problem: Optional[Problem]) -> Union[str, Dict[str, Any]]:
    if problem is None:
        return ""
    if not isinstance(problem, (str, Mapping)):
        raise TypeError(f"a problem is a 'K=V,..' string or a mapping, got {problem!r}")
    if isinstance(problem, str):
        return problem
    return {str(k): (v if isinstance(v, (int, str)) else _text(v)) for k, v in problem.items()}


def _bad_utf8(doc: Any, path: str = "") -> Optional[str]:
    """The JSON path of the first text in ``doc`` that is not valid UTF-8 (a lone surrogate,
    e.g. a non-UTF-8 command-line byte decoded with surrogateescape), or None."""
    if isinstance(doc, str):
        try:
            doc.encode("utf-8")
        except UnicodeEncodeError:
            return path
        return None
    if isinstance(doc, Mapping):
        for k, v in doc.items():
            sub = f"{path}.{k}" if path else str(k)
            bad = _bad_utf8(str(k), sub) or _bad_utf8(v, sub)
            if bad is not None:
                return bad
    elif isinstance(doc, (list, tuple)):
        for i, v in enumerate(doc):
            bad = _bad_utf8(v, f"{path}[{i}]")
            if bad is not None:
                return bad
    return None


def _refuse_bad_utf8(doc: Any, what: str) -> None:
    """Raise ``BadEncoding`` (400 ``bad_encoding``, as the server and tlctl) for text that
    cannot be sent as UTF-8, instead of sending it escaped or failing in the codec."""
    bad = _bad_utf8(doc)
    if bad is not None:
        raise ERRORS["bad_encoding"](f"{what} is not valid UTF-8", "bad_encoding", bad)


def _is_loopback(host: str) -> bool:
    """True for ``localhost`` (and ``*.localhost``), 127.0.0.0/8 and ``::1``."""
    h = host.lower().rstrip(".")
    if h == "localhost" or h.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(h).is_loopback
    except ValueError:
        return False


def _opener(url: str) -> Tuple[Any, Optional[str]]:
    """The urllib opener for a server URL and the proxy it goes through (None: direct).
    A loopback server is always reached directly: a proxy (``http_proxy``, ``HTTP_PROXY``,
    ...) cannot reach this machine's loopback, and a host with proxy variables but without
    127.0.0.1 in ``no_proxy`` used to get "connection refused" from the proxy, reported as
    the daemon's.  Other hosts honour the environment's proxies and ``no_proxy``, as urlopen."""
    u = urllib.parse.urlsplit(url)
    if _is_loopback(u.hostname or ""):
        return urllib.request.build_opener(urllib.request.ProxyHandler({})), None
    proxy = urllib.request.getproxies().get(u.scheme.lower())
    if proxy and urllib.request.proxy_bypass(u.netloc):
        proxy = None
    return urllib.request.build_opener(), proxy


def _bounded(timeout: float, deadline: Optional[float]) -> float:
    """A request's timeout, cut to what is left before ``deadline`` (at least 50 ms)."""
    if deadline is None:
        return timeout
    return max(0.05, min(timeout, deadline - time.monotonic()))


def _past(deadline: Optional[float]) -> bool:
    return deadline is not None and time.monotonic() >= deadline


def _drop_none(d: Mapping[str, Any]) -> Dict[str, Any]:
    return {k: v for k, v in d.items() if v is not None}


class Client:
    """A connection profile for one tiletuned.

    ``url``/``token``/``timeout`` follow tlctl's resolution (arguments, then
    ``TILETUNE_URL``/``TILETUNE_TOKEN``, then ``~/.config/tiletune/tlctl.conf``).
    ``retries`` is how many times a failed connection is tried again, sleeping
    ``backoff * 2**attempt`` seconds (with jitter, at most ``max_backoff``) in between."""

    def __init__(self, url: Optional[str] = None, token: Optional[str] = None, *,
                 timeout: Optional[float] = None, retries: int = 3, backoff: float = 0.2,
                 max_backoff: float = 5.0, config_file: Optional[str] = None):
        s = Settings(url, token, timeout, config_file)
        self.settings = s
        self.url, self.token, self.timeout = s.url, s.token, s.timeout
        self.retries, self.backoff, self.max_backoff = max(0, retries), backoff, max_backoff
        self._opener, self.proxy = _opener(self.url)   # proxies as in the environment now
        self._lock = threading.Lock()
        self.requests_sent = 0          # HTTP requests attempted (for tests and diagnostics)

    def __repr__(self) -> str:
        return f"tiletune.Client({self.url!r}, token={'set' if self.token else 'none'})"

    # -- transport --------------------------------------------------------------------------
    def _open(self, method: str, path: str, query: Optional[Iterable[Tuple[str, Any]]] = None,
              body: Optional[bytes] = None, content_type: str = "application/json",
              timeout: Optional[float] = None, idempotent: Optional[bool] = None,
              accept: str = "application/json", deadline: Optional[float] = None):
        """Send one request, retrying connection failures; returns the open response.
        ``deadline`` (time.monotonic()) bounds every attempt's timeout and the retries.
        Raises APIError subclasses for error answers and ServerUnreachable at the end."""
        url = self.url + path
        q = [(k, _text(v)) for k, v in (query or []) if v is not None]
        _refuse_bad_utf8(path, "the path")
        _refuse_bad_utf8(dict(q), "a query argument")
        if q:
            url += "?" + urllib.parse.urlencode(q)
        headers = {"Accept": accept, "User-Agent": f"tiletune-python/{__version__}"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        if body is not None:
            headers["Content-Type"] = content_type
        if idempotent is None:
            idempotent = method == "GET"
        attempt = 0
        while True:
            req = urllib.request.Request(url, data=body, method=method, headers=headers)
            with self._lock:
                self.requests_sent += 1
            try:
                return self._opener.open(req, timeout=_bounded(timeout or self.timeout,
                                                               deadline))
            except urllib.error.HTTPError as e:
                err = self._api_error(e)
                # 503 busy: the server refused the request before doing any of it (heavy
                # pool or connection limit full); back off and retry it like a refused
                # connection, whatever the method
                if not (err.code == "busy" and attempt < self.retries) or _past(deadline):
                    raise err from None
            except (urllib.error.URLError, OSError, http.client.HTTPException) as e:
                reason = getattr(e, "reason", e)
                refused = isinstance(reason, ConnectionRefusedError) or (
                    isinstance(reason, OSError) and reason.errno == errno.ECONNREFUSED)
                if not (refused or idempotent) or attempt >= self.retries or _past(deadline):
                    via = f" through the proxy {self.proxy}" if self.proxy else ""
                    raise ServerUnreachable(f"cannot reach {self.url}{via}: {reason}") from e
            self._pause(attempt, deadline)
            attempt += 1

    def _pause(self, attempt: int, deadline: Optional[float] = None) -> None:
        """Sleep before retry ``attempt`` + 1: ``backoff * 2**attempt``, jittered, capped
        (and not past ``deadline``)."""
        delay = min(self.max_backoff, self.backoff * (2 ** attempt))
        delay *= 0.75 + 0.5 * random.random()
        if deadline is not None:
            delay = max(0.0, min(delay, deadline - time.monotonic()))
        time.sleep(delay)

    @staticmethod
    def _api_error(e: urllib.error.HTTPError):
        try:
            raw = e.read()
        except (OSError, http.client.HTTPException):
            raw = b""
        finally:
            e.close()
        try:
            doc: Any = json.loads(raw.decode("utf-8")) if raw else None
        except (ValueError, UnicodeDecodeError):
            doc = raw.decode("utf-8", "replace")
        return from_response(e.code, doc)

    def request(self, method: str, path: str, query: Optional[Iterable[Tuple[str, Any]]] = None,
                json_body: Any = None, data: Optional[bytes] = None,
                idempotent: Optional[bool] = None, raw: bool = False,
                deadline: Optional[float] = None) -> Any:
        """One API call: JSON in, JSON (dict) out; ``raw=True`` returns the body as text.
        ``data`` sends bytes unchanged (import).  ``deadline`` (a time.monotonic() value)
        bounds the whole call, retries included: no attempt waits past it."""
        body = data
        if json_body is not None:
            _refuse_bad_utf8(json_body, "a request member")
            # NaN and Infinity are not JSON: a ValueError here, not malformed_json from the server
            body = json.dumps(json_body, allow_nan=False).encode("utf-8")
        ctype = "application/octet-stream" if data is not None else "application/json"
        if idempotent is None:
            idempotent = method == "GET"
        attempt = 0
        while True:
            with self._open(method, path, query, body, ctype, idempotent=idempotent,
                            deadline=deadline) as r:
                try:
                    payload = r.read()
                    rtype = r.headers.get("Content-Type", "")
                    break
                except (OSError, http.client.HTTPException) as e:
                    # the connection closed (or timed out) in the middle of the answer:
                    # retried like a reset when idempotent, else nothing is known
                    if not idempotent or attempt >= self.retries or _past(deadline):
                        raise BadAnswer(f"the answer of {self.url} to {method} {path} was cut "
                                        f"off: {e!r}") from e
            self._pause(attempt, deadline)
            attempt += 1
        text = payload.decode("utf-8", "replace")
        if raw:
            return text
        if "json" not in rtype:
            raise BadAnswer(f"{self.url} answered {method} {path} with {rtype or 'no type'}, "
                            f"not JSON (a proxy's page?): {text[:80]!r}")
        try:
            return json.loads(text) if text.strip() else {}
        except ValueError as e:
            raise BadAnswer(f"{self.url} answered {method} {path} with broken JSON ({e}): "
                            f"{text[:80]!r}") from None

    def events(self, job_id: int, timeout: Optional[float] = None
               ) -> Iterator[Tuple[str, Dict[str, Any]]]:
        """Server-Sent Events of a job (``GET /v1/jobs/{id}/events``): yields
        ``(event, data)`` pairs (``progress`` ..., then ``end``) until the stream closes.
        ``timeout`` bounds the silence between two lines (the server sends keep-alives)."""
        r = self._open("GET", f"/v1/jobs/{as_job_id(job_id)}/events", timeout=timeout or 60.0,
                       accept="text/event-stream")
        with r:
            try:
                yield from self._sse(r)
            except (OSError, http.client.HTTPException) as e:
                raise BadAnswer(f"the event stream of job {job_id} from {self.url} was cut "
                                f"off: {e!r}") from e

    @staticmethod
    def _sse(r: Any) -> Iterator[Tuple[str, Dict[str, Any]]]:
        """The ``(event, data)`` pairs of an open event-stream answer."""
        event, data = "message", []
        for raw_line in r:
            line = raw_line.decode("utf-8", "replace").rstrip("\r\n")
            if not line:
                if data:
                    try:
                        doc = json.loads("\n".join(data))
                    except ValueError:
                        doc = {"text": "\n".join(data)}
                    yield event, doc
                event, data = "message", []
            elif line.startswith(":"):
                continue
            elif line.startswith("event:"):
                event = line[6:].strip()
            elif line.startswith("data:"):
                data.append(line[5:].lstrip())

    # -- health and catalog -----------------------------------------------------------------
    def health(self) -> Dict[str, Any]:
        """``GET /healthz``."""
        return self.request("GET", "/healthz")

    def ready(self) -> Dict[str, Any]:
        """``GET /readyz`` (raises ``Unavailable`` when not ready)."""
        return self.request("GET", "/readyz")

    def templates(self) -> List[Dict[str, Any]]:
        """``GET /v1/templates``: built-in and stored templates (latest version per name)."""
        return self.request("GET", "/v1/templates")["templates"]

    def template(self, name: str, hash: Optional[str] = None) -> Dict[str, Any]:
        """``GET /v1/templates/{name}``: inputs, params, ``hash`` and the document."""
        _refuse_bad_utf8({"template": name}, "the template name")
        return self.request("GET", "/v1/templates/" + urllib.parse.quote(name, safe=""),
                            [("hash", hash)])

    def targets(self) -> List[Dict[str, Any]]:
        """``GET /v1/targets``."""
        return self.request("GET", "/v1/targets")["targets"]

    # -- results, model and simulator ------------------------------------------------------
    def best(self, template: str, target: str, problem: Problem, *, nearest: bool = False,
             backend: Optional[str] = None, hash: Optional[str] = None) -> Dict[str, Any]:
        """``GET /v1/best``: the best stored result for the exact shape (``"exact": true``);
        with ``nearest=True`` the nearest tuned shape when the exact one is missing
        (``"exact": false`` and ``"distance"``).  Without ``hash`` only configs the
        template's current version runs are answered (measured by any version of it, as the
        export picks them); with ``hash`` that version's own best.  Raises ``NotFound`` when
        there is none."""
        q = [("template", template), ("target", target)] + problem_items(problem)
        q += [("backend", backend), ("hash", hash), ("nearest", "1" if nearest else None)]
        return self.request("GET", "/v1/best", q)

    def predict(self, template: Union[str, Mapping[str, Any]], target: str, problem: Problem,
                *, configs: Optional[List[Mapping[str, Any]]] = None,
                config: Optional[Mapping[str, Any]] = None,
                top: Optional[int] = None) -> Dict[str, Any]:
        """``POST /v1/predict``: the analytic cost model (a model, not a measurement) for the
        given configs, or the ``top`` k of the space.  Results say ``"source": "model"``."""
        body = _drop_none({"template": template, "target": target,
                           "problem": _body_problem(problem), "configs": configs,
                           "config": config, "top": top})
        return self.request("POST", "/v1/predict", json_body=body, idempotent=True)

    def simulate(self, template: Union[str, Mapping[str, Any]], target: str, problem: Problem,
                 config: Mapping[str, Any], *, trace: bool = False,
                 trace_core: Optional[int] = None) -> Dict[str, Any]:
        """``POST /v1/simulate``: the pipeline simulator (a model of the chip) on one config."""
        body = _drop_none({"template": template, "target": target,
                           "problem": _body_problem(problem), "config": dict(config),
                           "trace": True if trace else None, "trace_core": trace_core})
        return self.request("POST", "/v1/simulate", json_body=body, idempotent=True)

    # -- jobs --------------------------------------------------------------------------------
    def tune(self, template: Union[str, Mapping[str, Any]], target: str, problem: Problem, *,
             backend: Optional[str] = None, strategy: Optional[str] = None,
             budget: Union[None, int, Mapping[str, Any]] = None, seed: Optional[int] = None,
             options: Optional[Mapping[str, Any]] = None) -> "Job":
        """``POST /v1/tune`` (scope tune): submit a tuning job; returns a ``Job``."""
        body = _drop_none({"template": template, "target": target,
                           "problem": _body_problem(problem), "backend": backend,
                           "strategy": strategy, "budget": budget, "seed": seed,
                           "options": options})
        doc = self.request("POST", "/v1/tune", json_body=body)
        return Job(self, doc["job"], doc)

    def job(self, job_id: int) -> "Job":
        """A ``Job`` handle for an existing job (fetches its state)."""
        j = Job(self, as_job_id(job_id))
        j.refresh()
        return j

    def job_info(self, job_id: int, *, deadline: Optional[float] = None) -> Dict[str, Any]:
        """``GET /v1/jobs/{id}`` (``deadline``: a time.monotonic() value bounding the call)."""
        return self.request("GET", f"/v1/jobs/{as_job_id(job_id)}", deadline=deadline)

    def jobs(self, *, state: Optional[str] = None, template: Optional[str] = None,
             target: Optional[str] = None, owner: Optional[str] = None,
             limit: Optional[int] = None, offset: Optional[int] = None) -> List[Dict[str, Any]]:
        """``GET /v1/jobs``: newest first, filtered."""
        q = [("state", state), ("template", template), ("target", target), ("owner", owner),
             ("limit", limit), ("offset", offset)]
        return self.request("GET", "/v1/jobs", q)["jobs"]

    def trials(self, job_id: int, *, offset: Optional[int] = None,
               limit: Optional[int] = None) -> Dict[str, Any]:
        """``GET /v1/jobs/{id}/trials`` (one page; ``total`` is the count)."""
        return self.request("GET", f"/v1/jobs/{as_job_id(job_id)}/trials",
                            [("offset", offset), ("limit", limit)])

    def all_trials(self, job_id: int, *, page: int = 1000) -> Iterator[Dict[str, Any]]:
        """Every trial of the job in order (``seq``), reading ``page`` trials per request
        (1..1000, the server's limit) until one holds the last.  Trials the job records while
        this reads are included up to the last page read."""
        if isinstance(page, bool) or not isinstance(page, int) or not 1 <= page <= 1000:
            raise ValueError(f"page must be an integer in 1..1000, not {page!r}")
        offset = 0
        while True:
            got = self.trials(job_id, offset=offset, limit=page)
            rows = got["trials"]
            yield from rows
            offset += len(rows)
            if not rows or offset >= got["total"]:
                return

    def cancel(self, job_id: int) -> Dict[str, Any]:
        """``DELETE /v1/jobs/{id}`` (scope tune; ``Conflict`` when already finished)."""
        return self.request("DELETE", f"/v1/jobs/{as_job_id(job_id)}")

    # -- CI and data exchange ----------------------------------------------------------------
    def check(self, entries: List[Mapping[str, Any]], *, tolerance: Optional[float] = None,
              baseline: Optional[str] = None, remeasure: Optional[bool] = None,
              backend: Optional[str] = None, pin: Optional[str] = None,
              fail_on_missing: Optional[bool] = None) -> Dict[str, Any]:
        """``POST /v1/check`` (scope tune): the CI regression verdict; ``pin=NAME`` pins the
        current best configs as a baseline instead.  An entry's ``problem`` may be a dict."""
        ents = []
        for e in entries:
            e = dict(e)
            if "problem" in e:
                e["problem"] = _body_problem(e["problem"])
            ents.append(e)
        body = _drop_none({"entries": ents, "tolerance": tolerance, "baseline": baseline,
                           "remeasure": remeasure, "backend": backend, "pin": pin,
                           "fail_on_missing": fail_on_missing})
        return self.request("POST", "/v1/check", json_body=body)

    def export(self, template: str, target: str, *, format: str = "json",
               backend: Optional[str] = None, job: Optional[int] = None,
               problem: Optional[Problem] = None) -> Union[Dict[str, Any], str]:
        """``GET /v1/export``: a dict for ``json``/``t4``, text for the others
        (``specializations``, ``registry-inc``, ``c-header``)."""
        q = [("template", template), ("target", target), ("format", format),
             ("backend", backend), ("job", job),
             ("problem", problem_str(problem) if problem is not None else None)]
        return self.request("GET", "/v1/export", q, raw=format not in ("json", "t4"))

    def import_(self, data: Union[bytes, str, Mapping[str, Any]], *,
                format: Optional[str] = None, template: Optional[str] = None,
                target: Optional[str] = None, problem: Optional[Problem] = None,
                file: Optional[str] = None) -> Dict[str, Any]:
        """``POST /v1/import`` (scope tune): a T4 file, Kernel Tuner cache or T1 space
        (bytes, possibly gzip, text or a dict).  ``import`` is a keyword, hence the ``_``."""
        if isinstance(data, Mapping):
            data = json.dumps(data)
        if isinstance(data, str):
            data = data.encode("utf-8")
        if not isinstance(data, (bytes, bytearray, memoryview)):
            # bytes(5) would be five NUL bytes: refuse what is not a document
            raise TypeError(f"import_ takes bytes, text or a dict, got {type(data).__name__}")
        q = [("format", format), ("template", template), ("target", target),
             ("problem", problem_str(problem) if problem is not None else None),
             ("file", file)]
        return self.request("POST", "/v1/import", q, data=bytes(data))

    def import_file(self, path: str, **kw: Any) -> Dict[str, Any]:
        """``import_`` with the contents of a file (``file=`` defaults to its name)."""
        with open(path, "rb") as f:
            data = f.read()
        kw.setdefault("file", path.rsplit("/", 1)[-1])
        return self.import_(data, **kw)

