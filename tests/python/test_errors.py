# SPDX-License-Identifier: MIT
"""test_errors.py - the exception hierarchy against compiler/tt_err.h and a live daemon."""
import os
import re

import urllib.error
import urllib.request

import pytest

import tiletune
from tiletune import errors
from conftest import ADMIN, READ, SOURCE_DIR, TUNE

ROW = re.compile(r'X\((TT_\w+),\s*"[^"]*",\s*(\d+),\s*"(\w+)"\)')


def c_table():
    """(API code, HTTP status) rows of TT_ERROR_TABLE, in order, without TT_OK."""
    with open(os.path.join(SOURCE_DIR, "compiler", "tt_err.h")) as f:
        text = f.read()
    body = text[text.index("#define TT_ERROR_TABLE"):text.index("typedef enum tt_rc")]
    rows = [(code, int(status)) for name, status, code in ROW.findall(body) if name != "TT_OK"]
    assert len(rows) > 20, "tt_err.h could not be parsed"
    return rows


def test_codes_match_the_c_error_table():
    py, c = list(errors.CODES), c_table()
    assert py == c, ("client/python/tiletune/errors.py CODES differs from compiler/tt_err.h; "
                     f"missing there: {[x for x in c if x not in py]}, "
                     f"not in tt_err.h: {[x for x in py if x not in c]}")


def test_every_code_has_a_class_under_its_status_class():
    for code, status in c_table():
        cls = tiletune.error_class(code, status)
        assert issubclass(cls, errors.APIError)
        assert cls.default_code == code
        assert issubclass(cls, errors.error_class("no_such_code", status))
        assert getattr(tiletune, cls.__name__) is cls


def test_unknown_code_falls_back_to_the_status_class():
    e = tiletune.from_response(404, {"error": {"code": "brand_new", "message": "m"}})
    assert type(e) is tiletune.NotFound and e.code == "brand_new" and e.status == 404
    e = tiletune.from_response(502, "<html>bad gateway</html>")
    assert isinstance(e, tiletune.ServerError) and "bad gateway" in e.message
    e = tiletune.from_response(418, None)
    assert type(e) is tiletune.APIError and e.message == "HTTP 418"


def test_str_and_pickle_keep_code_message_path():
    import pickle
    e = tiletune.from_response(422, {"error": {"code": "invalid_template", "message": "not an "
                                               "integer", "path": "params.block[1]"}})
    assert isinstance(e, tiletune.InvalidTemplate) and isinstance(e, tiletune.Unprocessable)
    assert str(e) == "params.block[1]: not an integer (invalid_template, HTTP 422)"
    e2 = pickle.loads(pickle.dumps(e))
    assert (type(e2), e2.code, e2.message, e2.path, e2.status) == \
           (type(e), e.code, e.message, e.path, e.status)


def test_unreachable_is_a_connection_error():
    assert issubclass(tiletune.ServerUnreachable, ConnectionError)
    assert issubclass(tiletune.ServerUnreachable, tiletune.TiletuneError)


# -- live mapping ----------------------------------------------------------------------------
def test_400_invalid_argument(daemon):
    c = tiletune.Client(daemon.url, TUNE)
    with pytest.raises(tiletune.BadRequest) as ei:
        c.jobs(state="sleeping")
    assert ei.value.code == "invalid_argument" and ei.value.status == 400
    assert isinstance(ei.value, tiletune.InvalidArgument)
    with pytest.raises(tiletune.InvalidArgument) as ei:
        c.tune("gemm", "a2", "M=64,N=64,K=64", strategy="guess")
    assert ei.value.path == "strategy"


def test_401_unauthorized(daemon):
    with pytest.raises(tiletune.Unauthorized) as ei:
        tiletune.Client(daemon.url).tune("gemm", "a2", "M=64,N=64,K=64")
    assert ei.value.status == 401 and ei.value.code == "unauthorized"
    with pytest.raises(tiletune.Unauthorized):       # a presented token must be valid
        tiletune.Client(daemon.url, "wrong").predict("gemm", "a2", "M=64,N=64,K=64", top=1)


def test_403_forbidden(daemon):
    with pytest.raises(tiletune.Forbidden) as ei:
        tiletune.Client(daemon.url, READ).tune("gemm", "a2", "M=64,N=64,K=64")
    assert ei.value.status == 403 and ei.value.code == "forbidden"
    with pytest.raises(tiletune.Forbidden):
        tiletune.Client(daemon.url, TUNE).request("GET", "/v1/config")
    assert "config" in tiletune.Client(daemon.url, ADMIN).request("GET", "/v1/config")


def test_404_not_found(daemon):
    c = tiletune.Client(daemon.url)
    for call in (lambda: c.job_info(999999), lambda: c.template("no_such_kernel"),
                 lambda: c.best("gemm", "a2", {"M": 3, "N": 5, "K": 7, "dtype": "bfloat16"})):
        with pytest.raises(tiletune.NotFound) as ei:
            call()
        assert ei.value.status == 404 and ei.value.code == "not_found"


def test_409_conflict(daemon):
    c = tiletune.Client(daemon.url, TUNE)
    job = c.tune("gemm", "a2", "M=128,N=128,K=128", budget=2)
    job.wait()
    with pytest.raises(tiletune.Conflict) as ei:
        job.cancel()
    assert ei.value.status == 409


def test_413_too_large(make_daemon):
    d = make_daemon(max_body_bytes=1024)
    with pytest.raises(tiletune.TooLarge) as ei:
        tiletune.Client(d.url, TUNE).import_(b"x" * 4096, format="t4", template="gemm")
    assert ei.value.status == 413 and ei.value.code == "too_large"


def test_422_codes(daemon):
    c = tiletune.Client(daemon.url)
    with pytest.raises(tiletune.InvalidProblem) as ei:
        c.predict("gemm", "a2", {"M": 4096}, top=1)
    assert ei.value.status == 422 and isinstance(ei.value, tiletune.Unprocessable)
    with pytest.raises(tiletune.InvalidTemplate) as ei:
        c.request("POST", "/v1/templates/bad/validate",
                  json_body={"tiletune": 1, "name": "bad", "inputs": {"N": "int"},
                             "params": {"block": [256, "x"]}}, idempotent=True)
    assert ei.value.path == "params.block[1]"
    with pytest.raises(tiletune.InvalidTarget) as ei:
        c.best("gemm", "h/100", "M=64,N=64,K=64")
    assert ei.value.path == "target"
    # a safe name may be an imported device's: not found, and said not to be configured
    with pytest.raises(tiletune.NotFound) as ei:
        c.best("gemm", "h100", "M=64,N=64,K=64")
    assert '"h100" is not a configured target' in str(ei.value)


def test_429_limit_exceeded(make_daemon):
    d = make_daemon(max_jobs_per_token=1, workers=0)    # no workers: the first job stays queued
    c = tiletune.Client(d.url, TUNE)
    first = c.tune("gemm", "a2", "M=64,N=64,K=64", budget=2)
    with pytest.raises(tiletune.LimitExceeded) as ei:
        c.tune("gemm", "a2", "M=64,N=64,K=128", budget=2)
    assert ei.value.status == 429 and ei.value.code == "limit_exceeded"
    # no Retry-After: a slot frees when one of the token's jobs ends, which the daemon cannot
    # foretell (old code: "Retry-After: 1", an invitation to resubmit every second)
    req = urllib.request.Request(d.url + "/v1/tune", method="POST", headers={
        "Authorization": f"Bearer {TUNE}", "Content-Type": "application/json"},
        data=b'{"template": "gemm", "target": "a2", "problem": "M=64,N=64,K=256"}')
    with pytest.raises(urllib.error.HTTPError) as he:
        urllib.request.build_opener(urllib.request.ProxyHandler({})).open(req, timeout=30)
    assert he.value.code == 429 and he.value.headers.get("Retry-After") is None
    assert first.cancel()
    assert first.state == "cancelled"
