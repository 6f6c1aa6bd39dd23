# SPDX-License-Identifier: MIT
"""cache.py - the on-disk cache of resolved configs behind @tiletune.autotune.

Layout under the root (``$XDG_CACHE_HOME/tiletune``, default ``~/.cache/tiletune``)::

    v1/<server>/<template>/hash.json                  last template hash seen on the server
    v1/<server>/<template>/<target>/<hash>/<shape>.json   one resolved config per shape
    v1/<server>/<template>/<target>/<hash>/backend-<backend>/<shape>.json   (``backend=``)

``<server>`` is the URL made safe for a file name plus a short SHA-256 of it, ``<shape>`` the
shape key (``M=4096,N=4096,K=4096,dtype=float16``) made safe plus a short hash of it.  An
autotuner restricted to a backend (``backend="sim"``) has its own files: only results of that
backend count for it, so it never reads another backend's answer.  Every
file is written to a temporary file in the same directory and renamed over the old one
(``os.replace``), so readers in other threads or processes see the old or the new record,
never half of one.  Unreadable or corrupt files read as missing.  Thread- and process-safe.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from typing import Any, Dict, Optional

_UNSAFE = re.compile(r"[^A-Za-z0-9._=,+-]+")


def default_root() -> str:
    """``$XDG_CACHE_HOME/tiletune``, else ``~/.cache/tiletune``."""
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = xdg if xdg else os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "tiletune")


def _safe(text: str, limit: int = 80) -> str:
    h = hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]
    s = _UNSAFE.sub("_", text).strip("._")[:limit]
    return f"{s}-{h}" if s else h


def write_json_atomic(path: str, doc: Any) -> None:
    """Write ``doc`` as JSON to ``path`` atomically (temp file + rename).  Raises OSError."""
    d = os.path.dirname(path)
    os.makedirs(d, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".json", dir=d)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(doc, f, indent=1, sort_keys=True)
            f.write("\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def read_json(path: str) -> Optional[Dict[str, Any]]:
    """The JSON object in ``path``, or None when missing, unreadable or not an object."""
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError, RecursionError):      # RecursionError: absurdly nested
        return None
    return doc if isinstance(doc, dict) else None


class DiskCache:
    """Resolved configs on disk, keyed by (server, template hash, target, shape)."""

    def __init__(self, root: Optional[str] = None):
        self.root = os.path.join(root or default_root(), "v1")

    def _tdir(self, server: str, template: str) -> str:
        return os.path.join(self.root, _safe(server), _safe(template, 40))

    def shape_path(self, server: str, template: str, thash: str, target: str,
                   shape_key: str, backend: Optional[str] = None) -> str:
        """The file of one shape's record (of the answers of ``backend``; None: any)."""
        d = os.path.join(self._tdir(server, template), _safe(target, 40), _safe(thash, 40))
        if backend:
            d = os.path.join(d, "backend-" + _safe(backend, 40))
        return os.path.join(d, _safe(shape_key) + ".json")

    def load(self, server: str, template: str, thash: str, target: str,
             shape_key: str, backend: Optional[str] = None) -> Optional[Dict[str, Any]]:
        """The stored record, or None.  A record whose key fields differ (a hash collision
        of the file name) is ignored."""
        doc = read_json(self.shape_path(server, template, thash, target, shape_key, backend))
        if not doc or doc.get("shape_key") != shape_key or doc.get("server") != server:
            return None
        if (doc.get("backend") or "") != (backend or ""):
            return None
        if not isinstance(doc.get("config"), dict):
            return None
        return doc

    def store(self, record: Dict[str, Any]) -> None:
        """Write a record (needs server, template, template_hash, target, shape_key, config;
        ``backend`` when the answer is restricted to one).  Raises OSError when the cache
        directory is not writable."""
        p = self.shape_path(record["server"], record["template"], record["template_hash"],
                            record["target"], record["shape_key"], record.get("backend"))
        write_json_atomic(p, record)

    def last_hash(self, server: str, template: str) -> Optional[str]:
        """The template hash last seen on the server (for resolving while it is down)."""
        doc = read_json(os.path.join(self._tdir(server, template), "hash.json"))
        h = doc.get("hash") if doc else None
        return h if isinstance(h, str) and h else None

    def set_hash(self, server: str, template: str, thash: str) -> None:
        """Remember the template's current hash (no write when unchanged)."""
        if self.last_hash(server, template) == thash:
            return
        write_json_atomic(os.path.join(self._tdir(server, template), "hash.json"),
                          {"server": server, "template": template, "hash": thash})
