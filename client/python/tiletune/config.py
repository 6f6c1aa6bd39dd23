# SPDX-License-Identifier: MIT
"""config.py - where the client finds its server URL, token and timeout, as tlctl does.

Precedence (docs/tlctl.md): default < config file < environment < arguments.  The config file
is ``$TLCTL_CONFIG``, else ``$XDG_CONFIG_HOME/tiletune/tlctl.conf``, else
``~/.config/tiletune/tlctl.conf``; it holds ``key = value`` lines (``url``, ``token``,
``timeout`` in 1..86400 seconds), read as tlctl reads them: a line starting with ``#`` is a
comment, and so is the rest of a line from a ``#`` that follows a space or tab (``a#b`` stays
whole); one pair of double or single quotes around a value is not part of it; a line
without ``=``, an unknown key or a bad timeout is a ``ValueError`` naming the
file and line.  A missing file is not an error; an explicitly named one that cannot be read
is.
"""
from __future__ import annotations

import math
import os
import re
import urllib.parse
from typing import Dict, Optional, Tuple

DEFAULT_URL = "http://127.0.0.1:7878"
DEFAULT_TIMEOUT = 60.0


def config_path(explicit: Optional[str] = None) -> Tuple[str, bool]:
    """The config file to read and whether it was named explicitly (argument or TLCTL_CONFIG)."""
    if explicit:
        return explicit, True
    env = os.environ.get("TLCTL_CONFIG")
    if env:
        return env, True
    xdg = os.environ.get("XDG_CONFIG_HOME")
    base = xdg if xdg else os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(base, "tiletune", "tlctl.conf"), False


_COMMENT = re.compile(r"[ \t]#")
KEYS = ("url", "token", "timeout")


def parse_timeout(text: str) -> float:
    """A timeout as tlctl's ``--timeout`` and config file take it: whole seconds in 1..86400.
    Raises ValueError."""
    t = text.strip()
    if not re.fullmatch(r"[+-]?[0-9]+", t) or not 1 <= int(t) <= 86400:
        raise ValueError(f"timeout needs seconds in 1..86400, got {text!r}")
    return float(int(t))


def read_config_file(path: str) -> Dict[str, str]:
    """Parse ``key = value`` lines as tlctl does.  Raises OSError if unreadable and
    ValueError (``path:line: ...``) for a malformed line, an unknown key or a bad timeout."""
    out: Dict[str, str] = {}
    with open(path, "rb") as f:
        raw = f.read()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ValueError(f"{path}: not valid UTF-8 (byte {e.start})") from None
    for ln, line in enumerate(text.split("\n"), 1):
        line = line.strip(" \t\r\n")
        if not line or line.startswith("#"):
            continue
        if "=" not in line:
            raise ValueError(f"{path}:{ln}: expected key = value")
        k, v = line.split("=", 1)
        m = _COMMENT.search(v)
        if m:
            v = v[:m.start()]
        k, v = k.strip(" \t"), v.strip(" \t")
        if len(v) >= 2 and v[0] in "\"'" and v[-1] == v[0]:
            v = v[1:-1]                     # one pair of quotes, as tlctl
        if k not in KEYS:
            raise ValueError(f"{path}:{ln}: unknown key {k!r} (url, token, timeout)")
        if k == "timeout":
            try:
                parse_timeout(v)
            except ValueError as e:
                raise ValueError(f"{path}:{ln}: {e}") from None
        out[k] = v
    return out


def check_url(url: str, source: str = "arg") -> None:
    """Raise ValueError unless ``url`` is an http:// or https:// URL with a host, a valid
    port and no query or fragment, as tlctl checks it (``source`` names where it came from).
    Such a URL used to be tried as given: "notaurl" and "ftp://h" failed late and differently
    from tlctl (urllib speaks FTP)."""
    why = None
    try:
        u = urllib.parse.urlsplit(url)
        if u.scheme.lower() not in ("http", "https"):
            why = "the scheme must be http:// or https://"
        elif not u.hostname:
            why = "no host"
        elif u.query or u.fragment or "?" in url or "#" in url:
            why = "a server URL has no ?query or #fragment"
        else:
            u.port    # raises ValueError when out of range or not a number
    except ValueError as e:
        why = str(e)
    if why:
        raise ValueError(f"bad server URL {url!r} (from {source}): {why}")


class Settings:
    """The resolved url, token and timeout, each with the source it came from
    (``default``, ``file``, ``env`` or ``arg``)."""

    def __init__(self, url: Optional[str] = None, token: Optional[str] = None,
                 timeout: Optional[float] = None, config_file: Optional[str] = None):
        self.url, self.token, self.timeout = DEFAULT_URL, None, DEFAULT_TIMEOUT
        self.source = {"url": "default", "token": "default", "timeout": "default"}
        path, explicit = config_path(config_file)
        self.config_file = path
        try:
            conf = read_config_file(path)
        except FileNotFoundError:
            if explicit:
                raise
            conf = {}
        self._take("url", conf.get("url"), "file")
        self._take("token", conf.get("token"), "file")
        self._take("timeout", conf.get("timeout"), "file")
        self._take("url", os.environ.get("TILETUNE_URL"), "env")
        self._take("token", os.environ.get("TILETUNE_TOKEN"), "env")
        self._take("url", url, "arg")
        self._take("token", token, "arg")
        self._take("timeout", timeout, "arg")
        check_url(self.url, self.source["url"])
        self.url = self.url.rstrip("/")

    def _take(self, key: str, value, source: str) -> None:
        if value is None or value == "":
            return
        if key in ("url", "token") and any(ord(ch) < 0x20 or ord(ch) == 0x7f for ch in value):
            # would cut or forge a header line; the value (a secret) is not shown, as tlctl
            raise ValueError(f"the {key} (from {source}) holds a control character")
        if key == "timeout":
            value = float(value)
            if not (math.isfinite(value) and value > 0):
                raise ValueError(f"timeout must be a finite number > 0 (from {source})")
        setattr(self, key, value)
        self.source[key] = source
