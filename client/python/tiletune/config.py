# SPDX-License-Identifier: MIT
"""config.py - where the client finds its server URL, token and timeout, as tlctl does.

Precedence (docs/tlctl.md): default < config file < environment < arguments.  The config file
is ``$TLCTL_CONFIG``, else ``$XDG_CONFIG_HOME/tiletune/tlctl.conf``, else
``~/.config/tiletune/tlctl.conf``; it holds ``key = value`` lines (``url``, ``token``,
``timeout``), ``#`` starts a comment, unknown keys are ignored.  A missing file is not an
error; an explicitly named one that cannot be read is.
"""
from __future__ import annotations

import os
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


def read_config_file(path: str) -> Dict[str, str]:
    """Parse ``key = value`` lines; ``#`` starts a comment.  Raises OSError if unreadable."""
    out: Dict[str, str] = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if not line or "=" not in line:
                continue
            k, v = line.split("=", 1)
            out[k.strip()] = v.strip().strip('"').strip("'")
    return out


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
        self.url = self.url.rstrip("/")

    def _take(self, key: str, value, source: str) -> None:
        if value is None or value == "":
            return
        if key == "timeout":
            value = float(value)
            if value <= 0:
                raise ValueError(f"timeout must be > 0 (from {source})")
        setattr(self, key, value)
        self.source[key] = source
