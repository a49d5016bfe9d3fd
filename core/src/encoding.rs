//! String forms of IDs: decimal, hex, Crockford base32 and base58.
//!
//! Decimal is written without padding; hex (16 digits), base32 (13) and base58 (11) are written at fixed
//! width, so they sort as strings exactly as the IDs sort as numbers. Parsing accepts the unpadded forms
//! too, is case-insensitive for hex and base32 (Crockford's `I`/`L` read as `1`, `O` as `0`), and reports
//! the first bad character with its position.

use core::fmt;

use crate::error::{Error, ParseErrorKind, Result};

const CROCKFORD: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";
const BASE58: &[u8; 58] = b"123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";

/// A string form of an ID.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Encoding {
    /// Decimal digits, no padding: `1212161207262208000`.
    Decimal,
    /// 16 lowercase hex digits: `10d2a6b3c0001000`. Parsing also accepts a `0x` prefix.
    Hex,
    /// 13 Crockford base32 characters: `0Z9AKD7G00400`.
    Base32,
    /// 11 base58 characters (Bitcoin alphabet): `3hs6qtU4AFc`.
    Base58,
}

/// Every encoding, in the order tools list them.
pub const ENCODINGS: [Encoding; 4] = [
    Encoding::Decimal,
    Encoding::Hex,
    Encoding::Base32,
    Encoding::Base58,
];

impl Encoding {
    /// `"dec"`, `"hex"`, `"base32"` or `"base58"`.
    pub const fn name(self) -> &'static str {
        match self {
            Encoding::Decimal => "dec",
            Encoding::Hex => "hex",
            Encoding::Base32 => "base32",
            Encoding::Base58 => "base58",
        }
    }

    /// Parses [`Encoding::name`] (also `decimal`).
    pub fn from_name(s: &str) -> Result<Encoding> {
        match s {
            "dec" | "decimal" => Ok(Encoding::Decimal),
            "hex" => Ok(Encoding::Hex),
            "base32" => Ok(Encoding::Base32),
            "base58" => Ok(Encoding::Base58),
            _ => Err(crate::NameKind::Encoding.unknown(s)),
        }
    }

    /// Where an ID is read from text: an encoding by name as [`Encoding::from_name`], or `"any"`, which
    /// gives `None` (read by the string's shape, [`parse_any`]). Every binding and the CLI take names
    /// through it, so `"any"` means the same everywhere.
    pub fn from_name_or_any(s: &str) -> Result<Option<Encoding>> {
        if s == "any" {
            return Ok(None);
        }
        Encoding::from_name(s).map(Some)
    }

    /// Reads `text` in `encoding`, or by its shape for `None` ([`Encoding::from_name_or_any`]).
    pub fn parse_in(encoding: Option<Encoding>, text: &str) -> Result<u64> {
        match encoding {
            Some(e) => e.parse(text),
            None => parse_any(text),
        }
    }

    const fn radix(self) -> u64 {
        match self {
            Encoding::Decimal => 10,
            Encoding::Hex => 16,
            Encoding::Base32 => 32,
            Encoding::Base58 => 58,
        }
    }

    /// Fixed width of the written form (decimal: its longest, 20).
    pub const fn width(self) -> usize {
        match self {
            Encoding::Decimal => 20,
            Encoding::Hex => 16,
            Encoding::Base32 => 13,
            Encoding::Base58 => 11,
        }
    }

    const fn alphabet(self) -> &'static [u8] {
        match self {
            Encoding::Decimal | Encoding::Hex => b"0123456789abcdef",
            Encoding::Base32 => CROCKFORD,
            Encoding::Base58 => BASE58,
        }
    }

    fn digit(self, c: u8) -> Option<u64> {
        let v = match self {
            Encoding::Decimal => match c {
                b'0'..=b'9' => c - b'0',
                _ => return None,
            },
            Encoding::Hex => match c {
                b'0'..=b'9' => c - b'0',
                b'a'..=b'f' => c - b'a' + 10,
                b'A'..=b'F' => c - b'A' + 10,
                _ => return None,
            },
            Encoding::Base32 => match c.to_ascii_uppercase() {
                b'O' => 0,
                b'I' | b'L' => 1,
                u => CROCKFORD.iter().position(|&a| a == u)? as u8,
            },
            Encoding::Base58 => BASE58.iter().position(|&a| a == c)? as u8,
        };
        Some(v as u64)
    }

    /// Writes `id` in this form (no allocation).
    ///
    /// ```
    /// use snowmint::Encoding;
    /// assert_eq!(Encoding::Base58.encode(0).as_str(), "11111111111");
    /// assert_eq!(Encoding::Hex.encode(255).as_str(), "00000000000000ff");
    /// assert_eq!(Encoding::Decimal.encode(255).as_str(), "255");
    /// ```
    pub fn encode(self, id: u64) -> Encoded {
        let mut bytes = [0u8; 20];
        let radix = self.radix();
        let alphabet = self.alphabet();
        let mut n = id;
        let mut i = 20;
        loop {
            i -= 1;
            bytes[i] = alphabet[(n % radix) as usize];
            n /= radix;
            let written = 20 - i;
            let done = match self {
                Encoding::Decimal => n == 0,
                _ => written == self.width(),
            };
            if done {
                break;
            }
        }
        Encoded {
            bytes,
            start: i as u8,
        }
    }

    /// Parses an ID written in this form.
    ///
    /// ```
    /// use snowmint::{Encoding, ErrorCode};
    /// assert_eq!(Encoding::Hex.parse("0xff").unwrap(), 255);
    /// let err = Encoding::Base58.parse("3hs0qtU4AFc").unwrap_err();
    /// assert_eq!(err.code(), ErrorCode::Parse);
    /// assert_eq!(err.to_string(), "invalid character '0' at position 3 for a base58 ID");
    /// ```
    pub fn parse(self, s: &str) -> Result<u64> {
        let parse_err = |kind, position, character| Error::Parse {
            kind,
            position,
            character,
            encoding: self.name(),
        };
        let (body, offset) = match self {
            // `strip_prefix`, not `&s[2..]`: no str-slicing panic path (its message formatting
            // costs the WASM module kilobytes).
            Encoding::Hex => match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
                Some(body) => (body, 2),
                None => (s, 0),
            },
            _ => (s, 0),
        };
        if body.is_empty() {
            return Err(parse_err(ParseErrorKind::Empty, offset, None));
        }
        let radix = self.radix();
        let mut value: u64 = 0;
        let mut overflow = false;
        for (i, c) in body.chars().enumerate() {
            let position = offset + i;
            let d = if c.is_ascii() {
                self.digit(c as u8)
            } else {
                None
            };
            let Some(d) = d else {
                return Err(parse_err(
                    ParseErrorKind::InvalidCharacter,
                    position,
                    Some(c),
                ));
            };
            if i >= self.width() {
                return Err(parse_err(ParseErrorKind::TooLong, position, None));
            }
            match value.checked_mul(radix).and_then(|v| v.checked_add(d)) {
                Some(v) => value = v,
                None => overflow = true,
            }
        }
        if overflow {
            return Err(parse_err(ParseErrorKind::Overflow, 0, None));
        }
        Ok(value)
    }
}

/// Parses an ID in any string form, telling them apart by shape: all decimal digits → decimal;
/// lowercase `0x…` or 16 characters → hex; 13 characters → base32; 11 characters → base58. (Uppercase
/// `0X…` of 13 characters is base32, which writes uppercase.)
///
/// It never chooses silently: an all-digit string that is also an ID of a fixed-width form (see
/// [`fixed_width_reading`]) is [`Error::AmbiguousId`] (code `PARSE`), naming both readings; parse it
/// with [`Encoding::parse`] instead.
///
/// ```
/// use snowmint::{parse_any, Encoding, Error, ErrorCode};
/// assert_eq!(parse_any("1212161207262208000").unwrap(), 1212161207262208000);
/// let err = parse_any("1970065334000000").unwrap_err(); // 16 digits: decimal, or hex?
/// assert_eq!(err.code(), ErrorCode::Parse);
/// assert!(matches!(err, Error::AmbiguousId { other: Encoding::Hex, other_value: 1832972002764259328, .. }));
/// assert_eq!(Encoding::Hex.parse("1970065334000000").unwrap(), 1832972002764259328);
/// ```
pub fn parse_any(s: &str) -> Result<u64> {
    parse_any_form(s).map(|(_, id)| id)
}

/// [`parse_any`], also saying which form the string was read in.
pub fn parse_any_form(s: &str) -> Result<(Encoding, u64)> {
    let enc = if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
        let decimal = Encoding::Decimal.parse(s)?;
        if let Some((other, other_value)) = fixed_width_reading(s) {
            return Err(Error::AmbiguousId {
                decimal,
                other,
                other_value,
            });
        }
        return Ok((Encoding::Decimal, decimal));
    } else if s.starts_with("0x") || (s.starts_with("0X") && s.len() != 13) || s.len() == 16 {
        Encoding::Hex
    } else if s.len() == 13 {
        Encoding::Base32
    } else if s.len() == 11 {
        Encoding::Base58
    } else {
        return Err(Error::Parse {
            kind: ParseErrorKind::Ambiguous,
            position: 0,
            character: None,
            encoding: "any",
        });
    };
    enc.parse(s).map(|id| (enc, id))
}

/// The reading of a string in the fixed-width form whose width it has (hex 16, base32 13, base58 11),
/// if that form accepts it. For an all-digit string this is what makes it ambiguous in [`parse_any`]:
/// every 16-digit string is also hex, every 13-digit one base32 (its first digit weighs 2^60, and 9·2^60
/// fits), and an 11-digit one is base58 unless it has a `0` (not a base58 digit; `1` is base58's zero).
pub fn fixed_width_reading(s: &str) -> Option<(Encoding, u64)> {
    let enc = [Encoding::Hex, Encoding::Base32, Encoding::Base58]
        .into_iter()
        .find(|e| e.width() == s.len())?;
    enc.parse(s).ok().map(|id| (enc, id))
}

/// An encoded ID held on the stack.
#[derive(Clone, Copy)]
pub struct Encoded {
    bytes: [u8; 20],
    start: u8,
}

impl Encoded {
    /// The text.
    pub fn as_str(&self) -> &str {
        core::str::from_utf8(&self.bytes[self.start as usize..]).unwrap_or("")
    }
}

impl fmt::Display for Encoded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Debug for Encoded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}
