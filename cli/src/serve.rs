//! `snowmint serve`: the ID service of SPEC §6a (crate `snowmint-service`).

use std::net::SocketAddr;

use snowmint_service::{Config, Service};

use crate::error::CliError;
use crate::sequencer::{cli_error, malformed};
use crate::Failure;

pub const HELP: &str = "\
snowmint serve — the ID service: batches of IDs over HTTP, node-ID leases for clients that mint locally

USAGE
  snowmint serve --listen HOST:PORT --node SOURCE [--layout L …] [--validity 600s] [--max-count 10000]
                 [--store URL] [--client-sequencer NAME] [--lease-ttl 70s] [--lease-reservation 60s]
                 [--cors-origin ORIGIN …] [--allowed-host NAME …] [--auth-token-file PATH]
                 [--tls-cert PATH --tls-key PATH] [--max-leases-per-client 8] [--max-connections 256]
                 [--max-leases-per-network 16] [--max-unauthenticated-leases N]
                 [--max-connections-per-source 64]

  --listen             address to listen on, an IP address or a host name such as localhost (port 0:
                       any free port); the first line on standard output
                       says where it listens: snowmint serve: listening on http://HOST:PORT …
  --node               the service's node ID: a number, env[:NAME], k8s[:OFFSET], ip, or a lease source
                       (file:///DIR, etcd://HOST:PORT/PREFIX, postgres://USER@HOST:PORT/DB) that the
                       service holds while it runs (/healthz turns 503 if it is lost). A fixed node ID
                       with --store is claimed on the client sequencer of that store (refused while
                       another instance or a client holds it, released at shutdown); without --store
                       the service waits 2 s before it serves (an instance before it may have minted up
                       to 2 s ahead of the clock).
  --validity           how long a batch may be used (valid_for_ms of every batch; default 600s)
  --max-count          the largest count of one batch (default 10000)
  --store              the store of client leases with a fixed --node (a lease source's own store
                       is the store of client leases; --store with it is refused; formerly named leases)
  --client-sequencer   the sequencer of client leases and of every instance's node ID (default: the
                       node source's sequencer, and no other is accepted with a lease source; else
                       clients), so that no client is leased a node ID an instance mints with
  --lease-ttl          a client lease's claim time-to-live (default 70s); longer than the reservation
  --lease-reservation  how far past the clock a client lease's reservation reaches (default 60s)
  --cors-origin        a web origin (https://app.example.com) whose pages may call the service from the
                       browser (CORS: preflights answered, access-control-allow-origin sent); repeatable;
                       * allows any origin. A request carrying any other Origin than these and the
                       service's own is refused (403), and a POST body must be application/json (415).
  --allowed-host       a host name requests may name in Host (DNS rebinding); repeatable; IP addresses
                       are always accepted. Default: localhost when --listen is a loopback address;
                       on any other address, --allowed-host or --auth-token-file is required (refused
                       at start without either).
  --auth-token-file    a file of bearer tokens (one per line, 16+ characters, # comments): every request
                       to /v1/ids and /v1/leases… must carry authorization: Bearer TOKEN (401 otherwise);
                       /healthz and /metrics stay open. Without it, anyone who can reach the port can
                       take IDs and leases.
  --tls-cert, --tls-key  serve HTTPS with this PEM certificate chain and private key (rustls)
  --max-leases-per-client  client leases one client (its token, else its address) may hold at once
                       (default 8; 429 beyond), counted from the leases the store holds (every instance
                       on the store, and a restarted one, counts the same leases)
  --max-leases-per-network  client leases the clients of one network (IPv4 /24, IPv6 /64) may hold
                       together without a token (default twice --max-leases-per-client; 429 beyond)
  --max-unauthenticated-leases  client leases every client without a token may hold together (default
                       a quarter of the client sequencer's node IDs: 256 of 1024; 429 beyond)
  --max-connections    connections served at once (default 256; one more is answered 503 and closed)
  --max-connections-per-source  connections one source (an IPv4 address, an IPv6 /64) may hold at
                       once (default a quarter of --max-connections: 64; one more is answered 503 and
                       closed). Behind a reverse proxy, raise it to --max-connections.

  Durations: 500ms, 10s, 2m. Routes: POST /v1/ids?count=N, POST /v1/leases,
  POST /v1/leases/{token}/renew, DELETE /v1/leases/{token}, GET /healthz, GET /metrics (Prometheus).
  SIGINT/SIGTERM: stops accepting, lets requests in flight finish (5 s at most), releases the service's
  own lease (client leases stay in the store) and exits 0.

EXAMPLES
  snowmint serve --listen 127.0.0.1:8080 --node 7
  curl -s -X POST 'http://127.0.0.1:8080/v1/ids?count=3'
  snowmint serve --listen 127.0.0.1:8080 --node 'etcd://127.0.0.1:2379/ids?sequencer=web'
  curl -s -X POST http://127.0.0.1:8080/v1/leases -H 'content-type: application/json' -d '{\"holder\": \"tab 1\"}'
";

/// `--listen HOST:PORT`: an IP address, or a host name (`localhost:0`) resolved to its first address.
fn listen_address(text: &str) -> Result<SocketAddr, CliError> {
    use std::net::ToSocketAddrs;
    let bad = |why: String| {
        CliError::usage(
            format!(
                "--listen {text:?}: {why} (give HOST:PORT, e.g. 127.0.0.1:8080 or localhost:0)"
            ),
            "serve",
        )
    };
    if let Ok(addr) = text.parse() {
        return Ok(addr);
    }
    let mut addrs = text.to_socket_addrs().map_err(|e| bad(e.to_string()))?;
    addrs
        .next()
        .ok_or_else(|| bad("the host name has no address".into()))
}

pub fn run(args: crate::spec::Serve) -> Result<(), Failure> {
    let crate::spec::Serve {
        listen,
        node,
        validity,
        max_count,
        store: leases,
        client_sequencer,
        lease_ttl,
        lease_reservation,
        cors_origin: cors_origins,
        allowed_host: mut allowed_hosts,
        auth_token_file: token_file,
        tls_cert,
        tls_key,
        max_leases_per_client,
        max_leases_per_network,
        max_unauthenticated_leases,
        max_connections,
        max_connections_per_source,
        layout: layout_args,
    } = args;
    let listen = listen.ok_or_else(|| {
        CliError::usage(
            "give the address to listen on: --listen 127.0.0.1:8080",
            "serve",
        )
    })?;
    let listen = listen_address(&listen)?;
    let node = node.ok_or_else(|| {
        CliError::usage(
            "give the service's node ID: --node 7, or a lease source such as --node file:///var/lib/snowmint",
            "serve",
        )
    })?;
    snowmint_coord::NodeSource::parse(&node).map_err(|e| malformed(e, "serve"))?;
    if let Some(url) = &leases {
        snowmint_coord::source::parse_store_url(url).map_err(|e| malformed(e, "serve"))?;
    }
    let chosen = layout_args.build("serve")?;
    let layout_name = if chosen.label.starts_with("custom") {
        snowmint_coord::layout_text(&chosen.layout)
    } else {
        chosen.label
    };
    let mut config = Config::new(node, "twitter").map_err(CliError::core)?;
    config.layout = chosen.layout;
    config.layout_name = layout_name;
    if let Some(v) = validity {
        config.validity = v;
    }
    if let Some(v) = max_count {
        config.max_count = v;
    }
    config.cors_origins = cors_origins;
    let loopback = listen.ip().to_canonical().is_loopback();
    if allowed_hosts.is_empty() && loopback {
        allowed_hosts.push("localhost".to_string());
    }
    // Off loopback, a page on a name the attacker rebinds to this address would be served as the
    // service's own origin: the names must be listed, or every call must carry a token.
    if !loopback && allowed_hosts.is_empty() && token_file.is_none() {
        return Err(CliError::usage(
            format!(
                "--listen {listen} is not a loopback address: give --allowed-host NAME (the names clients reach the service by; against DNS rebinding) or --auth-token-file PATH (or both)"
            ),
            "serve",
        )
        .into());
    }
    config.allowed_hosts = allowed_hosts;
    if let Some(path) = token_file {
        config.auth_tokens = snowmint_service::Tokens::load(std::path::Path::new(&path))
            .map_err(|why| CliError::usage(format!("--auth-token-file: {why}"), "serve"))?;
    }
    if tls_cert.is_some() != tls_key.is_some() {
        return Err(CliError::usage("--tls-cert and --tls-key go together", "serve").into());
    }
    config.tls_cert = tls_cert.map(Into::into);
    config.tls_key = tls_key.map(Into::into);
    if let Some(v) = max_leases_per_client {
        config.max_leases_per_client = usize::try_from(v).unwrap_or(usize::MAX);
    }
    if let Some(v) = max_connections {
        config.max_connections = usize::try_from(v).unwrap_or(usize::MAX);
    }
    if let Some(v) = max_leases_per_network {
        config.max_leases_per_network = Some(usize::try_from(v).unwrap_or(usize::MAX));
    }
    if let Some(v) = max_unauthenticated_leases {
        config.max_unauthenticated_leases = Some(usize::try_from(v).unwrap_or(usize::MAX));
    }
    if let Some(v) = max_connections_per_source {
        config.max_connections_per_source = Some(usize::try_from(v).unwrap_or(usize::MAX));
    }
    if let Some(v) = lease_ttl {
        config.lease_ttl = v;
    }
    if let Some(v) = lease_reservation {
        config.lease_reservation = v;
    }
    config.leases = leases;
    config.client_sequencer = client_sequencer;
    let service = Service::open(config).map_err(cli_error)?;
    snowmint_service::server::run(service, listen).map_err(cli_error)?;
    Ok(())
}
