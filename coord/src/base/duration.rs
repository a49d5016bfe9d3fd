//! The one duration syntax of every snowmint option and parameter: `10s`, `500ms`, `2m`.

use std::time::Duration;

/// `?wait=`: `30s`, `500ms`, `2m`, or `0` (do not wait); at most 1 hour.
pub fn parse_wait(v: &str) -> std::result::Result<Duration, String> {
    if v.trim_end_matches(['m', 's']).chars().all(|c| c == '0') && v.starts_with('0') {
        return Ok(Duration::ZERO);
    }
    parse_duration("wait", v, 3_600_000)
}

/// `file:///DIR?max_ahead=`: `30s`, `500ms`, `2m`; at least 1 ms, at most 1 hour (the embedded store's
/// `MAX_AHEAD_LIMIT`).
pub fn parse_max_ahead(v: &str) -> std::result::Result<Duration, String> {
    parse_duration("max_ahead", v, 3_600_000)
}

/// A duration with its unit, `10s`, `500ms` or `2m` (the one duration syntax of every snowmint
/// option and parameter); at least 1 ms, at most 1 hour. A number without a unit is refused: `5`
/// could be meant as seconds or milliseconds.
pub fn parse_ttl(v: &str) -> std::result::Result<Duration, String> {
    parse_duration("ttl", v, 3_600_000)
}

/// [`parse_ttl`]'s rule for any duration named `what`, at most `max_ms`.
pub fn parse_duration(what: &str, v: &str, max_ms: u64) -> std::result::Result<Duration, String> {
    let (num, unit_ms) = if let Some(n) = v.strip_suffix("ms") {
        (n, 1)
    } else if let Some(n) = v.strip_suffix('s') {
        (n, 1000)
    } else if let Some(n) = v.strip_suffix('m') {
        (n, 60_000)
    } else {
        (v, 0)
    };
    let n: u64 = num
        .parse()
        .map_err(|_| format!("{what} {v:?} is not a duration (e.g. 10s, 500ms, 2m)"))?;
    if n == 0 {
        return Err(format!("{what} {v:?} is zero; it must be at least 1 ms"));
    }
    if unit_ms == 0 {
        return Err(format!(
            "{what} {v:?} has no unit: write {v}s, {v}ms or {v}m"
        ));
    }
    let ms = n.saturating_mul(unit_ms);
    if ms > max_ms {
        return Err(format!("{what} {v:?} is over {}", human_ms(max_ms)));
    }
    Ok(Duration::from_millis(ms))
}

fn human_ms(ms: u64) -> String {
    match ms {
        3_600_000 => "one hour".into(),
        m if m % 60_000 == 0 => format!("{} min", m / 60_000),
        m if m % 1000 == 0 => format!("{} s", m / 1000),
        m => format!("{m} ms"),
    }
}
