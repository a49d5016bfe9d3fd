//! `snowmint opaque encode|decode`: opaque IDs (the core's keyed permutation, `snowmint::Opaque`) from
//! the command line. Reads the key from a file, so it never appears in the process list or the shell's
//! history.

use std::io::{self, Write};

use snowmint::{Encoding, ErrorCode, Opaque, OPAQUE_KEY_LEN};

use crate::error::CliError;
use crate::spec::OpaqueCmd;
use crate::{encoding_named, parse_failure, Failure};

pub const HELP: &str = "\
snowmint opaque — turn IDs into opaque tokens and back, with a secret key

A token has the layout's width (63 bits for twitter, 53 for js53, 64 with the sign bit) and
reveals neither the ID's time, nor its node, nor how many IDs were minted between two tokens.
It is a keyed permutation (a 4-round Feistel network: SipHash-1-3, universal hashing), not authentication:
every number of the width decodes to some ID, so check the ID exists before trusting it.

USAGE
{USAGE}

OPTIONS
{OPTIONS}
  -                 read IDs (or tokens) from standard input, separated by white space

EXAMPLES
  head -c 16 /dev/urandom > opaque.key
  snowmint mint -n 3 | snowmint opaque encode - --key-file opaque.key --format base58
  snowmint opaque decode 4KqZx2rLm3d --key-file opaque.key
";

/// The key in a file: 16 raw bytes, or 32 hex digits.
fn read_key(path: &str) -> Result<Vec<u8>, CliError> {
    let bytes = std::fs::read(path).map_err(|e| {
        CliError::rejected(
            ErrorCode::InvalidArgument,
            format!("cannot read the key file {path:?}: {e}"),
        )
    })?;
    if bytes.len() == OPAQUE_KEY_LEN {
        return Ok(bytes);
    }
    let text = String::from_utf8_lossy(&bytes);
    let hex = text.trim();
    if hex.len() == 2 * OPAQUE_KEY_LEN && hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Ok((0..OPAQUE_KEY_LEN)
            .map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap_or(0))
            .collect());
    }
    Err(CliError::rejected(
        ErrorCode::InvalidArgument,
        format!(
            "the key file {path:?} holds {} bytes: an opaque-ID key is 16 raw bytes or 32 hex digits",
            bytes.len()
        ),
    )
    .with("make one with: head -c 16 /dev/urandom > opaque.key"))
}

/// `snowmint opaque encode|decode …`
pub fn run(action: OpaqueCmd, out: &mut impl Write) -> Result<(), Failure> {
    let (decode, args) = match action {
        OpaqueCmd::Encode(a) => (false, a),
        OpaqueCmd::Decode(a) => (true, a),
    };
    let mut values = args.values;
    let json = args.json;
    let format = match &args.format {
        Some(v) => encoding_named(v, false)?.unwrap_or(Encoding::Decimal),
        None => Encoding::Decimal,
    };
    let from = match &args.from {
        Some(v) => encoding_named(v, true)?,
        None => None,
    };
    let layout_args = args.layout;
    let what = if decode { "a token" } else { "an ID" };
    let Some(key_file) = args.key_file else {
        return Err(CliError::usage(
            "--key-file is required (a file holding the 16-byte key)",
            "opaque",
        )
        .into());
    };
    let chosen = layout_args.build("opaque")?;
    let opaque = Opaque::for_layout(&read_key(&key_file)?, &chosen.layout)
        .map_err(|e| CliError::core(e).with(format!("the layout is {}", chosen.label)))?;
    if values.iter().any(|s| s == "-") {
        let mut input = String::new();
        io::Read::read_to_string(&mut io::stdin(), &mut input)?;
        let stdin: Vec<String> = input.split_whitespace().map(str::to_string).collect();
        values = values
            .into_iter()
            .flat_map(|s| if s == "-" { stdin.clone() } else { vec![s] })
            .collect();
    }
    for text in &values {
        let value = Encoding::parse_in(from, text).map_err(|e| parse_failure(e, text))?;
        let result = if decode {
            opaque.decode(value)
        } else {
            opaque.encode(value)
        };
        let result = result.map_err(|e| {
            CliError::core(e).with(format!(
                "{what} of the layout {} has at most {} bits",
                chosen.label,
                opaque.bits()
            ))
        })?;
        if json {
            let (id, token) = if decode {
                (result, value)
            } else {
                (value, result)
            };
            let line = serde_json::json!({
                "input": text,
                "id": id.to_string(),
                "token": token.to_string(),
                "text": format.encode(result).as_str(),
            });
            writeln!(out, "{line}")?;
            continue;
        }
        out.write_all(format.encode(result).as_str().as_bytes())?;
        out.write_all(b"\n")?;
    }
    Ok(())
}
