"""Certificates for the TLS tests, made by the test (``cryptography``): a CA, a server certificate it signs
for the host name ``localhost`` only, a client certificate it signs, and a second CA that signs neither."""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

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


def _key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def _write_key(key: rsa.RSAPrivateKey, path: Path) -> Path:
    path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                       serialization.NoEncryption()))
    path.chmod(0o600)
    return path


def _certificate(name: str, key: rsa.RSAPrivateKey, issuer: x509.Certificate | None,
                 issuer_key: rsa.RSAPrivateKey, *, ca: bool = False, dns: str | None = None,
                 usage: x509.ObjectIdentifier | None = None) -> x509.Certificate:
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


def _write_cert(cert: x509.Certificate, path: Path) -> Path:
    path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    return path


def make_certificates(folder: Path) -> Certificates:
    """The files in ``folder`` (created)."""
    folder.mkdir(parents=True, exist_ok=True)
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
