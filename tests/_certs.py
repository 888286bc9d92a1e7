"""Certificates for the TLS tests, made by the test: a CA, a server certificate it signs for the host name
``localhost`` only, a client certificate it signs, and a second CA that signs neither. With
``cryptography`` (installed with pymysql's ``rsa`` extra, so in ``dev``), else with the ``openssl``
command."""

from __future__ import annotations

import datetime
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

try:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import rsa
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
except ImportError:         # the openssl command makes them instead
    x509 = None  # type: ignore[assignment]

#: the one name the server certificate holds: 127.0.0.1 is not in it (verify-identity tells them apart)
SERVER_NAME = "localhost"


@dataclass(frozen=True)
class Certificates:
    ca: Path
    other_ca: Path
    server_cert: Path
    server_key: Path
    client_cert: Path
    client_key: Path


def _key() -> Any:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def _write_key(key: Any, path: Path) -> Path:
    path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                       serialization.NoEncryption()))
    path.chmod(0o600)
    return path


def _certificate(name: str, key: Any, issuer: Any, issuer_key: Any, *, ca: bool = False,
                 dns: str | None = None, usage: Any = None) -> Any:
    now = datetime.datetime.now(datetime.UTC)
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    builder = (x509.CertificateBuilder().subject_name(subject)
               .issuer_name(issuer.subject if issuer is not None else subject)
               .public_key(key.public_key()).serial_number(x509.random_serial_number())
               .not_valid_before(now - datetime.timedelta(hours=1))
               .not_valid_after(now + datetime.timedelta(days=2))
               .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
               .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
               .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(issuer_key.public_key()),
                              critical=False))
    if ca:
        builder = builder.add_extension(x509.KeyUsage(
            digital_signature=True, content_commitment=False, key_encipherment=False, data_encipherment=False,
            key_agreement=False, key_cert_sign=True, crl_sign=True, encipher_only=False,
            decipher_only=False), critical=True)
    else:
        builder = builder.add_extension(x509.KeyUsage(
            digital_signature=True, content_commitment=False, key_encipherment=True, data_encipherment=False,
            key_agreement=False, key_cert_sign=False, crl_sign=False, encipher_only=False,
            decipher_only=False), critical=True)
    if usage is not None:
        builder = builder.add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
    if dns is not None:
        builder = builder.add_extension(x509.SubjectAlternativeName([x509.DNSName(dns)]), critical=False)
    return builder.sign(issuer_key, hashes.SHA256())


def _write_cert(cert: Any, path: Path) -> Path:
    path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    return path


def make_certificates(folder: Path, *, use_openssl: bool = False) -> Certificates:
    """The files in ``folder`` (created)."""
    folder.mkdir(parents=True, exist_ok=True)
    if use_openssl or x509 is None:
        return _with_openssl(folder)
    ca_key, other_key, server_key, client_key = _key(), _key(), _key(), _key()
    ca = _certificate("binlog-model test CA", ca_key, None, ca_key, ca=True)
    other = _certificate("another CA", other_key, None, other_key, ca=True)
    server = _certificate(SERVER_NAME, server_key, ca, ca_key, dns=SERVER_NAME,
                          usage=ExtendedKeyUsageOID.SERVER_AUTH)
    client = _certificate("binlog-model test client", client_key, ca, ca_key,
                          usage=ExtendedKeyUsageOID.CLIENT_AUTH)
    return Certificates(ca=_write_cert(ca, folder / "ca.pem"),
                        other_ca=_write_cert(other, folder / "other-ca.pem"),
                        server_cert=_write_cert(server, folder / "server-cert.pem"),
                        server_key=_write_key(server_key, folder / "server-key.pem"),
                        client_cert=_write_cert(client, folder / "client-cert.pem"),
                        client_key=_write_key(client_key, folder / "client-key.pem"))


def _with_openssl(folder: Path) -> Certificates:
    openssl = shutil.which("openssl")
    if openssl is None:
        import pytest
        pytest.skip("neither the cryptography package nor the openssl command to make certificates with")

    def run(*args: str) -> None:
        subprocess.run([openssl, *args], cwd=folder, check=True, capture_output=True, timeout=60)

    for name, subject in (("ca", "binlog-model test CA"), ("other-ca", "another CA")):
        run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{name}-key.pem",
            "-out", f"{name}.pem", "-days", "2", "-subj", f"/CN={subject}", "-addext",
            "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign")
    for name, subject, extensions in (
            ("server", SERVER_NAME, f"subjectAltName=DNS:{SERVER_NAME}\nextendedKeyUsage=serverAuth\n"),
            ("client", "binlog-model test client", "extendedKeyUsage=clientAuth\n")):
        usage = "keyUsage=critical,digitalSignature,keyEncipherment\n"
        (folder / f"{name}.ext").write_text("basicConstraints=critical,CA:FALSE\n" + usage + extensions)
        run("req", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{name}-key.pem", "-out", f"{name}.csr",
            "-subj", f"/CN={subject}")
        run("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.pem", "-CAkey", "ca-key.pem", "-CAcreateserial",
            "-out", f"{name}-cert.pem", "-days", "2", "-extfile", f"{name}.ext")
    return Certificates(ca=folder / "ca.pem", other_ca=folder / "other-ca.pem",
                        server_cert=folder / "server-cert.pem", server_key=folder / "server-key.pem",
                        client_cert=folder / "client-cert.pem", client_key=folder / "client-key.pem")
