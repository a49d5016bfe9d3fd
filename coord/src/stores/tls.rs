//! TLS for the server stores, on rustls (the `ring` provider): one client configuration builder for
//! etcd (`etcd+https://…?cacert=&cert=&key=`, etcdctl's names) and PostgreSQL (`sslmode`,
//! `sslrootcert`, `sslcert`, `sslkey`, libpq's names and meanings), and the stream the etcd client
//! reads and writes: plain TCP or rustls over TCP.
//!
//! How the server is checked ([`Verify`]):
//! - [`Verify::Full`] — the chain up to a trusted root (the CA file, else the Mozilla roots of
//!   `webpki-roots`), validity dates, and the host name (or IP address) the client connected to;
//! - [`Verify::Chain`] — the chain and dates, not the name (libpq's `verify-ca`);
//! - [`Verify::Nothing`] — no certificate check (libpq's `require`/`prefer` without a root file): the
//!   connection is encrypted, not authenticated. The handshake signatures are still checked.
//!
//! Files are read when the store is opened; a file that cannot be read or holds no certificate or key
//! is an `INVALID_ARGUMENT` naming the file (never its contents).

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{
    CertificateError, ClientConfig, ClientConnection, DigitallySignedStruct, RootCertStore,
};

use crate::base::error::{Error, Result};
use crate::base::url::TlsFiles;

/// How the server's certificate is checked (module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Verify {
    /// Chain, dates and name.
    Full,
    /// Chain and dates.
    Chain,
    /// Nothing (encryption only).
    Nothing,
}

fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

fn unreadable(what: &str, path: &Path, why: impl std::fmt::Display) -> Error {
    Error::invalid(format!("{what} file {}: {why}", path.display()))
}

fn certificates(what: &str, path: &Path) -> Result<Vec<CertificateDer<'static>>> {
    let certs = CertificateDer::pem_file_iter(path)
        .and_then(|it| it.collect::<std::result::Result<Vec<_>, _>>())
        .map_err(|e| unreadable(what, path, pem_error(e)))?;
    if certs.is_empty() {
        return Err(unreadable(what, path, "no PEM certificate in it"));
    }
    Ok(certs)
}

/// A PEM error without any of the file's bytes (a key file's contents never reach a message).
fn pem_error(e: rustls::pki_types::pem::Error) -> String {
    use rustls::pki_types::pem::Error as E;
    match e {
        E::Io(io) => io.to_string(),
        E::NoItemsFound => "no PEM item in it".into(),
        E::IllegalSectionStart { .. } | E::MissingSectionEnd { .. } => "malformed PEM".into(),
        E::Base64Decode(_) => "malformed base64 in a PEM section".into(),
        E::SectionTooLarge => "a PEM section too large".into(),
        _ => "not a PEM file".into(),
    }
}

/// A rustls client configuration for `files` checked as `verify` says, offering the client
/// certificate when `files` names one (both `cert` and `key`, or neither).
pub(crate) fn client_config(files: &TlsFiles, verify: Verify) -> Result<Arc<ClientConfig>> {
    let provider = provider();
    let mut roots = RootCertStore::empty();
    match &files.ca {
        Some(path) => {
            for cert in certificates("CA", path)? {
                roots
                    .add(cert)
                    .map_err(|e| unreadable("CA", path, format!("not a CA certificate: {e}")))?;
            }
        }
        None => roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned()),
    }
    let webpki = || {
        WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone())
            .build()
            .map_err(|e| Error::invalid(format!("TLS roots: {e}")))
    };
    let verifier: Arc<dyn ServerCertVerifier> = match verify {
        Verify::Full => webpki()?,
        Verify::Chain => Arc::new(Partial {
            chain: Some(webpki()?),
            provider: provider.clone(),
        }),
        Verify::Nothing => Arc::new(Partial {
            chain: None,
            provider: provider.clone(),
        }),
    };
    let builder = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| Error::invalid(format!("TLS: {e}")))?
        .dangerous()
        .with_custom_certificate_verifier(verifier);
    let config = match (&files.cert, &files.key) {
        (None, None) => builder.with_no_client_auth(),
        (Some(cert), Some(key)) => {
            let chain = certificates("client certificate", cert)?;
            let key = PrivateKeyDer::from_pem_file(key)
                .map_err(|e| unreadable("client key", key, pem_error(e)))?;
            builder
                .with_client_auth_cert(chain, key)
                .map_err(|e| Error::invalid(format!("client certificate and key: {e}")))?
        }
        _ => return Err(Error::invalid(
            "a client certificate needs both cert and key (or, for PostgreSQL, sslcert and sslkey)",
        )),
    };
    Ok(Arc::new(config))
}

/// The two checks below [`Verify::Full`]: libpq's `verify-ca` (`chain`: [`WebPkiServerVerifier`] with
/// its last check, the name, not made) and `require` without a root file (no `chain`: any
/// certificate). The handshake's signatures are checked either way.
#[derive(Debug)]
struct Partial {
    chain: Option<Arc<WebPkiServerVerifier>>,
    provider: Arc<CryptoProvider>,
}

impl ServerCertVerifier for Partial {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> std::result::Result<ServerCertVerified, rustls::Error> {
        let Some(chain) = &self.chain else {
            return Ok(ServerCertVerified::assertion());
        };
        match chain.verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now) {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }
    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }
    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }
    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

/// The etcd client's connection: plain TCP, or rustls over TCP.
#[derive(Debug)]
pub(crate) enum Stream {
    /// `etcd://`.
    Plain(TcpStream),
    /// `etcd+https://`.
    Tls(Box<rustls::StreamOwned<ClientConnection, TcpStream>>),
}

impl Stream {
    /// Over `tcp` to `host` (`host:port`): plain when `config` is `None`, else TLS with the handshake
    /// done here (bounded by the socket's timeouts), so that a certificate the server refuses, or one
    /// of the server's this client refuses, fails the connection with rustls' reason.
    pub(crate) fn new(
        tcp: TcpStream,
        host: &str,
        config: Option<&Arc<ClientConfig>>,
    ) -> io::Result<Stream> {
        let Some(config) = config else {
            return Ok(Stream::Plain(tcp));
        };
        let name = host
            .rsplit_once(':')
            .map_or(host, |(h, _)| h)
            .trim_matches(|c| c == '[' || c == ']');
        let name = ServerName::try_from(name.to_string())
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, format!("TLS: {e}")))?;
        let mut connection = ClientConnection::new(config.clone(), name)
            .map_err(|e| io::Error::other(format!("TLS: {e}")))?;
        let mut tcp = tcp;
        while connection.is_handshaking() {
            connection
                .complete_io(&mut tcp)
                .map_err(|e| io::Error::new(e.kind(), format!("TLS handshake: {e}")))?;
        }
        Ok(Stream::Tls(Box::new(rustls::StreamOwned::new(
            connection, tcp,
        ))))
    }

    /// The TCP socket under it (for timeouts).
    pub(crate) fn tcp(&self) -> &TcpStream {
        match self {
            Stream::Plain(s) => s,
            Stream::Tls(s) => &s.sock,
        }
    }
}

/// A TLS error as the server stores report it: rustls' reason, marked as TLS.
fn tls_io(e: io::Error) -> io::Error {
    if e.get_ref().is_some_and(|inner| inner.is::<rustls::Error>()) {
        io::Error::new(e.kind(), format!("TLS: {e}"))
    } else {
        e
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Plain(s) => s.read(buf),
            Stream::Tls(s) => s.read(buf).map_err(tls_io),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Plain(s) => s.write(buf),
            Stream::Tls(s) => s.write(buf).map_err(tls_io),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        match self {
            Stream::Plain(s) => s.flush(),
            Stream::Tls(s) => s.flush().map_err(tls_io),
        }
    }
}
