//! The protocol in one function, [`Service::handle`]: a request's route, its checks and its answer.

use super::*;

impl Service {
    /// Answers one request. `target` is the request target (path and query). Never panics: a panic
    /// inside becomes `500 PANIC`. Every answer is counted by route and status.
    pub fn handle(&self, method: &str, target: &str, body: &[u8]) -> Response {
        self.handle_as(
            &ClientKey::Addr(std::net::Ipv4Addr::LOCALHOST.into()),
            method,
            target,
            body,
        )
    }

    /// [`Service::handle`] for a request that counts as `client` (the per-client lease cap).
    pub fn handle_as(
        &self,
        client: &ClientKey,
        method: &str,
        target: &str,
        body: &[u8],
    ) -> Response {
        let (path, query) = match target.split_once('?') {
            Some((p, q)) => (p, Some(q)),
            None => (target, None),
        };
        let route = Route::of(path);
        let response = catch_unwind(AssertUnwindSafe(|| {
            self.route(client, route, method, path, query, body)
        }))
        .unwrap_or_else(|_| {
            Err(ApiError::new(
                500,
                ErrorCode::Panic,
                "the service failed on this request (a bug: please report it)",
            ))
        })
        .unwrap_or_else(ApiError::into_response);
        self.metrics.count(route, response.status);
        response
    }

    fn route(
        &self,
        client: &ClientKey,
        route: Route,
        method: &str,
        path: &str,
        query: Option<&str>,
        body: &[u8],
    ) -> Result<Response, ApiError> {
        if route == Route::Unknown {
            return Err(ApiError::new(
                404,
                ErrorCode::InvalidArgument,
                format!(
                    "no route {:?}; the routes are POST /v1/ids, POST /v1/leases, POST /v1/leases/{{token}}/renew, DELETE /v1/leases/{{token}}, GET /healthz, GET /metrics",
                    json::clip(path, 100)
                ),
            )
            .field("path"));
        }
        if !route.allows(method) {
            let mut e = ApiError::new(
                405,
                ErrorCode::InvalidArgument,
                format!(
                    "{} {} is not allowed; use {}",
                    json::clip(method, 20),
                    route.label(),
                    route.allow()
                ),
            )
            .field("method");
            e.allow = Some(route.allow());
            return Err(e);
        }
        if body.len() > MAX_BODY {
            return Err(body_too_large(body.len()));
        }
        if route == Route::Metrics {
            no_query(query)?;
            return Ok(self.metrics());
        }
        match route {
            Route::Ids => self.ids(query, body),
            Route::Health => self.health(query),
            Route::Leases => {
                no_query(query)?;
                let holder = json::holder(body)?;
                let r = self.leases()?.take(client, holder.as_deref())?;
                // The gauges follow at once, without a store call (the supervisor reads them again).
                self.count_lease(1);
                Ok(r)
            }
            Route::Renew => {
                no_query(query)?;
                json::empty_body(body)?;
                let token = &path["/v1/leases/".len()..path.len() - "/renew".len()];
                self.leases()?.renew(client, token)
            }
            Route::Release => {
                no_query(query)?;
                json::empty_body(body)?;
                let r = self
                    .leases()?
                    .release(client, &path["/v1/leases/".len()..])?;
                self.count_lease(-1);
                Ok(r)
            }
            Route::Metrics | Route::Unknown => unreachable!("answered above"),
        }
    }

    pub(crate) fn leases(&self) -> Result<&leases::Leases, ApiError> {
        self.leases
            .as_ref()
            // A configuration of this service, not a passing outage: not the retryable 503.
            .ok_or_else(|| {
                ApiError::new(404, ErrorCode::InvalidArgument, self.no_store.clone()).field("path")
            })
    }

    /// `LEASE_LOST` (503) when the service's own lease is gone.
    fn own_lease(&self) -> Result<(), ApiError> {
        let g = self.generator();
        match g.state() {
            None | Some(LeaseState::Held) => Ok(()),
            Some(LeaseState::Lost) => Err(ApiError::new(
                503,
                ErrorCode::LeaseLost,
                format!(
                    "the service lost the lease on its node ID {}; it claims another as soon as the store answers",
                    g.node_id()
                ),
            )),
            Some(LeaseState::Destroyed) => Err(ApiError::new(
                503,
                ErrorCode::SequencerDestroyed,
                "the sequencer of the service's node ID was destroyed",
            )),
        }
    }

    fn health(&self, query: Option<&str>) -> Result<Response, ApiError> {
        no_query(query)?;
        if self.is_shutting_down() {
            return Err(Service::shutdown_error());
        }
        self.own_lease()?;
        Ok(json_response(
            200,
            json::health(self.node_id(), &self.config.layout_name),
        ))
    }

    fn ids(&self, query: Option<&str>, body: &[u8]) -> Result<Response, ApiError> {
        let count = parse_count(query, self.config.max_count)?;
        json::empty_body(body)?;
        self.own_lease()?;
        let generator = self.generator();
        let mut ids = vec![0u64; count as usize];
        if let Err(e) = generator.next_ids(&mut ids) {
            let mut err = ApiError::from_coord(e);
            if err.code == ErrorCode::LeaseLost {
                err.status = 503;
            }
            if err.code == ErrorCode::InvalidArgument {
                // A batch this layout can never mint at once (more than max_ahead holds).
                err = err.field("count");
            }
            if err.code == ErrorCode::TooFarAhead {
                // The time the clock needs to catch up with this many IDs, at least one tick.
                let per_tick = self.config.layout.ids_per_tick().max(1);
                let ticks = count.div_ceil(per_tick).max(1);
                let ns = ticks.saturating_mul(self.config.layout.tick_ns());
                err.retry_after_ms = Some(ns.div_ceil(1_000_000).max(1));
            }
            return Err(err);
        }
        let now_ms = self.time.unix_ns() / 1_000_000;
        let valid_ms = self.config.validity.as_millis() as u64;
        Ok(json_response(
            200,
            json::ids(
                &ids,
                now_ms.saturating_add(valid_ms),
                valid_ms,
                &self.config.layout_name,
                generator.node_id(),
            ),
        ))
    }

    fn metrics(&self) -> Response {
        // Local state only: the gauges as the supervisor last read them (none yet: an error says so).
        let gauges = self.gauges.lock().unwrap_or_else(|p| p.into_inner());
        let unread = leases::Gauges {
            active: 0,
            holders: Vec::new(),
            error: Some("not read from the store yet".into()),
        };
        let leases = self
            .leases
            .as_ref()
            .map(|_| gauges.as_ref().unwrap_or(&unread));
        let stats = self
            .retired
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .merged(self.generator().stats());
        Response {
            status: 200,
            content_type: "text/plain; version=0.0.4; charset=utf-8",
            headers: Vec::new(),
            body: self.metrics.render(stats, leases).into_bytes(),
        }
    }
}
