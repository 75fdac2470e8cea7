//! PostgreSQL dates and times from their binary form, written as PostgreSQL does with `DateStyle = ISO` and
//! `IntervalStyle = postgres`; `timestamptz` in UTC. Decoded here, not by chrono, so that `infinity`, BC dates,
//! `24:00:00` and years beyond 9999 come out as PostgreSQL writes them instead of failing.

use std::fmt::Write as _;

use super::{Out, Reader};

const USECS_PER_DAY: i64 = 86_400_000_000;
/// Days from 1970-01-01 to 2000-01-01, PostgreSQL's epoch.
const EPOCH_SHIFT: i64 = 10_957;

/// The proleptic Gregorian (astronomical year, month, day) of a day counted from 1970-01-01.
fn civil(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// `YYYY-MM-DD` of a day counted from 2000-01-01; true when it is BC (year 0 is 1 BC).
fn write_date(days: i64, out: &mut Out) -> bool {
    let (year, month, day) = civil(days + EPOCH_SHIFT);
    let (shown, bc) = if year <= 0 {
        (1 - year, true)
    } else {
        (year, false)
    };
    let _ = write!(out, "{shown:04}-{month:02}-{day:02}");
    bc
}

/// `HH:MM:SS` and, when not zero, the fraction without trailing zeros.
fn write_time(usecs: i64, out: &mut Out) {
    let (h, rest) = (usecs / 3_600_000_000, usecs % 3_600_000_000);
    let (m, rest) = (rest / 60_000_000, rest % 60_000_000);
    let (s, fraction) = (rest / 1_000_000, rest % 1_000_000);
    let _ = write!(out, "{h:02}:{m:02}:{s:02}");
    write_fraction(fraction.unsigned_abs(), out);
}

fn write_fraction(micros: u64, out: &mut Out) {
    if micros != 0 {
        let digits = format!("{micros:06}");
        out.push('.');
        out.push_str(digits.trim_end_matches('0'));
    }
}

/// `date`: days since 2000-01-01; the extremes are `infinity` and `-infinity`.
pub(super) fn date(bytes: &[u8], out: &mut Out) -> Option<()> {
    let mut r = Reader(bytes);
    let days = r.i32()?;
    r.end()?;
    match days {
        i32::MAX => out.push_str("infinity"),
        i32::MIN => out.push_str("-infinity"),
        days => {
            if write_date(i64::from(days), out) {
                out.push_str(" BC");
            }
        }
    }
    Some(())
}

/// `time`: microseconds since midnight (up to `24:00:00`).
pub(super) fn time(bytes: &[u8], out: &mut Out) -> Option<()> {
    let mut r = Reader(bytes);
    let usecs = r.i64()?;
    r.end()?;
    if !(0..=USECS_PER_DAY).contains(&usecs) {
        return None;
    }
    write_time(usecs, out);
    Some(())
}

/// `timetz`: the time, then the zone in seconds west of UTC, written as `+05:30`.
pub(super) fn timetz(bytes: &[u8], out: &mut Out) -> Option<()> {
    let mut r = Reader(bytes);
    let (usecs, zone) = (r.i64()?, r.i32()?);
    r.end()?;
    if !(0..=USECS_PER_DAY).contains(&usecs) {
        return None;
    }
    write_time(usecs, out);
    write_zone(zone, out);
    Some(())
}

/// A zone offset as PostgreSQL writes it: `+HH`, `+HH:MM` or `+HH:MM:SS` (`zone` is seconds west of UTC).
fn write_zone(zone: i32, out: &mut Out) {
    let sign = if zone <= 0 { '+' } else { '-' };
    let abs = zone.unsigned_abs();
    let (h, m, s) = (abs / 3600, abs / 60 % 60, abs % 60);
    let _ = write!(out, "{sign}{h:02}");
    if s != 0 {
        let _ = write!(out, ":{m:02}:{s:02}");
    } else if m != 0 {
        let _ = write!(out, ":{m:02}");
    }
}

/// `timestamp` and `timestamptz` (in UTC, `+00`): microseconds since 2000-01-01 00:00; the extremes are
/// `infinity` and `-infinity`.
pub(super) fn timestamp(bytes: &[u8], zoned: bool, out: &mut Out) -> Option<()> {
    let mut r = Reader(bytes);
    let usecs = r.i64()?;
    r.end()?;
    match usecs {
        i64::MAX => out.push_str("infinity"),
        i64::MIN => out.push_str("-infinity"),
        usecs => {
            let bc = write_date(usecs.div_euclid(USECS_PER_DAY), out);
            out.push(' ');
            write_time(usecs.rem_euclid(USECS_PER_DAY), out);
            if zoned {
                out.push_str("+00");
            }
            if bc {
                out.push_str(" BC");
            }
        }
    }
    Some(())
}

/// `interval`: microseconds, days, months, written in the `postgres` style: `1 year 2 mons -3 days +04:05:06.5`.
pub(super) fn interval(bytes: &[u8], out: &mut Out) -> Option<()> {
    let mut r = Reader(bytes);
    let (usecs, days, months) = (r.i64()?, r.i32()?, r.i32()?);
    r.end()?;
    let mut is_zero = true;
    let mut is_before = false;
    let mut part = |value: i64, unit: &str, out: &mut Out| {
        if value == 0 {
            return;
        }
        let space = if is_zero { "" } else { " " };
        let plus = if is_before && value > 0 { "+" } else { "" };
        let plural = if value == 1 { "" } else { "s" };
        let _ = write!(out, "{space}{plus}{value} {unit}{plural}");
        is_before = value < 0;
        is_zero = false;
    };
    part(i64::from(months / 12), "year", out);
    part(i64::from(months % 12), "mon", out);
    part(i64::from(days), "day", out);
    if is_zero || usecs != 0 {
        let space = if is_zero { "" } else { " " };
        let sign = if usecs < 0 {
            "-"
        } else if is_before {
            "+"
        } else {
            ""
        };
        let abs = usecs.unsigned_abs();
        let (h, rest) = (abs / 3_600_000_000, abs % 3_600_000_000);
        let (m, rest) = (rest / 60_000_000, rest % 60_000_000);
        let (s, fraction) = (rest / 1_000_000, rest % 1_000_000);
        let _ = write!(out, "{space}{sign}{h:02}:{m:02}:{s:02}");
        write_fraction(fraction, out);
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(f: impl FnOnce(&mut Out) -> Option<()>) -> String {
        let mut out = Out::new(200);
        f(&mut out).unwrap();
        out.as_str().to_owned()
    }

    fn days(v: i32) -> Vec<u8> {
        v.to_be_bytes().to_vec()
    }

    #[test]
    fn dates_cover_infinity_bc_and_far_years() {
        assert_eq!(run(|o| date(&days(0), o)), "2000-01-01");
        assert_eq!(run(|o| date(&days(9_091), o)), "2024-11-21");
        assert_eq!(run(|o| date(&days(i32::MAX), o)), "infinity");
        assert_eq!(run(|o| date(&days(i32::MIN), o)), "-infinity");
        // 44 BC, March 15 (proleptic Gregorian): day -746_117 from 2000-01-01.
        assert_eq!(run(|o| date(&days(-746_117), o)), "0044-03-15 BC");
        assert_eq!(run(|o| date(&days(2_921_940), o)), "10000-01-01");
    }

    #[test]
    fn times_and_timestamps() {
        let t = |us: i64| us.to_be_bytes().to_vec();
        assert_eq!(run(|o| time(&t(USECS_PER_DAY), o)), "24:00:00");
        assert_eq!(run(|o| time(&t(45_296_789_000), o)), "12:34:56.789");
        let mut tz = t(45_296_789_000);
        tz.extend((-19_800i32).to_be_bytes());
        assert_eq!(run(|o| timetz(&tz, o)), "12:34:56.789+05:30");
        let mut tz = t(43_200_000_000);
        tz.extend(12_330i32.to_be_bytes());
        assert_eq!(run(|o| timetz(&tz, o)), "12:00:00-03:25:30");
        assert_eq!(run(|o| timestamp(&t(i64::MAX), true, o)), "infinity");
        assert_eq!(
            run(|o| timestamp(&t(-746_117 * USECS_PER_DAY + 43_200_500_000), false, o)),
            "0044-03-15 12:00:00.5 BC"
        );
        assert_eq!(
            run(|o| timestamp(&t(-746_117 * USECS_PER_DAY + 43_200_000_000), true, o)),
            "0044-03-15 12:00:00+00 BC"
        );
        assert_eq!(
            run(|o| timestamp(&t(-1), false, o)),
            "1999-12-31 23:59:59.999999"
        );
    }

    #[test]
    fn intervals_read_like_postgres() {
        let v = |usecs: i64, days: i32, months: i32| {
            let mut b = usecs.to_be_bytes().to_vec();
            b.extend(days.to_be_bytes());
            b.extend(months.to_be_bytes());
            run(|o| interval(&b, o))
        };
        assert_eq!(v(3_723_000_000, 3, 14), "1 year 2 mons 3 days 01:02:03");
        assert_eq!(v(0, 0, 0), "00:00:00");
        assert_eq!(v(-1_500_000, -1, 0), "-1 days -00:00:01.5");
        assert_eq!(v(7_200_000_000, -1, 0), "-1 days +02:00:00");
        assert_eq!(v(0, 0, 11), "11 mons");
        assert_eq!(v(360_000_000_000, 0, 0), "100:00:00");
        assert_eq!(
            v(-14_706_500_000, 3, -14),
            "-1 years -2 mons +3 days -04:05:06.5"
        );
    }
}
