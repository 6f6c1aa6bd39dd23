# SPDX-License-Identifier: MIT
"""autotune.py - @tiletune.autotune: a kernel factory that asks tiletune for its tile sizes.

The decorated factory (e.g. a ``@tilelang.jit`` function taking shape args and tunable params
as keyword arguments) is called with the shape args only; the tunables are resolved per shape:

1. the stored best for the exact shape            -> ``source="exact"``
2. the best of the nearest tuned shape             -> ``source="nearest"`` (``distance``)
3. the analytic cost model's top-1 of the space    -> ``source="predicted"`` (a model guess)

optionally a tuning job is submitted for shapes without an exact answer (``tune="background"``
returns at once and swaps the config in when the job has finished; ``tune="blocking"`` waits
for it).  Resolutions are cached in-process and on disk (cache.py), keyed by (server, template
hash, target, shape), so a restarted process, or one whose server is down, still runs with the
last known best (``stale=True``).  Thread-safe: concurrent calls for one shape ask the server
once.  Fork-safe: a child of ``os.fork()`` gets new locks (``Autotuner._forked``).
"""
from __future__ import annotations

import functools
import inspect
import json
import os
import threading
import time
import warnings
import weakref
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from .cache import DiskCache
from .client import Client
from .errors import JobFailed, NotFound, ServerError, ServerUnreachable, TiletuneError
from .job import Job

SOURCES = ("exact", "nearest", "predicted", "default")


@dataclass(frozen=True)
class Resolution:
    """How the tunables of one call were chosen.

    ``config``: the tunables; ``source``: exact / nearest / predicted / default;
    ``predicted``: True when the config is the cost model's guess, not a measured best;
    ``cached``: ``None`` (asked the server now), ``"memory"`` or ``"disk"``;
    ``stale``: the server was unreachable, this is the last known answer;
    ``job``: id of the tuning job submitted for this shape (if any);
    ``detail``: the server's answer (median_us, measured_by, distance, time_us, ...)."""

    config: Dict[str, Any]
    source: str
    template: str
    template_hash: str
    target: str
    shape: Dict[str, Any]
    shape_key: str
    server: str
    predicted: bool = False
    cached: Optional[str] = None
    stale: bool = False
    job: Optional[int] = None
    detail: Dict[str, Any] = field(default_factory=dict)
    resolved_at: float = 0.0

    def record(self) -> Dict[str, Any]:
        """The JSON record kept in the disk cache."""
        return {"config": self.config, "source": self.source, "predicted": self.predicted,
                "template": self.template, "template_hash": self.template_hash,
                "target": self.target, "shape": self.shape, "shape_key": self.shape_key,
                "server": self.server, "job": self.job, "detail": self.detail,
                "resolved_at": self.resolved_at}

    @classmethod
    def from_record(cls, r: Mapping[str, Any]) -> "Resolution":
        return cls(config=dict(r["config"]), source=str(r.get("source", "exact")),
                   template=str(r["template"]), template_hash=str(r["template_hash"]),
                   target=str(r["target"]), shape=dict(r.get("shape") or {}),
                   shape_key=str(r["shape_key"]), server=str(r["server"]),
                   predicted=bool(r.get("predicted")), job=r.get("job"),
                   detail=dict(r.get("detail") or {}),
                   resolved_at=float(r.get("resolved_at") or 0.0), cached="disk")


def _shape_value(v: Any) -> Union[int, str]:
    """Shape arguments as the API takes them: ints (also numpy/torch ints) and dtype names
    (``torch.float16``, ``numpy.float16``, ``numpy.dtype("float16")`` -> ``"float16"``)."""
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, int):
        return v
    if isinstance(v, str):
        return v
    if isinstance(v, type):
        # a scalar type given as the dtype (numpy.int8, numpy.float16): its name; the class
        # of an int type has an unbound __index__, and str() of a class is "<class '...'>"
        return v.__name__
    if hasattr(v, "__index__"):
        return int(v.__index__())
    s = str(v)
    return s.rsplit(".", 1)[-1] if s.startswith(("torch.", "numpy.", "np.")) else s


def _name(fn: Callable[..., Any]) -> str:
    """The factory's name for messages: a function's qualified name; a functools.partial or a
    callable object (a jit wrapper instance) has none, so its function's or its class's."""
    for f in (fn, getattr(fn, "func", None)):
        name = getattr(f, "__qualname__", None) or getattr(f, "__name__", None)
        if isinstance(name, str):
            return name
    return type(fn).__qualname__


_LIVE: "weakref.WeakSet[Autotuner]" = weakref.WeakSet()
# Jobs submitted by any autotuner of this process, by what they tune (server, template
# version, target, shape, job options): a factory decorated again (a notebook cell run twice)
# follows the job still running instead of submitting another.
_SUBMITTED: Dict[str, int] = {}
_SUBMITTED_LOCK = threading.Lock()


def _after_fork_in_child() -> None:
    global _SUBMITTED_LOCK
    _SUBMITTED_LOCK = threading.Lock()
    for tuner in list(_LIVE):
        tuner._forked()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


class Autotuner:
    """The state behind one decorated factory (``fn.autotuner``)."""

    def __init__(self, fn: Callable[..., Any], template: str,
                 key: Union[Sequence[str], Mapping[str, str]], target: str, *,
                 tune: Optional[str] = None, backend: Optional[str] = None,
                 strategy: Optional[str] = None, budget: Any = None,
                 seed: Optional[int] = None, client: Optional[Client] = None,
                 url: Optional[str] = None, token: Optional[str] = None,
                 nearest: bool = True, predict: bool = True,
                 default: Optional[Mapping[str, Any]] = None, ttl: Optional[float] = 300.0,
                 retry_down: float = 30.0, cache_dir: Optional[str] = None,
                 disk_cache: bool = True, template_hash: Optional[str] = None):
        if tune not in (None, "background", "blocking"):
            raise ValueError('tune must be None, "background" or "blocking"')
        self.fn = fn
        self.sig = inspect.signature(fn)
        self.key: Dict[str, str] = dict(key) if isinstance(key, Mapping) else {k: k for k in key}
        missing = [a for a in self.key if a not in self.sig.parameters]
        if missing:
            raise TypeError(f"autotune key {missing} not arguments of {_name(fn)}")
        self.template, self.target, self.tune_mode = template, target, tune
        self.backend, self.strategy, self.budget, self.seed = backend, strategy, budget, seed
        self.client = client or Client(url, token, timeout=30.0, retries=2)
        self.nearest, self.predict, self.ttl, self.retry_down = nearest, predict, ttl, retry_down
        self.default = dict(default) if default else None
        self.pinned_hash = template_hash
        self.disk = DiskCache(cache_dir) if disk_cache else None
        self.accepts_any = any(p.kind == p.VAR_KEYWORD for p in self.sig.parameters.values())
        self._lock = threading.Lock()
        self._key_locks: Dict[str, threading.Lock] = {}
        self._tune_locks: Dict[str, threading.Lock] = {}    # tune="blocking": one waiter
        self._ended: set = set()        # tune="blocking": shapes whose job was seen to end
        self._mem: Dict[str, Tuple[float, Resolution]] = {}
        self._jobs: Dict[str, int] = {}
        self._threads: List[threading.Thread] = []
        self._hash: Optional[Tuple[float, str]] = None
        self._down_until = 0.0
        self._warned: set = set()
        self.errors: List[BaseException] = []      # background tuning failures
        _LIVE.add(self)

    def _forked(self) -> None:
        """In a child of ``os.fork()``: only the forking thread lives on, so the locks other
        threads held (a fetch, a blocking wait for a job) would stay held for ever; new
        locks, and no threads or job claims of the parent's (a claim whose submission was
        under way: the child may submit).  Answers and submitted jobs are kept."""
        self._lock = threading.Lock()
        self._key_locks, self._tune_locks, self._threads = {}, {}, []
        self._jobs = {k: v for k, v in self._jobs.items() if v}
        self.client._lock = threading.Lock()

    # -- the call --------------------------------------------------------------------------
    def bind(self, args: Tuple[Any, ...], kwargs: Dict[str, Any]) -> Tuple[Dict[str, Any], Any]:
        """The shape (template input -> value) of a call, and the bound arguments."""
        bound = self.sig.bind_partial(*args, **kwargs)
        shape = {}
        for arg, inp in self.key.items():
            if arg in bound.arguments:
                v = bound.arguments[arg]
            elif self.sig.parameters[arg].default is not inspect.Parameter.empty:
                v = self.sig.parameters[arg].default
            else:
                raise TypeError(f"{_name(self.fn)}() missing shape argument {arg!r}")
            shape[inp] = _shape_value(v)
        return shape, bound

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        shape, bound = self.bind(args, kwargs)
        res = self.resolve_shape(shape)
        fill = {}
        for k, v in res.config.items():
            if k in bound.arguments:
                continue                # the caller pinned it
            if self.accepts_any or k in self.sig.parameters:
                fill[k] = v
            elif k not in self._warned:
                self._warned.add(k)
                warnings.warn(f"tiletune: template {self.template} param {k!r} is not an "
                              f"argument of {_name(self.fn)}; not passed", stacklevel=3)
        return self.fn(*args, **kwargs, **fill)

    def resolve(self, *args: Any, **kwargs: Any) -> Resolution:
        """The Resolution for a call with these arguments, without calling the factory."""
        return self.resolve_shape(self.bind(args, kwargs)[0])

    # -- resolution ------------------------------------------------------------------------
    def shape_key(self, shape: Mapping[str, Any]) -> str:
        return ",".join(f"{k}={shape[k]}" for k in self.key.values())

    def _key_lock(self, k: str) -> threading.Lock:
        with self._lock:
            return self._key_locks.setdefault(k, threading.Lock())

    def resolve_shape(self, shape: Mapping[str, Any], refresh: bool = False) -> Resolution:
        """Resolve one shape (see the module doc).  ``refresh=True`` skips the in-process
        cache.  Raises ServerUnreachable (nothing known, no ``default``), NotFound (nothing
        tuned and ``predict=False``) or another TiletuneError from the server (a 5xx answer
        counts as the server being down, like an unreachable one)."""
        shape = dict(shape)
        k = self.shape_key(shape)
        with self._key_lock(k):
            now = time.monotonic()
            with self._lock:
                hit = self._mem.get(k)
            if hit and not refresh and (self.ttl is None or now - hit[0] < self.ttl):
                res = replace(hit[1], cached="memory")
                if self.tune_mode != "blocking" or res.source == "exact" or res.stale:
                    return res
            elif now < self._down_until:
                return self._offline(shape, k, hit, None)
            else:
                res = self._fetch(shape, k, hit)
                if res.stale:
                    return res
        if self.tune_mode and res.source != "exact":
            res = self._start_tuning(shape, k, res)
        return res

    def _fetch(self, shape: Dict[str, Any], k: str,
               hit: Optional[Tuple[float, Resolution]]) -> Resolution:
        """Ask the server and remember the answer; when it is down, the offline answer
        (``stale=True``).  Called with the shape's key lock held."""
        try:
            res = self._ask(shape, k)
        except (ServerUnreachable, ServerError) as e:
            # down: unreachable, or a 5xx (shutting down, database down, a proxy's 502)
            with self._lock:
                self._down_until = time.monotonic() + self.retry_down
            return self._offline(shape, k, hit, e)
        self._remember(k, res)
        return res

    def _remember(self, k: str, res: Resolution) -> None:
        with self._lock:
            self._mem[k] = (time.monotonic(), res)
        if self.disk and res.source != "default":
            try:
                self.disk.store(dict(res.record(), backend=self.backend or ""))
                self.disk.set_hash(res.server, res.template, res.template_hash)
            except OSError as e:
                if "disk" not in self._warned:
                    self._warned.add("disk")
                    warnings.warn(f"tiletune: cannot write the config cache: {e}")

    def _offline(self, shape: Dict[str, Any], k: str, hit: Optional[Tuple[float, Resolution]],
                 err: Optional[TiletuneError]) -> Resolution:
        """The server is down (unreachable or answering 5xx): the in-process entry, else the
        disk cache, else default, else ``err``."""
        if hit:
            return replace(hit[1], cached="memory", stale=True)
        server = self.client.url
        thash = self.pinned_hash or (self._hash[1] if self._hash else None)
        if not thash and self.disk:
            thash = self.disk.last_hash(server, self.template)
        if thash and self.disk:
            rec = self.disk.load(server, self.template, thash, self.target, k, self.backend)
            try:
                res = replace(Resolution.from_record(rec), stale=True) if rec else None
            except (KeyError, TypeError, ValueError):
                res = None                  # a damaged record (fields missing or mistyped)
            if res:
                with self._lock:
                    self._mem[k] = (time.monotonic(), res)
                return res
        if self.default is not None:
            return self._default(shape, k, thash or "", stale=True)
        raise err or ServerUnreachable(f"cannot reach {server} (retrying after "
                                       f"{self.retry_down:.0f} s) and no cached config for {k}")

    def _default(self, shape: Dict[str, Any], k: str, thash: str, stale: bool) -> Resolution:
        return Resolution(config=dict(self.default or {}), source="default",
                          template=self.template, template_hash=thash, target=self.target,
                          shape=shape, shape_key=k, server=self.client.url, stale=stale,
                          resolved_at=time.time())

    def template_hash(self) -> str:
        """The template's hash on the server (pinned, or fetched and kept for ``ttl``)."""
        if self.pinned_hash:
            return self.pinned_hash
        with self._lock:
            h = self._hash
        if h and (self.ttl is None or time.monotonic() - h[0] < self.ttl):
            return h[1]
        thash = str(self.client.template(self.template)["hash"])
        with self._lock:
            self._hash = (time.monotonic(), thash)
        return thash

    def _ask(self, shape: Dict[str, Any], k: str) -> Resolution:
        thash = self.template_hash()
        base = dict(template=self.template, template_hash=thash, target=self.target,
                    shape=shape, shape_key=k, server=self.client.url, resolved_at=time.time())
        with self._lock:
            job = self._jobs.get(k)
        try:
            b = self.client.best(self.template, self.target, shape, nearest=self.nearest,
                                 backend=self.backend, hash=thash)
            src = "exact" if b.get("exact", True) else "nearest"
            detail = {x: b[x] for x in ("median_us", "spread_us", "predicted_us", "measured_by",
                                        "time_kind", "problem_key", "distance", "job", "trial")
                      if x in b}
            return Resolution(config=dict(b["config"]), source=src, job=job, detail=detail,
                              **base)
        except NotFound:
            if not self.predict:
                if self.default is not None:
                    return self._default(shape, k, thash, stale=False)
                raise
        p = self.client.predict(self.template, self.target, shape, top=1)
        top = [r for r in p.get("results", []) if r.get("feasible", True)]
        if not top:
            if self.default is not None:
                return self._default(shape, k, thash, stale=False)
            raise NotFound(f"no feasible config in the space of {self.template} at {k}",
                           "not_found", "", 404)
        detail = {"time_us": top[0].get("time_us"), "bound": top[0].get("bound"),
                  "source": p.get("source", "model"), "note": p.get("note", "")}
        return Resolution(config=dict(top[0]["config"]), source="predicted", predicted=True,
                          job=job, detail=detail, **base)

    # -- tuning ----------------------------------------------------------------------------
    def _submit(self, shape: Dict[str, Any], k: str) -> Job:
        """Submit the shape's tuning job, or take the one another autotuner of this process
        submitted for the same work that is still queued or running; raises the server's
        TiletuneError."""
        thash = self.template_hash()
        what = json.dumps([self.client.url, self.template, thash, self.target, k,
                           self.backend, self.strategy, self.budget, self.seed],
                          sort_keys=True, default=str)
        with _SUBMITTED_LOCK:
            jid = _SUBMITTED.get(what)
        job = Job(self.client, jid) if jid else None
        if job is not None and not self._running_for(job, thash, shape):
            job = None
        if job is None:
            job = self.client.tune(self.template, self.target, shape, backend=self.backend,
                                   strategy=self.strategy, budget=self.budget, seed=self.seed)
            with _SUBMITTED_LOCK:
                _SUBMITTED[what] = job.id
        with self._lock:
            self._jobs[k] = job.id
            hit = self._mem.get(k)
            if hit and hit[1].source != "exact":
                self._mem[k] = (hit[0], replace(hit[1], job=job.id))
        return job

    @staticmethod
    def _running_for(job: Job, thash: str, shape: Mapping[str, Any]) -> bool:
        """True when ``job`` is queued or running and tunes this template version and shape
        (a daemon restarted on a new database may have given its id to another job)."""
        try:
            info = job.refresh()
        except NotFound:
            return False
        problem = info.get("problem") or {}
        return (info.get("state") in ("queued", "running") and
                (info.get("template") or {}).get("hash") == thash and
                all(str(problem.get(n)) == str(v) for n, v in shape.items()))

    def _tune_blocking(self, shape: Dict[str, Any], k: str, res: Resolution) -> Resolution:
        """tune="blocking": one job per shape and process, and every caller of the shape
        waits for it -- also a caller that comes while another thread waits, or after a wait
        interrupted by Ctrl-C (the job kept running).  Once a wait has seen the job end, the
        shape is not waited for again (``res``, the untuned answer, is returned)."""
        with self._tune_lock(k):
            with self._lock:
                jid, hit = self._jobs.get(k), self._mem.get(k)
                ended = k in self._ended
            if hit and hit[1].source == "exact" and not hit[1].stale:
                return replace(hit[1], cached="memory")     # another caller's job finished
            if hit and hit[1].stale and hit[1].job == jid:
                return replace(hit[1], cached="memory")     # its wait saw the server down
            if ended:
                return res
            job = Job(self.client, jid) if jid else self._submit(shape, k)
            try:
                job.wait()
            except JobFailed:
                with self._lock:
                    self._ended.add(k)
                raise
            except (ServerUnreachable, ServerError) as e:
                return self._down_while_tuning(k, res, job.id, e)
            with self._lock:
                self._ended.add(k)
            with self._key_lock(k):
                with self._lock:
                    hit = self._mem.get(k)
                fresh = self._fetch(shape, k, hit)
            return replace(fresh, job=job.id)

    def _down_while_tuning(self, k: str, res: Resolution, jid: int,
                           err: TiletuneError) -> Resolution:
        """tune="blocking": the server stayed down (unreachable or 5xx) for the client's
        timeout while a call waited for the shape's job.  As for a server down at the call:
        the answer known before (``res``, untuned) marked stale, kept in memory for ``ttl``
        and not asked for again before ``retry_down``; the job stays the shape's, so a call
        once the server is back waits for it rather than submitting another."""
        stale = replace(res, stale=True, job=jid)
        with self._lock:
            self._down_until = time.monotonic() + self.retry_down
            self._mem[k] = (time.monotonic(), stale)
        warnings.warn(f"tiletune: the server went down while waiting for tuning job {jid} of "
                      f"{k} ({err}); using the untuned config", stacklevel=4)
        return stale

    def _tune_lock(self, k: str) -> threading.Lock:
        with self._lock:
            return self._tune_locks.setdefault(k, threading.Lock())

    def _start_tuning(self, shape: Dict[str, Any], k: str, res: Resolution) -> Resolution:
        if res.stale:
            return res
        if self.tune_mode == "blocking":
            return self._tune_blocking(shape, k, res)
        with self._lock:
            if k in self._jobs:
                return res
            self._jobs[k] = 0                    # claimed: one job per shape and process
        try:
            job = self._submit(shape, k)
        except TiletuneError as e:
            with self._lock:
                self._jobs.pop(k, None)
            self.errors.append(e)
            warnings.warn(f"tiletune: cannot submit a tuning job for {k}: {e}", stacklevel=4)
            return res
        t = threading.Thread(target=self._follow, args=(job, shape, k),
                             name=f"tiletune-job-{job.id}", daemon=True)
        with self._lock:
            self._threads.append(t)
        t.start()
        return replace(res, job=job.id)

    def _follow(self, job: Any, shape: Dict[str, Any], k: str) -> None:
        """Background thread: wait for the job, then re-resolve the shape from the server."""
        try:
            job.wait(raise_on_failure=False)
            self.resolve_shape(shape, refresh=True)
        except (TiletuneError, OSError) as e:
            self.errors.append(e)

    def wait_tuning(self, timeout: Optional[float] = None) -> bool:
        """Wait for the background jobs started so far; True when all have been followed."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._lock:
            threads = list(self._threads)
        for t in threads:
            t.join(None if deadline is None else max(0.0, deadline - time.monotonic()))
        return not any(t.is_alive() for t in threads)

    def jobs(self) -> Dict[str, int]:
        """Shape key -> id of the tuning job this process submitted for it."""
        with self._lock:
            return {k: v for k, v in self._jobs.items() if v}

    def cache_clear(self) -> None:
        """Forget the in-process cache (the disk cache stays)."""
        with self._lock:
            self._mem.clear()
            self._hash = None
            self._down_until = 0.0


def autotune(template: str, key: Union[Sequence[str], Mapping[str, str]], target: str,
             **options: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorate a kernel factory so that its tunables come from tiletune.

    ``template``: template name on the server; ``key``: the factory's shape arguments, as a
    list of names equal to the template's inputs or a ``{argument: input}`` mapping;
    ``target``: ``"a2"``, ``"a3"`` or a SoC name.  Options: ``tune`` (None, ``"background"``,
    ``"blocking"``), ``backend``/``strategy``/``budget``/``seed`` (for the tuning job;
    ``backend`` also selects which stored results count), ``client`` or ``url``/``token``,
    ``nearest`` (default True), ``predict`` (default True), ``default`` (config used when
    nothing else is known), ``ttl`` (seconds an in-process answer is reused before the server
    is asked again; None = forever), ``retry_down`` (seconds to wait before asking a server
    that was unreachable again), ``cache_dir``, ``disk_cache``, ``template_hash`` (pin a
    template version).

    The returned function keeps the factory's name, signature and docstring
    (``functools.wraps``) and has ``.resolve(*args, **kw)``, ``.autotuner``,
    ``.wait_tuning(timeout)`` and ``.cache_clear()``."""

    def deco(fn: Callable[..., Any]) -> Callable[..., Any]:
        tuner = Autotuner(fn, template, key, target, **options)

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            return tuner(*args, **kwargs)

        wrapper.autotuner = tuner                  # type: ignore[attr-defined]
        wrapper.resolve = tuner.resolve            # type: ignore[attr-defined]
        wrapper.wait_tuning = tuner.wait_tuning    # type: ignore[attr-defined]
        wrapper.cache_clear = tuner.cache_clear    # type: ignore[attr-defined]
        return wrapper

    return deco


__all__ = ["autotune", "Autotuner", "Resolution", "SOURCES"]
