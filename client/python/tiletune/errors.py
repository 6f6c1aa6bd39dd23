# SPDX-License-Identifier: MIT
"""errors.py - one exception hierarchy that mirrors the API's error codes (compiler/tt_err.h).

Every error the server answers with is ``{"error": {"code", "message", "path"}}`` and an HTTP
status; both come from the one error table of the C code, ``compiler/tt_err.h``.  ``CODES``
below is that table's (API code, HTTP status) column in the same order; a test parses
tt_err.h and fails when the two differ, so they cannot drift apart.

The classes are grouped by HTTP status (``NotFound``, ``Unprocessable``, ...), and codes that
share a status have their own subclass (``InvalidTemplate``, ``InvalidProblem``, ...), so
``except tiletune.Unprocessable`` and ``except tiletune.InvalidProblem`` both work.
Transport failures (server down, refused, timed out) are ``ServerUnreachable``, which is also
a builtin ``ConnectionError``; an answer cut off or not JSON is its subclass ``BadAnswer``.
"""
from __future__ import annotations

from typing import Dict, Optional, Tuple, Type


class TiletuneError(Exception):
    """Base of every error this package raises.

    ``code`` is the API error code string (``"invalid_problem"``), ``message`` the server's
    sentence, ``path`` the JSON path inside the request the error is about (``""`` when the
    error is not about a document), ``status`` the HTTP status (``None`` when the server
    was not reached)."""

    default_code = "internal"

    def __init__(self, message: str = "", code: Optional[str] = None, path: str = "",
                 status: Optional[int] = None):
        self.code = code or self.default_code
        self.message = message
        self.path = path or ""
        self.status = status
        super().__init__(str(self))

    def __str__(self) -> str:
        where = f"{self.path}: " if self.path else ""
        tail = f"{self.code}, HTTP {self.status}" if self.status else self.code
        return f"{where}{self.message} ({tail})"

    def __reduce__(self):
        return (type(self), (self.message, self.code, self.path, self.status))


class ServerUnreachable(TiletuneError, ConnectionError):
    """The server could not be reached (refused, DNS, timeout) after all retries."""

    default_code = "unreachable"


class BadAnswer(ServerUnreachable):
    """The server's answer could not be read: the connection closed in the middle of it, or
    it is not the JSON document the API sends (a proxy's HTML page, a truncated body).  A
    ``ServerUnreachable``, as what answered was not (or not wholly) tiletuned."""

    default_code = "bad_answer"


class JobFailed(TiletuneError):
    """``Job.wait()``: the job ended ``failed`` or ``cancelled`` (``code`` is the state)."""

    default_code = "failed"


class APIError(TiletuneError):
    """The server answered with an error document."""


# -- by HTTP status -------------------------------------------------------------------------
class BadRequest(APIError):
    """400: the request is malformed or has an invalid argument."""
    default_code = "invalid_argument"


class Unauthorized(APIError):
    """401: missing, unknown or malformed bearer token."""
    default_code = "unauthorized"


class Forbidden(APIError):
    """403: the token lacks the scope the route needs."""
    default_code = "forbidden"


class NotFound(APIError):
    """404: no such job, template, target, or no tuned config for the shape."""
    default_code = "not_found"


class MethodNotAllowed(APIError):
    """405."""
    default_code = "method_not_allowed"


class Conflict(APIError):
    """409: conflicts with existing state (e.g. cancelling a finished job)."""
    default_code = "conflict"


class TooLarge(APIError):
    """413: the request body exceeds the server's max_body_bytes."""
    default_code = "too_large"


class Unprocessable(APIError):
    """422: the document is well-formed but not acceptable (template, problem, config...)."""
    default_code = "invalid_argument"


class LimitExceeded(APIError):
    """429: too many queued + running jobs for this token."""
    default_code = "limit_exceeded"


class ServerError(APIError):
    """5xx: the server failed (database, out of memory, internal)."""
    default_code = "internal"


_BY_STATUS: Dict[int, Type[APIError]] = {
    400: BadRequest, 401: Unauthorized, 403: Forbidden, 404: NotFound, 405: MethodNotAllowed,
    409: Conflict, 413: TooLarge, 422: Unprocessable, 429: LimitExceeded,
}

# (API code, HTTP status) in the order of TT_ERROR_TABLE in compiler/tt_err.h, "ok" excluded.
CODES: Tuple[Tuple[str, int], ...] = (
    ("out_of_memory", 503), ("invalid_argument", 400), ("malformed_json", 400),
    ("invalid_template", 422), ("invalid_expression", 422), ("invalid_problem", 422),
    ("invalid_config", 422), ("infeasible", 422), ("overflow", 422),
    ("division_by_zero", 422), ("domain_error", 422), ("invalid_target", 422),
    ("not_found", 404), ("conflict", 409), ("too_large", 413), ("limit_exceeded", 429),
    ("unauthorized", 401), ("forbidden", 403), ("io_error", 500), ("database_error", 503),
    ("deadlock", 422), ("unsupported", 422), ("build_failed", 422), ("build_timeout", 422),
    ("run_failed", 422), ("run_timeout", 422), ("wrong_result", 422), ("cancelled", 409),
    ("unavailable", 503), ("internal", 500), ("method_not_allowed", 405), ("timeout", 503),
    ("over_budget", 422), ("busy", 503), ("uri_too_long", 414),
    ("bad_encoding", 400), ("headers_too_large", 431),
)


def _class_name(code: str) -> str:
    return "".join(p.capitalize() for p in code.split("_"))


def _status_class(status: int) -> Type[APIError]:
    if status in _BY_STATUS:
        return _BY_STATUS[status]
    return ServerError if status >= 500 else APIError


def _build() -> Dict[str, Type[APIError]]:
    """One class per code: the status class itself when the code names it (``not_found`` is
    ``NotFound``), else a subclass of the status class named after the code."""
    by_code: Dict[str, Type[APIError]] = {}
    for code, status in CODES:
        base = _status_class(status)
        if base.__name__ == _class_name(code):
            by_code[code] = base
            continue
        name = _class_name(code)
        if name in ("IoError",):
            name = "IOFailure"          # do not shadow the builtin IOError
        elif name == "Timeout":
            name = "ServerTimeout"
        cls = type(name, (base,), {"default_code": code, "__module__": __name__,
                                   "__doc__": f"HTTP {status} ``{code}``."})
        by_code[code] = cls
    return by_code


ERRORS: Dict[str, Type[APIError]] = _build()
globals().update({cls.__name__: cls for cls in ERRORS.values()})


def error_class(code: Optional[str], status: int) -> Type[APIError]:
    """The class for an API code; unknown codes (a newer server) fall back to the class of
    the HTTP status, so ``except NotFound`` still works."""
    cls = ERRORS.get(code or "")
    if cls is not None:
        return cls
    return _status_class(status)


def from_response(status: int, body: object) -> APIError:
    """Build the exception for an error answer (``body`` is the decoded JSON or text)."""
    code, message, path = None, "", ""
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        e = body["error"]
        code = e.get("code") if isinstance(e.get("code"), str) else None
        message = str(e.get("message") or "")
        path = str(e.get("path") or "")
    elif isinstance(body, str):
        message = body.strip()[:300]
    cls = error_class(code, status)
    return cls(message or f"HTTP {status}", code or cls.default_code, path, status)


__all__ = ["TiletuneError", "ServerUnreachable", "JobFailed", "APIError", "BadRequest",
           "Unauthorized", "Forbidden", "NotFound", "MethodNotAllowed", "Conflict", "TooLarge",
           "Unprocessable", "LimitExceeded", "ServerError", "BadAnswer", "CODES", "ERRORS",
           "error_class", "from_response"] + sorted({c.__name__ for c in ERRORS.values()} -
                                     {"NotFound", "Unauthorized", "Forbidden", "Conflict",
                                      "TooLarge", "LimitExceeded", "MethodNotAllowed"})
