# SPDX-License-Identifier: MIT
"""job.py - tiletune.Job: a submitted tuning job, its live best and wait(progress=True).

``wait()`` follows the job's Server-Sent Events stream (``/v1/jobs/{id}/events``) and falls
back to polling ``GET /v1/jobs/{id}`` when the stream cannot be read (a proxy that buffers,
a dropped connection).  While polling, a server that is down (unreachable or answering
5xx, e.g. restarting: the job resumes there) is asked again until it has been down for the
client's ``timeout``; only then does the error reach the caller.  Thread-safety: a Job may be read from several threads; ``wait()``
from one thread at a time.
"""
from __future__ import annotations

import operator
import sys
import threading
import time
from typing import Any, Callable, Dict, Iterator, Optional, Union

from .errors import APIError, JobFailed, ServerError, ServerUnreachable

FINISHED = ("done", "failed", "cancelled")


def as_job_id(value: Any) -> int:
    """A job id: an int (or an int-like such as numpy's) or a string of digits.  A float,
    a bool or None is a TypeError, never truncated (``cancel(2.9)`` must not cancel job 2)."""
    if isinstance(value, str) and value.isascii() and value.isdigit():
        return int(value)
    if not isinstance(value, bool):
        try:
            return operator.index(value)
        except TypeError:
            pass
    raise TypeError(f"a job id is an integer, got {value!r}")
Progress = Union[bool, Callable[[Dict[str, Any]], None], None]


class Job:
    """A tuning job on the server.  ``info`` is the last ``GET /v1/jobs/{id}`` document."""

    def __init__(self, client: Any, job_id: int, submitted: Optional[Dict[str, Any]] = None):
        self.client = client
        self.id = as_job_id(job_id)
        self.submitted = submitted or {}
        self.info: Dict[str, Any] = dict(self.submitted)
        self._lock = threading.Lock()
        self._fetched = 0.0

    def __repr__(self) -> str:
        return f"<tiletune.Job {self.id} {self.state}>"

    def refresh(self, deadline: Optional[float] = None) -> Dict[str, Any]:
        """Fetch the job's state (``GET /v1/jobs/{id}``) and return it; ``deadline`` (a
        time.monotonic() value) bounds the request and its retries."""
        doc = (self.client.job_info(self.id, deadline=deadline) if deadline is not None
               else self.client.job_info(self.id))
        with self._lock:
            self.info = doc
            self._fetched = time.monotonic()
        return doc

    def _fresh(self, max_age: float) -> Dict[str, Any]:
        with self._lock:
            info, age = self.info, time.monotonic() - self._fetched
        if info.get("state") in FINISHED and self._fetched:
            return info
        return self.refresh() if age > max_age else info

    @property
    def state(self) -> str:
        """``queued``, ``running``, ``done``, ``failed`` or ``cancelled`` (last known)."""
        return str(self.info.get("state", "queued"))

    @property
    def done(self) -> bool:
        """True once the job has finished (fetches the state if it may have changed)."""
        return self._fresh(0.5).get("state") in FINISHED

    @property
    def progress(self) -> Dict[str, Any]:
        """``{"done": trials measured, "planned": trials planned}`` (live)."""
        return dict(self._fresh(0.5).get("progress") or {})

    @property
    def best(self) -> Optional[Dict[str, Any]]:
        """The best trial so far (config, measured_us, predicted_us, measured_by), live:
        re-fetched when the last copy is older than half a second; None before the first."""
        return self._fresh(0.5).get("best")

    def _refresh_through_outage(self, poll: float,
                                deadline: Optional[float] = None) -> Dict[str, Any]:
        """refresh(), asking again while the server is down (unreachable or 5xx: restarting,
        database down) for up to the client's timeout (and not past ``deadline``)."""
        down_since = None
        while True:
            try:
                return self.refresh(deadline)
            except (ServerUnreachable, ServerError):
                now = time.monotonic()
                down_since = now if down_since is None else down_since
                limit = float(getattr(self.client, "timeout", 60.0) or 60.0)
                if now - down_since >= limit or (deadline is not None and now >= deadline):
                    raise
                time.sleep(max(poll, 0.2))

    def cancel(self) -> Dict[str, Any]:
        """Cancel the job (``DELETE /v1/jobs/{id}``)."""
        doc = self.client.cancel(self.id)
        self.refresh()
        return doc

    def trials(self, offset: int = 0, limit: int = 100) -> Dict[str, Any]:
        """One page of the job's trials."""
        return self.client.trials(self.id, offset=offset, limit=limit)

    def all_trials(self, page: int = 1000) -> Iterator[Dict[str, Any]]:
        """Every trial of the job in order, page after page (``Client.all_trials``)."""
        return self.client.all_trials(self.id, page=page)

    def watch(self, poll: float = 0.5) -> Iterator[Dict[str, Any]]:
        """Yield progress updates ``{"done", "planned", "best_us", "state"}`` until the job
        finishes: from the event stream, or by polling when the stream fails."""
        ended = False
        try:
            for event, data in self.client.events(self.id):
                if event == "progress":
                    yield data
                elif event == "end":
                    ended = True
                    break
        except (ServerUnreachable, APIError, OSError, ValueError):
            pass                         # fall back to polling below
        if ended:
            return
        last = None
        while True:
            info = self._refresh_through_outage(poll)
            upd = _update(self.id, info)
            if upd != last:
                yield upd
                last = upd
            if info.get("state") in FINISHED:
                return
            time.sleep(poll)

    def wait(self, progress: Progress = False, timeout: Optional[float] = None,
             raise_on_failure: bool = True, poll: float = 0.5) -> Dict[str, Any]:
        """Block until the job finishes and return its final document.

        ``progress=True`` draws a progress line on stderr (trials done/planned, best so far;
        redrawn in place on a terminal, one line per update otherwise); a callable gets each
        update dict instead.  ``timeout`` (seconds) raises ``TimeoutError`` with the job still
        running (``ServerUnreachable`` when the server was down or hung at the end; no
        request waits past the timeout).  A ``failed``/``cancelled`` job raises ``JobFailed``
        unless ``raise_on_failure=False``.  ``KeyboardInterrupt`` (Ctrl-C) leaves the job
        running on the server; ``cancel()`` stops it."""
        start = time.monotonic()
        show = _Bar(self.id) if progress is True else None
        if timeout is None:
            for upd in self.watch(poll):
                if show:
                    show(upd)
                elif callable(progress):
                    progress(upd)
        else:
            self._wait_polling(progress, show, start + timeout, poll)
        if show:
            show.close()
        info = self._refresh_through_outage(poll)
        if raise_on_failure and info.get("state") in ("failed", "cancelled"):
            err = info.get("error")
            msg = err.get("message") if isinstance(err, dict) else (err or "")
            raise JobFailed(f"job {self.id} {info.get('state')}" + (f": {msg}" if msg else ""),
                            info.get("state"))
        return info

    def _wait_polling(self, progress: Progress, show: Optional["_Bar"], deadline: float,
                      poll: float) -> None:
        last = None
        while True:
            info = self._refresh_through_outage(poll, deadline)
            upd = _update(self.id, info)
            if upd != last:
                if show:
                    show(upd)
                elif callable(progress):
                    progress(upd)
                last = upd
            if info.get("state") in FINISHED:
                return
            if time.monotonic() >= deadline:
                if show:
                    show.close()
                raise TimeoutError(f"job {self.id} still {info.get('state')} after the timeout")
            time.sleep(poll)


def _update(job_id: int, info: Dict[str, Any]) -> Dict[str, Any]:
    """A progress update (the shape of an SSE ``progress`` event) from a job document."""
    p, b = info.get("progress") or {}, info.get("best") or {}
    return {"job": job_id, "done": p.get("done", 0), "planned": p.get("planned", 0),
            "best_us": b.get("measured_us"), "state": info.get("state")}


class _Bar:
    """A one-line progress display on stderr."""

    def __init__(self, job_id: int):
        self.job_id = job_id
        self.tty = sys.stderr.isatty()
        self.start = time.monotonic()
        self.drawn = False

    def __call__(self, u: Dict[str, Any]) -> None:
        done, planned = int(u.get("done") or 0), int(u.get("planned") or 0)
        width = 24
        fill = int(width * done / planned) if planned else 0
        bar = "#" * min(width, fill) + "-" * max(0, width - fill)
        best = u.get("best_us")
        best_s = f"best {best:.2f} us" if isinstance(best, (int, float)) else "best -"
        el = time.monotonic() - self.start
        eta = ""
        if planned and 0 < done < planned:
            eta = f", eta {el * (planned - done) / done:.0f}s"
        line = (f"job {self.job_id} [{bar}] {done}/{planned} trials, {best_s}, "
                f"{u.get('state', '')} {el:.1f}s{eta}")
        if self.tty:
            sys.stderr.write("\r\x1b[K" + line)
        else:
            sys.stderr.write(line + "\n")
        sys.stderr.flush()
        self.drawn = True

    def close(self) -> None:
        if self.tty and self.drawn:
            sys.stderr.write("\n")
            sys.stderr.flush()
        self.drawn = False
