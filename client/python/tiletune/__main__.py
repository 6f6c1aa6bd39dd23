# SPDX-License-Identifier: MIT
"""__main__.py - ``python3 -m tiletune``: best, tune and export for scripts without tlctl.

Exit codes are tlctl's (docs/tlctl.md): 0 success, 2 usage, 3 server unreachable,
4 authentication (401/403), 5 other error answers, 6 the waited-for job failed or was
cancelled, 130 interrupted (the job keeps running); 141 when stdout's reader has gone
(``| head``), quietly, as a shell reports tlctl killed by SIGPIPE.
"""
from __future__ import annotations

import argparse
import json
import os
import urllib.parse
import sys
from typing import Any, Dict, List, Optional

from . import __version__
from .client import Client
from .config import parse_timeout
from .errors import APIError, Forbidden, JobFailed, ServerUnreachable, TiletuneError, Unauthorized

EXIT_OK, EXIT_USAGE, EXIT_UNREACHABLE, EXIT_AUTH, EXIT_API, EXIT_JOB, EXIT_INT = (
    0, 2, 3, 4, 5, 6, 130)
EXIT_PIPE = 128 + 13                    # stdout closed (| head): as tlctl killed by SIGPIPE


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python3 -m tiletune",
        description="tiletune client: best configs, tuning jobs, exports.  Server and token "
                    "from --url/--token, TILETUNE_URL/TILETUNE_TOKEN or "
                    "~/.config/tiletune/tlctl.conf (as tlctl).",
        epilog="exit codes: 0 ok, 2 usage, 3 unreachable, 4 auth (401/403), 5 error answer, "
               "6 job failed/cancelled, 130 interrupted")
    p.add_argument("--url", help="server URL (default http://127.0.0.1:7878)")
    p.add_argument("--token", help="bearer token")
    p.add_argument("--config-file", help="tlctl.conf to read")
    p.add_argument("--timeout", type=_timeout, help="request timeout in seconds, 1..86400 "
                                                    "(default 60)")
    p.add_argument("--version", action="version", version=f"tiletune {__version__}")
    sub = p.add_subparsers(dest="cmd", metavar="COMMAND")
    sub.required = True

    b = sub.add_parser("best", help="the best tuned config of a shape (GET /v1/best)",
                       description="the best tuned config of a shape (GET /v1/best)")
    _shape_args(b)
    b.add_argument("--nearest", action="store_true",
                   help="when the exact shape was not tuned, take the closest tuned one")
    b.add_argument("-b", "--backend", help="only configs measured by this backend")
    b.add_argument("-f", "--format", choices=["table", "json", "env", "args"], default="table",
                   help="table (default), json, env (TT_BLOCK_M=128 lines), args "
                        "(--block_M=128 ...)")

    t = sub.add_parser("tune", help="submit a tuning job (POST /v1/tune)",
                       description="submit a tuning job (POST /v1/tune); prints the job id, "
                                   "with --wait a progress line and the result")
    _shape_args(t)
    t.add_argument("-b", "--backend", help="sim (default), model, replay:NAME, cmd:NAME")
    t.add_argument("-s", "--strategy",
                   help="auto (default: model-bo with a kernel program, else bo), bo, model-bo, "
                        "model-refine, model-topk, evolution, anneal, random, exhaustive")
    t.add_argument("--objective", help="what ranks a config: median (default), mean, min; "
                                       "recorded (replay:)")
    t.add_argument("-n", "--budget", type=_int_in(1, 1000000),
                   help="trials to measure (default 32)")
    t.add_argument("--seed", type=_int_in(-(1 << 62), 1 << 62), help="random seed (default 0)")
    t.add_argument("-w", "--wait", action="store_true",
                   help="follow the job with a progress line and print the result")
    t.add_argument("--json", action="store_true", help="print the server's JSON")

    e = sub.add_parser("export", help="export tuned configs (GET /v1/export)",
                       description="export tuned configs for AOT builds (GET /v1/export)")
    e.add_argument("template", nargs="?", help="template name (or -T, as tlctl)")
    e.add_argument("-T", "--template", dest="template_opt", metavar="TEMPLATE",
                   help="template name, as tlctl export -T")
    e.add_argument("-t", "--target", required=True, help="target SoC (a2, a3, ...)")
    e.add_argument("-f", "--format", default="json",
                   choices=["json", "t4", "specializations", "registry-inc", "c-header"], help="output format")
    e.add_argument("-b", "--backend", help="only configs measured by this backend")
    e.add_argument("--job", type=int, help="t4: the tuning run to export")
    e.add_argument("-p", "--problem", help="t4: the problem K=V,..")
    e.add_argument("-o", "--output", help="write to this file instead of stdout")
    return p


def _timeout(text: str) -> float:
    try:
        return parse_timeout(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _int_in(lo: int, hi: int):
    """An argparse type: an integer in lo..hi (as tlctl checks --budget and --seed)."""
    def parse(text: str) -> int:
        try:
            v = int(text)
        except ValueError:
            v = None
        if v is None or not lo <= v <= hi:
            raise argparse.ArgumentTypeError(f"needs an integer in {lo}..{hi}, got {text!r}")
        return v
    return parse


def _shape_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("template", help="template name, e.g. gemm, or a template document file "
                                    "(a path with '/' or ending in .json), as tlctl")
    p.add_argument("-p", "--problem",
                   help="template inputs, e.g. M=4096,N=4096,K=4096,dtype=float16 (may be "
                        "left out for a template without inputs)")
    p.add_argument("-t", "--target", required=True, help="target SoC (a2, a3 or a full name)")


def _print_best(doc: Dict[str, Any], fmt: str) -> None:
    cfg = doc.get("config") or {}
    if fmt == "json":
        print(json.dumps(doc, indent=2))
    elif fmt == "env":
        for k, v in cfg.items():
            print(f"TT_{k.upper()}={v}")
    elif fmt == "args":
        print(" ".join(f"--{k}={v}" for k, v in cfg.items()))
    else:
        kind = "exact" if doc.get("exact", True) else f"nearest (distance {doc.get('distance')})"
        print(f"{doc.get('template')} on {doc.get('target')} at {doc.get('problem_key')}: {kind}")
        print(f"  measured_by {doc.get('measured_by')} ({doc.get('time_kind')}), "
              f"median {doc.get('median_us')} us, job {doc.get('job')}")
        for k, v in cfg.items():
            print(f"  {k:<12} {v}")


def _no_dup_keys(pairs):
    keys = [k for k, _ in pairs]
    dup = next((k for k in keys if keys.count(k) > 1), None)
    if dup is not None:
        raise ValueError(f"duplicate object key {dup!r}")
    return dict(pairs)


def _template_doc(arg: str) -> Optional[Dict[str, Any]]:
    """The document of a TEMPLATE argument that names a file (a '/' in it or a .json tail,
    as tlctl), None for a template name; ValueError (exit 2) naming the file otherwise."""
    if "/" not in arg and not (len(arg) > 5 and arg.endswith(".json")):
        return None
    try:
        with open(arg, "rb") as f:
            doc = json.loads(f.read().decode("utf-8"), object_pairs_hook=_no_dup_keys)
    except OSError as e:
        raise ValueError(f"cannot read the template file {arg}: {e.strerror}") from None
    except ValueError as e:             # bad JSON, bad UTF-8, a duplicate key
        raise ValueError(f"cannot read the template file {arg}: {e}") from None
    if not isinstance(doc, dict):
        raise ValueError(f"the template file {arg} does not hold a JSON object")
    return doc


def _run(a: argparse.Namespace) -> int:
    c = Client(a.url, a.token, timeout=a.timeout, config_file=a.config_file)
    doc = _template_doc(a.template) if a.cmd in ("best", "tune") else None
    info = None                         # best of a file: that version (validate: name, hash)
    if doc is not None and a.cmd == "best":
        name = str(doc.get("name") or "unnamed")
        info = c.request("POST", f"/v1/templates/{urllib.parse.quote(name, safe='')}/validate",
                         json_body=doc, idempotent=True)
    if a.cmd in ("best", "tune") and a.problem is None:
        if a.cmd == "best":             # as tlctl: -p may be left out only without inputs
            needed = [i.get("name") for i in (info or c.template(a.template)).get("inputs") or []
                      if isinstance(i, dict) and "default" not in i]
            if needed:
                print(f"tiletune best: --problem is required: template {a.template} has "
                      "inputs without a default", file=sys.stderr)
                return EXIT_USAGE
        a.problem = ""
    if a.cmd == "best":
        res = c.best(info["name"] if info else a.template, a.target, a.problem,
                     nearest=a.nearest, backend=a.backend, hash=info["hash"] if info else None)
        _print_best(res, a.format)
        return EXIT_OK
    if a.cmd == "tune":
        job = c.tune(doc if doc is not None else a.template, a.target, a.problem,
                     backend=a.backend, strategy=a.strategy,
                     budget=a.budget, seed=a.seed,
                     options={"objective": a.objective} if a.objective else None)
        if not a.wait:
            print(json.dumps(job.submitted, indent=2) if a.json else job.id)
            return EXIT_OK
        try:
            info = job.wait(progress=True)
        except KeyboardInterrupt:
            print(f"\ninterrupted; job {job.id} keeps running (cancel: DELETE /v1/jobs/{job.id})",
                  file=sys.stderr)
            return EXIT_INT
        if a.json:
            print(json.dumps(info, indent=2))
        else:
            best = info.get("best") or {}
            print(f"job {job.id} {info.get('state')}: best {best.get('measured_us')} us "
                  f"({best.get('measured_by')})")
            for k, v in (best.get("config") or {}).items():
                print(f"  {k:<12} {v}")
        return EXIT_OK
    out = c.export(a.template or a.template_opt, a.target, format=a.format, backend=a.backend, job=a.job,
                   problem=a.problem)
    text = out if isinstance(out, str) else json.dumps(out, indent=2) + "\n"
    if a.output:
        with open(a.output, "w", encoding="utf-8") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return EXIT_OK


def _output_closed() -> int:
    """stdout's reader has gone (``| head``): nothing more to say, and nothing for Python to
    flush at exit.  The exit code is what a shell reports for tlctl, killed by SIGPIPE."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass
    return EXIT_PIPE


def main(argv: Optional[List[str]] = None) -> int:
    p = _parser()
    a = p.parse_args(argv)
    if a.cmd == "export" and bool(a.template) == bool(a.template_opt):
        p.error("export needs the template once: export TEMPLATE or export -T TEMPLATE")
    try:
        rc = _run(a)
        sys.stdout.flush()               # a closed pipe shows here, not at interpreter exit
        return rc
    except BrokenPipeError:
        return _output_closed()
    except ServerUnreachable as e:
        print(f"tiletune: {e.message}", file=sys.stderr)
        return EXIT_UNREACHABLE
    except (Unauthorized, Forbidden) as e:
        print(f"tiletune: {e}", file=sys.stderr)
        return EXIT_AUTH
    except JobFailed as e:
        print(f"tiletune: {e.message}", file=sys.stderr)
        return EXIT_JOB
    except (APIError, TiletuneError) as e:
        print(f"tiletune: {e}", file=sys.stderr)
        # what could not be decoded (here or by the server) is a usage error, as in tlctl
        return EXIT_USAGE if e.code == "bad_encoding" else EXIT_API
    except (OSError, ValueError) as e:
        print(f"tiletune: {e}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return EXIT_INT


if __name__ == "__main__":
    sys.exit(main())
