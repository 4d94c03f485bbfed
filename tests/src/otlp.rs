//! A minimal OTLP/HTTP collector for the trace tests: an HTTP/1.1 server
//! (plain, or TLS with a given certificate) that keeps every request body
//! (OTLP protobuf), and the decoding of those bodies into spans.

use std::sync::{Arc, Mutex};

use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message as _;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::net::TcpListener;
use tokio_rustls::rustls;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::TlsAcceptor;

/// Request bodies received so far.
pub type Bodies = Arc<Mutex<Vec<Vec<u8>>>>;

/// A TLS acceptor serving the certificate chain in the PEM file `cert_file`
/// with the key in `key_file`.
pub fn tls_acceptor(cert_file: &str, key_file: &str) -> anyhow::Result<TlsAcceptor> {
    let certs = CertificateDer::pem_file_iter(cert_file)?.collect::<Result<Vec<_>, _>>()?;
    let key = PrivateKeyDer::from_pem_file(key_file)?;
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()?
    .with_no_client_auth()
    .with_single_cert(certs, key)?;
    Ok(TlsAcceptor::from(Arc::new(config)))
}

/// Accepts OTLP/HTTP posts (over TLS when `tls` is given) and keeps their
/// bodies.
pub async fn collector(tls: Option<TlsAcceptor>) -> anyhow::Result<(std::net::SocketAddr, Bodies)> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let bodies: Bodies = Arc::new(Mutex::new(Vec::new()));
    let kept = bodies.clone();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let kept = kept.clone();
            let tls = tls.clone();
            tokio::spawn(async move {
                match tls {
                    Some(acceptor) => {
                        if let Ok(stream) = acceptor.accept(stream).await {
                            serve(stream, kept).await;
                        }
                    }
                    None => serve(stream, kept).await,
                }
            });
        }
    });
    Ok((addr, bodies))
}

/// Requests on a kept-alive connection, one after another.
async fn serve<S: AsyncRead + AsyncWrite + Unpin>(stream: S, kept: Bodies) {
    let mut stream = BufReader::new(stream);
    loop {
        let mut length = 0usize;
        let mut line = String::new();
        loop {
            line.clear();
            if stream.read_line(&mut line).await.unwrap_or(0) == 0 {
                return;
            }
            let l = line.trim_end();
            if l.is_empty() {
                break;
            }
            if let Some((k, v)) = l.split_once(':') {
                if k.eq_ignore_ascii_case("content-length") {
                    length = v.trim().parse().unwrap_or(0);
                }
            }
        }
        let mut body = vec![0; length];
        if stream.read_exact(&mut body).await.is_err() {
            return;
        }
        if let Ok(mut b) = kept.lock() {
            b.push(body);
        }
        let reply =
            "HTTP/1.1 200 OK\r\ncontent-type: application/x-protobuf\r\ncontent-length: 0\r\n\r\n";
        if stream.get_mut().write_all(reply.as_bytes()).await.is_err() {
            return;
        }
        let _ = stream.get_mut().flush().await;
    }
}

/// Every span of the OTLP requests received.
pub fn exported_spans(bodies: &Mutex<Vec<Vec<u8>>>) -> anyhow::Result<Vec<Span>> {
    let bodies = bodies.lock().map(|b| b.clone()).unwrap_or_default();
    let mut spans = Vec::new();
    for body in bodies {
        let request = ExportTraceServiceRequest::decode(body.as_slice())?;
        for resource in request.resource_spans {
            for scope in resource.scope_spans {
                spans.extend(scope.spans);
            }
        }
    }
    Ok(spans)
}
