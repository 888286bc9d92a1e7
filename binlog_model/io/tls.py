"""TLS for live connections (``tail``, ``mysql://`` snapshots): ``--ssl-mode`` and its files, as
``mysqlbinlog`` names them, stated once.

Strategy: ``TlsOptions`` holds what the user asked for, from command-line flags or a server URL's query
(``mysql://u@h/db?ssl-mode=verify-ca&ssl-ca=/ca.pem``); the two are merged, and a value given both ways
differently is a ``ConfigError``. ``connect_params`` turns the options into pymysql's keyword arguments:
an ``ssl.SSLContext`` that verifies what the mode asks for, or nothing for ``preferred`` (pymysql 1.2 then
uses TLS when the server offers it, unverified), or ``ssl_disabled``. What each mode protects against is
in docs/tail.md.
"""

from __future__ import annotations

import ssl
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Final

from binlog_model.errors import ConfigError

__all__ = ["MODES", "TLS_QUERY_KEYS", "TlsOptions"]

#: ``--ssl-mode`` values, weakest first (mysqlbinlog's, in lower case)
MODES: Final = ("disabled", "preferred", "required", "verify-ca", "verify-identity")
#: the URL query keys (and flag names without ``--``) of the options, by field
TLS_QUERY_KEYS: Final = {"mode": "ssl-mode", "ca": "ssl-ca", "cert": "ssl-cert", "key": "ssl-key"}


def _mode(text: str) -> str:
    """A mode as given (``VERIFY_CA``, ``verify-ca``) in its one spelling."""
    mode = text.strip().lower().replace("_", "-")
    if mode not in MODES:
        raise ConfigError(f"--ssl-mode {text!r}: give one of {', '.join(MODES)}")
    return mode


@dataclass(frozen=True, slots=True)
class TlsOptions:
    """``mode`` None: not given, which means ``verify-ca`` with a CA, ``required`` with a client
    certificate, else ``preferred`` (as the MySQL clients read ``--ssl-ca`` without ``--ssl-mode``)."""

    mode: str | None = None
    ca: str | None = None
    cert: str | None = None
    key: str | None = None

    def __post_init__(self) -> None:
        if self.mode is not None:
            object.__setattr__(self, "mode", _mode(self.mode))
        if (self.cert is None) != (self.key is None):
            raise ConfigError("--ssl-cert and --ssl-key go together: the client certificate and its key")
        if self.mode in ("disabled", "preferred", "required") and self.ca is not None:
            raise ConfigError(f"--ssl-ca is used by --ssl-mode verify-ca or verify-identity only, not "
                              f"{self.mode}: the CA would not be checked")
        if self.mode in ("disabled", "preferred") and self.cert is not None:
            raise ConfigError(f"a client certificate (--ssl-cert) needs --ssl-mode required or stronger, not "
                              f"{self.mode}")

    @property
    def effective_mode(self) -> str:
        if self.mode is not None:
            return self.mode
        return "verify-ca" if self.ca else "required" if self.cert else "preferred"

    @property
    def given(self) -> bool:
        return any(getattr(self, name) is not None for name in TLS_QUERY_KEYS)

    @classmethod
    def from_query(cls, query: Mapping[str, list[str]]) -> TlsOptions:
        """The options in a parsed URL query (``urllib.parse.parse_qs``); other keys are ignored."""
        values: dict[str, str] = {}
        for name, key in TLS_QUERY_KEYS.items():
            given = query.get(key)
            if given:
                if len(set(given)) > 1:
                    raise ConfigError(f"{key} is given twice in the URL, differently")
                values[name] = given[0]
        return cls(**values)

    def merged(self, flags: TlsOptions) -> TlsOptions:
        """These options (a URL's) with ``flags`` (the command line's): ``ConfigError`` when both give one
        differently."""
        merged: dict[str, str] = {}
        for name, key in TLS_QUERY_KEYS.items():
            ours, theirs = getattr(self, name), getattr(flags, name)
            if ours is not None and theirs is not None and ours != theirs:
                raise ConfigError(f"--{key} {theirs} conflicts with {key}={ours} in the URL: give it once")
            value = ours if ours is not None else theirs
            if value is not None:
                merged[name] = value
        return replace(self, **merged)

    def query_items(self) -> list[tuple[str, str]]:
        """The options given, as URL query items."""
        return [(key, getattr(self, name)) for name, key in TLS_QUERY_KEYS.items()
                if getattr(self, name) is not None]

    def connect_params(self) -> dict[str, Any]:
        """pymysql ``connect`` keyword arguments for this mode (a TCP connection; a unix socket is local
        and takes none). ``ConfigError`` when a certificate or key file cannot be loaded."""
        mode = self.effective_mode
        if mode == "disabled":
            return {"ssl_disabled": True}
        if mode == "preferred":
            return {}       # pymysql >= 1.2: TLS when the server offers it, unverified
        try:
            if mode == "required":
                context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
                context.check_hostname = False
                context.verify_mode = ssl.CERT_NONE
            else:
                context = ssl.create_default_context(cafile=self.ca)
                context.check_hostname = mode == "verify-identity"
                # certificates servers make for themselves (MySQL's auto_generate_certs) are not strict
                # RFC 5280 (no key usage); the chain and the name are still checked
                context.verify_flags &= ~ssl.VERIFY_X509_STRICT
            if self.cert is not None:
                context.load_cert_chain(self.cert, self.key)
        except (OSError, ssl.SSLError) as err:
            files = ", ".join(f"--{key} {value}" for key, value in self.query_items() if key != "ssl-mode")
            raise ConfigError(f"cannot load the TLS files ({files}): {getattr(err, 'strerror', None) or err}"
                              ) from None
        return {"ssl": context}
