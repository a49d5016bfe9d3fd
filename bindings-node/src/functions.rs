//! The free functions: `decode`, `compose`, `minIdAt`, `encode`, `parse`, and the `ERROR_CODES` and
//! `PRESET_NAMES` constants.

use super::*;

/// Takes an ID (a bigint, or a string in any form) apart under a layout (default 'twitter').
#[napi(
    ts_args_type = "id: bigint | string, layout?: PresetName | Layout",
    ts_return_type = "Decoded"
)]
pub fn decode(env: Env, id: Unknown<'_>, layout: Option<Unknown<'_>>) -> Result<Unknown<'static>> {
    let env = env.raw();
    let id = id_arg(env, raw_of(&id), true)?;
    let layout = layout_arg(env, opt_raw(&layout))?;
    let d = layout.decode(id).js(env)?;
    let numbers = JsNumbers::of(&layout);
    let mut obj = ptr::null_mut();
    unsafe { sys::napi_create_object(env, &mut obj) };
    set(env, obj, "id", big(env, d.id));
    set(env, obj, "timestampTicks", big(env, d.timestamp_ticks));
    set(
        env,
        obj,
        "timestampMs",
        int(env, d.unix_ms, numbers.timestamp_ms),
    );
    set(env, obj, "subMsNs", num(env, d.sub_ms_ns as f64));
    let mut date = ptr::null_mut();
    // Dates hold ±8.64e15 ms; beyond that the Date is invalid (NaN) rather than wrong.
    let ms = if d.unix_ms <= 8_640_000_000_000_000 {
        d.unix_ms as f64
    } else {
        f64::NAN
    };
    unsafe { sys::napi_create_date(env, ms, &mut date) };
    set(env, obj, "date", date);
    set(env, obj, "iso", js_str(env, d.iso().to_buf().as_str()));
    set(env, obj, "nodeId", int(env, d.node, numbers.node_id));
    set(env, obj, "sequence", int(env, d.sequence, numbers.sequence));
    Ok(unsafe { Unknown::from_raw_unchecked(env, obj) })
}

/// Composes an ID from its fields (`nodeId` is the node field as stored, offset included).
#[napi(
    ts_args_type = "fields: { timestampTicks: bigint | number; nodeId: number | bigint; sequence: number | bigint }, layout?: PresetName | Layout"
)]
pub fn compose(env: Env, fields: Unknown<'_>, layout: Option<Unknown<'_>>) -> Result<u64> {
    let env = env.raw();
    let o = Opts::new(
        env,
        raw_of(&fields),
        "compose fields",
        &["timestampTicks", "nodeId", "sequence"],
    )?;
    let w = "compose fields";
    let ticks = get_u64(env, o.required("timestampTicks", w)?, "timestampTicks")?;
    let node = get_u64(env, o.required("nodeId", w)?, "nodeId")?;
    let seq = get_u64(env, o.required("sequence", w)?, "sequence")?;
    let layout = layout_arg(env, opt_raw(&layout))?;
    layout.compose(ticks, node, seq).js(env)
}

/// The smallest ID of a layout at or after an instant (a Date, or Unix ms as a number or bigint).
#[napi(ts_args_type = "at: Date | number | bigint, layout?: PresetName | Layout")]
pub fn min_id_at(env: Env, at: Unknown<'_>, layout: Option<Unknown<'_>>) -> Result<u64> {
    let env = env.raw();
    let v = raw_of(&at);
    let mut is_date = false;
    unsafe { sys::napi_is_date(env, v, &mut is_date) };
    let ms = if is_date {
        let mut t = 0.0;
        unsafe { sys::napi_get_date_value(env, v, &mut t) };
        snowmint::whole_f64(t).map_err(|_| range_err(env, "the Date is invalid or before 1970"))?
    } else {
        get_u64(env, v, "at")?
    };
    let layout = layout_arg(env, opt_raw(&layout))?;
    layout.min_id_at_ms(ms).js(env)
}

pub(crate) fn encoding_arg(
    env: sys::napi_env,
    v: Option<Raw>,
    allow_any: bool,
) -> Result<Option<Encoding>> {
    let v = match v {
        Some(v) if !is_nullish(env, v) => v,
        _ => {
            return Ok(if allow_any {
                None
            } else {
                Some(Encoding::Decimal)
            })
        }
    };
    if type_of(env, v) != sys::ValueType::napi_string {
        return Err(type_err(env, "encoding must be a string"));
    }
    let name = get_string(env, v)?;
    if allow_any {
        Encoding::from_name_or_any(&name).js(env)
    } else {
        Encoding::from_name(&name).map(Some).js(env)
    }
}

/// An ID as text: 'dec' (default), 'hex', 'base32' or 'base58'.
#[napi(ts_args_type = "id: bigint | number, encoding?: 'dec' | 'hex' | 'base32' | 'base58'")]
pub fn encode(env: Env, id: Unknown<'_>, encoding: Option<Unknown<'_>>) -> Result<String> {
    let env = env.raw();
    let id = id_arg(env, raw_of(&id), false)?;
    let enc = encoding_arg(env, opt_raw(&encoding), false)?.unwrap_or(Encoding::Decimal);
    Ok(enc.encode(id).as_str().to_owned())
}

/// Parses an ID from text in one encoding, or 'any' (default: told apart by shape).
#[napi(ts_args_type = "text: string, encoding?: 'dec' | 'hex' | 'base32' | 'base58' | 'any'")]
pub fn parse(env: Env, text: Unknown<'_>, encoding: Option<Unknown<'_>>) -> Result<u64> {
    let env = env.raw();
    if type_of(env, raw_of(&text)) != sys::ValueType::napi_string {
        return Err(type_err(env, "text must be a string"));
    }
    let s = get_string(env, raw_of(&text))?;
    snowmint::Encoding::parse_in(encoding_arg(env, opt_raw(&encoding), true)?, &s).js(env)
}

const fn error_codes() -> [&'static str; ErrorCode::ALL.len()] {
    let mut out = [""; ErrorCode::ALL.len()];
    let mut i = 0;
    while i < out.len() {
        out[i] = ErrorCode::ALL[i].as_str();
        i += 1;
    }
    out
}

/// Every error code an `err.code` can hold.
#[napi]
pub const ERROR_CODES: [&str; ErrorCode::ALL.len()] = error_codes();

/// Every preset name `Layout.preset` accepts (snowcast needs `Layout.snowcast`).
#[napi]
pub const PRESET_NAMES: [&str; 8] = snowmint::PRESET_NAMES;
