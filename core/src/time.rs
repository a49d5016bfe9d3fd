//! ISO-8601 UTC text for Unix times, without `std` (days-to-civil after Howard Hinnant's algorithm).

use core::fmt;

/// A Unix instant that displays as ISO-8601 UTC, e.g. `2021-12-28T14:07:02.954Z`.
///
/// Millisecond precision by default; nanosecond precision (`.954100128Z`) for layouts whose tick is not a
/// whole number of milliseconds. Years past 9999 are written in ISO's expanded form (`+12345-…`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct IsoTime {
    unix_ms: u64,
    sub_ms_ns: u32,
    nanos: bool,
}

impl IsoTime {
    /// Millisecond precision.
    pub const fn from_unix_ms(unix_ms: u64) -> Self {
        IsoTime {
            unix_ms,
            sub_ms_ns: 0,
            nanos: false,
        }
    }

    /// Nanosecond precision.
    pub const fn from_unix_ns(unix_ns: u64) -> Self {
        IsoTime {
            unix_ms: unix_ns / 1_000_000,
            sub_ms_ns: (unix_ns % 1_000_000) as u32,
            nanos: true,
        }
    }

    pub(crate) const fn new(unix_ms: u64, sub_ms_ns: u32, nanos: bool) -> Self {
        IsoTime {
            unix_ms,
            sub_ms_ns,
            nanos,
        }
    }

    /// Writes the text into a stack buffer and returns it (no allocation).
    pub fn to_buf(&self) -> IsoBuf {
        let mut buf = IsoBuf {
            bytes: [0; 40],
            len: 0,
        };
        let _ = fmt::write(&mut buf, format_args!("{self}"));
        buf
    }
}

/// Civil date (year, month 1..=12, day 1..=31) of a day count since 1970-01-01.
pub(crate) const fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = if z >= 0 { z } else { z - 146_096 } / 146_097;
    let doe = (z - era * 146_097) as u64; // [0, 146096]
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365; // [0, 399]
    let y = yoe as i64 + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100); // [0, 365]
    let mp = (5 * doy + 2) / 153; // [0, 11]
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32; // [1, 31]
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32; // [1, 12]
    (if m <= 2 { y + 1 } else { y }, m, d)
}

impl fmt::Display for IsoTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let secs = self.unix_ms / 1000;
        let ms = (self.unix_ms % 1000) as u32;
        let days = (secs / 86_400) as i64;
        let rem = secs % 86_400;
        let (y, mo, d) = civil_from_days(days);
        if y > 9999 {
            write!(f, "+{y}")?;
        } else {
            write!(f, "{y:04}")?;
        }
        write!(
            f,
            "-{mo:02}-{d:02}T{:02}:{:02}:{:02}",
            rem / 3600,
            rem / 60 % 60,
            rem % 60
        )?;
        if self.nanos {
            write!(f, ".{:09}Z", ms * 1_000_000 + self.sub_ms_ns)
        } else {
            write!(f, ".{ms:03}Z")
        }
    }
}

/// ISO text held on the stack; see [`IsoTime::to_buf`].
#[derive(Clone, Copy)]
pub struct IsoBuf {
    bytes: [u8; 40],
    len: usize,
}

impl IsoBuf {
    /// The text.
    pub fn as_str(&self) -> &str {
        // Only ASCII is ever written.
        core::str::from_utf8(&self.bytes[..self.len]).unwrap_or("")
    }
}

impl fmt::Write for IsoBuf {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let end = self.len + s.len();
        if end > self.bytes.len() {
            return Err(fmt::Error);
        }
        self.bytes[self.len..end].copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

impl fmt::Debug for IsoBuf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for IsoBuf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_instants() {
        assert_eq!(
            IsoTime::from_unix_ms(0).to_buf().as_str(),
            "1970-01-01T00:00:00.000Z"
        );
        assert_eq!(
            IsoTime::from_unix_ms(1288834974657).to_buf().as_str(),
            "2010-11-04T01:42:54.657Z"
        );
        assert_eq!(
            IsoTime::from_unix_ms(951782400000).to_buf().as_str(),
            "2000-02-29T00:00:00.000Z"
        );
        assert_eq!(
            IsoTime::from_unix_ns(1640700422954100128).to_buf().as_str(),
            "2021-12-28T14:07:02.954100128Z"
        );
        assert_eq!(
            IsoTime::from_unix_ms(253402300800000).to_buf().as_str(),
            "+10000-01-01T00:00:00.000Z"
        );
        let far = IsoTime::from_unix_ms(u64::MAX).to_buf();
        assert!(
            far.as_str().starts_with("+584556019-") && far.as_str().ends_with(".615Z"),
            "{far}"
        );
    }
}
