//! `snowmint serve`: the ID service of SPEC §6a (crate `snowmint-service`).

use std::net::SocketAddr;

use snowmint_service::{Config, Service};

use crate::error::CliError;
use crate::sequencer::{cli_error, malformed};
use crate::Failure;

pub const HELP: &str = "\
snowmint serve — the ID service: batches of IDs over HTTP, node-ID leases for clients that mint locally

USAGE
{USAGE}

OPTIONS
{OPTIONS}

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
