//! The request a command sends the proxy: `CONNECT host:port` or an absolute-form HTTP request
//! (`GET http://host/path`), read with a bounded head.

use tokio::io::{AsyncRead, AsyncReadExt};

use super::address::Host;

/// Headers a request head may carry.
const MAX_HEADERS: usize = 128;

/// What the command asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Request {
    pub host: Host,
    pub port: u16,
    pub kind: Kind,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A tunnel: bytes pass through untouched (TLS included).
    Connect,
    /// A plain HTTP request, forwarded in origin form with `Connection: close`: this head.
    Http { head: Vec<u8> },
}

/// Why no request could be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum HeadError {
    /// The client closed (or sent nothing) before a whole head arrived.
    Closed,
    /// `400`: the reason.
    Malformed(String),
    /// `431`: the head is larger than the cap.
    TooLarge,
}

/// Reads one request head (at most `max` bytes) and returns it with the bytes that followed it.
pub(crate) async fn read_head<R: AsyncRead + Unpin>(
    client: &mut R,
    max: usize,
) -> Result<(Request, Vec<u8>), HeadError> {
    let mut buf: Vec<u8> = Vec::with_capacity(4096);
    let mut chunk = [0u8; 4096];
    loop {
        let n = client
            .read(&mut chunk)
            .await
            .map_err(|_| HeadError::Closed)?;
        if n == 0 {
            return Err(if buf.is_empty() {
                HeadError::Closed
            } else {
                HeadError::Malformed("the request ended before its head did".into())
            });
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(parsed) = parse(&buf)? {
            return Ok(parsed);
        }
        if buf.len() > max {
            return Err(HeadError::TooLarge);
        }
    }
}

/// `Ok(None)` while the head is incomplete.
fn parse(buf: &[u8]) -> Result<Option<(Request, Vec<u8>)>, HeadError> {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut req = httparse::Request::new(&mut headers);
    let len = match req.parse(buf) {
        Ok(httparse::Status::Complete(len)) => len,
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(httparse::Error::TooManyHeaders) => return Err(HeadError::TooLarge),
        Err(e) => {
            return Err(HeadError::Malformed(format!(
                "not an HTTP proxy request ({e})"
            )));
        }
    };
    let (Some(method), Some(target), Some(version)) = (req.method, req.path, req.version) else {
        return Ok(None);
    };
    let rest = buf[len..].to_vec();
    if method.eq_ignore_ascii_case("CONNECT") {
        let (host, port) = authority(target, None)?;
        let kind = Kind::Connect;
        return Ok(Some((Request { host, port, kind }, rest)));
    }
    let Some((scheme, after)) = target.split_once("://") else {
        return Err(HeadError::Malformed(format!(
            "`{method} {target}` is not a proxy request: send the full URL (`{method} http://host/path`) or CONNECT host:port"
        )));
    };
    if !scheme.eq_ignore_ascii_case("http") {
        return Err(HeadError::Malformed(format!(
            "the proxy forwards http:// URLs; for {scheme}:// send CONNECT host:port (HTTPS_PROXY does)"
        )));
    }
    let end = after.find(['/', '?', '#']).unwrap_or(after.len());
    let (auth, path) = after.split_at(end);
    let (host, port) = authority(auth, Some(80))?;
    let path = path.split('#').next().unwrap_or_default();
    let path = match path.chars().next() {
        Some('/') => path.to_string(),
        _ => format!("/{path}"),
    };
    let head = forwarded_head(method, &path, version, auth, req.headers);
    Ok(Some((
        Request {
            host,
            port,
            kind: Kind::Http { head },
        },
        rest,
    )))
}

/// `host:port` (a default port for absolute URLs), with `[…]` around an IPv6 address.
fn authority(text: &str, default_port: Option<u16>) -> Result<(Host, u16), HeadError> {
    if text.contains('@') {
        return Err(HeadError::Malformed(format!(
            "`{text}` carries credentials; the proxy takes none"
        )));
    }
    let (host, port) = match text.rsplit_once(':') {
        Some((h, p)) if !h.is_empty() && (!h.contains(':') || h.ends_with(']')) => (h, Some(p)),
        _ => (text, None),
    };
    let port = match (port, default_port) {
        (Some(p), _) => p
            .parse::<u16>()
            .ok()
            .filter(|p| *p != 0)
            .ok_or_else(|| HeadError::Malformed(format!("`{text}` has no valid port")))?,
        (None, Some(d)) => d,
        (None, None) => {
            return Err(HeadError::Malformed(format!(
                "CONNECT needs host:port, not `{text}`"
            )));
        }
    };
    let host = Host::parse(host).map_err(HeadError::Malformed)?;
    Ok((host, port))
}

/// Hop-by-hop headers the proxy consumes (RFC 9110 §7.6.1), and its own.
const HOP_BY_HOP: &[&str] = &[
    "connection",
    "proxy-connection",
    "keep-alive",
    "proxy-authorization",
    "proxy-authenticate",
    "te",
    "trailer",
    "upgrade",
    "host",
];

/// The request as the host gets it: origin form, `Host` from the URL, hop-by-hop headers
/// (and those `Connection` names) dropped, `Connection: close`.
fn forwarded_head(
    method: &str,
    path: &str,
    version: u8,
    authority: &str,
    headers: &[httparse::Header<'_>],
) -> Vec<u8> {
    let named: Vec<String> = headers
        .iter()
        .filter(|h| h.name.eq_ignore_ascii_case("connection"))
        .flat_map(|h| h.value.split(|b| *b == b','))
        .map(|token| String::from_utf8_lossy(token).trim().to_ascii_lowercase())
        .collect();
    let mut head =
        format!("{method} {path} HTTP/1.{version}\r\nHost: {authority}\r\n").into_bytes();
    for h in headers {
        let name = h.name.to_ascii_lowercase();
        if HOP_BY_HOP.contains(&name.as_str()) || named.contains(&name) {
            continue;
        }
        head.extend_from_slice(h.name.as_bytes());
        head.extend_from_slice(b": ");
        head.extend_from_slice(h.value);
        head.extend_from_slice(b"\r\n");
    }
    head.extend_from_slice(b"Connection: close\r\n\r\n");
    head
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn parsed(text: &str) -> Result<Option<(Request, Vec<u8>)>, HeadError> {
        parse(text.as_bytes())
    }

    #[test]
    fn connect_names_a_host_and_port() {
        let (req, rest) =
            parsed("CONNECT PyPI.org:443 HTTP/1.1\r\nHost: pypi.org:443\r\n\r\n\x16\x03")
                .unwrap()
                .unwrap();
        assert_eq!(req.host, Host::Name("pypi.org".into()));
        assert_eq!((req.port, req.kind), (443, Kind::Connect));
        assert_eq!(rest, b"\x16\x03");
        let (req, _) = parsed("CONNECT [::1]:8443 HTTP/1.1\r\n\r\n")
            .unwrap()
            .unwrap();
        assert_eq!((req.host.text(), req.port), ("::1".into(), 8443));
        assert!(
            parsed("CONNECT pypi.org:443 HTTP/1.1\r\n")
                .unwrap()
                .is_none()
        );
    }

    #[test]
    fn an_absolute_url_becomes_an_origin_form_request_that_closes() {
        let (req, rest) = parsed(
            "GET http://Example.test:8080/a/b?q=1#frag HTTP/1.1\r\nHost: evil.test\r\nProxy-Connection: keep-alive\r\nConnection: keep-alive, X-Secret\r\nX-Secret: 1\r\nAccept: */*\r\n\r\nbody",
        )
        .unwrap()
        .unwrap();
        assert_eq!((req.host.text(), req.port), ("example.test".into(), 8080));
        let Kind::Http { head } = req.kind else {
            panic!("not http")
        };
        assert_eq!(
            String::from_utf8(head).unwrap(),
            "GET /a/b?q=1 HTTP/1.1\r\nHost: Example.test:8080\r\nAccept: */*\r\nConnection: close\r\n\r\n"
        );
        assert_eq!(rest, b"body");
        let (req, _) = parsed("GET http://a.test?x HTTP/1.0\r\n\r\n")
            .unwrap()
            .unwrap();
        let Kind::Http { head } = req.kind else {
            panic!("not http")
        };
        assert!(head.starts_with(b"GET /?x HTTP/1.0\r\nHost: a.test\r\n"));
    }

    #[test]
    fn requests_that_are_not_proxy_requests_are_malformed() {
        for bad in [
            "GET /path HTTP/1.1\r\n\r\n",
            "GET https://a.test/ HTTP/1.1\r\n\r\n",
            "CONNECT a.test HTTP/1.1\r\n\r\n",
            "CONNECT a.test:0 HTTP/1.1\r\n\r\n",
            "CONNECT a.test:99999 HTTP/1.1\r\n\r\n",
            "CONNECT 127.1:80 HTTP/1.1\r\n\r\n",
            "GET http://user:pw@a.test/ HTTP/1.1\r\n\r\n",
            "hello\r\n\r\n",
            "\x16\x03\x01\x02\x00\x01\x00\x01\x7f\r\n\r\n",
        ] {
            assert!(
                matches!(parsed(bad), Err(HeadError::Malformed(_))),
                "{bad:?}: {:?}",
                parsed(bad)
            );
        }
    }
}
