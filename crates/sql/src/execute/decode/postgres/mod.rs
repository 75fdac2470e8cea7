//! PostgreSQL cells. A query as written (simple query protocol) brings every value as the text psql shows; a
//! prepared statement brings values in binary, which this module renders to the same text from the bytes alone.

mod compound;
mod geometry;
mod network;
mod scalar;
mod time;

use serde_json::{Value, json};
use sqlx::postgres::{PgRow, PgTypeInfo, PgTypeKind, PgValueFormat};
use sqlx::{Row, TypeInfo, ValueRef};

use super::Out;

/// The OIDs of PostgreSQL's built-in types used here (from `pg_type.dat`; stable across versions).
pub(super) mod oid {
    pub(crate) const BOOL: u32 = 16;
    pub(crate) const BYTEA: u32 = 17;
    pub(crate) const CHAR: u32 = 18;
    pub(crate) const NAME: u32 = 19;
    pub(crate) const INT8: u32 = 20;
    pub(crate) const INT2: u32 = 21;
    pub(crate) const INT2VECTOR: u32 = 22;
    pub(crate) const INT4: u32 = 23;
    pub(crate) const REGPROC: u32 = 24;
    pub(crate) const TEXT: u32 = 25;
    pub(crate) const OID: u32 = 26;
    pub(crate) const TID: u32 = 27;
    pub(crate) const XID: u32 = 28;
    pub(crate) const CID: u32 = 29;
    pub(crate) const OIDVECTOR: u32 = 30;
    pub(crate) const JSON: u32 = 114;
    pub(crate) const XML: u32 = 142;
    pub(crate) const POINT: u32 = 600;
    pub(crate) const LSEG: u32 = 601;
    pub(crate) const PATH: u32 = 602;
    pub(crate) const BOX: u32 = 603;
    pub(crate) const POLYGON: u32 = 604;
    pub(crate) const LINE: u32 = 628;
    pub(crate) const CIDR: u32 = 650;
    pub(crate) const FLOAT4: u32 = 700;
    pub(crate) const FLOAT8: u32 = 701;
    pub(crate) const UNKNOWN: u32 = 705;
    pub(crate) const CIRCLE: u32 = 718;
    pub(crate) const MACADDR8: u32 = 774;
    pub(crate) const MONEY: u32 = 790;
    pub(crate) const MACADDR: u32 = 829;
    pub(crate) const INET: u32 = 869;
    pub(crate) const BPCHAR: u32 = 1042;
    pub(crate) const VARCHAR: u32 = 1043;
    pub(crate) const DATE: u32 = 1082;
    pub(crate) const TIME: u32 = 1083;
    pub(crate) const TIMESTAMP: u32 = 1114;
    pub(crate) const TIMESTAMPTZ: u32 = 1184;
    pub(crate) const INTERVAL: u32 = 1186;
    pub(crate) const TIMETZ: u32 = 1266;
    pub(crate) const BIT: u32 = 1560;
    pub(crate) const VARBIT: u32 = 1562;
    pub(crate) const NUMERIC: u32 = 1700;
    pub(crate) const RECORD: u32 = 2249;
    pub(crate) const CSTRING: u32 = 2275;
    pub(crate) const VOID: u32 = 2278;
    pub(crate) const UUID: u32 = 2950;
    pub(crate) const PG_LSN: u32 = 3220;
    pub(crate) const TSVECTOR: u32 = 3614;
    pub(crate) const JSONB: u32 = 3802;
    pub(crate) const JSONPATH: u32 = 4072;
    pub(crate) const XID8: u32 = 5069;
    /// `regprocedure`, `regoper`, `regoperator`, `regclass`, `regtype`, `regconfig`, `regdictionary`,
    /// `regnamespace`, `regrole`, `regcollation` (and `regproc` above).
    pub(crate) const REG: [u32; 10] = [2202, 2203, 2204, 2205, 2206, 3734, 3769, 4089, 4096, 4191];
}

/// A column's type as far as rendering goes.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Ty {
    /// A type known by its OID (built-in types, and any type the driver did not describe).
    Oid(u32),
    /// An enum: its binary form is its label.
    Label,
    /// An array of the given element type.
    Array(Box<Ty>),
    /// A range over the given subtype.
    Range(Box<Ty>),
    /// A composite type with its field types (empty for an anonymous record: the value names them).
    Record(Vec<Ty>),
}

impl Ty {
    /// The rendering type of a column: domains are their base type.
    fn of(info: &PgTypeInfo) -> Ty {
        let oid = info.oid().map_or(0, |o| o.0);
        // A type the driver has not described (the simple query protocol does not look types up) has the name
        // `?`; asking for its kind would panic in the driver.
        if info.name() == "?" || info.oid().is_none() {
            return Ty::Oid(oid);
        }
        match info.kind() {
            PgTypeKind::Simple | PgTypeKind::Pseudo => Ty::Oid(oid),
            PgTypeKind::Domain(base) => Ty::of(base),
            PgTypeKind::Enum(_) => Ty::Label,
            PgTypeKind::Composite(fields) => {
                Ty::Record(fields.iter().map(|(_, t)| Ty::of(t)).collect())
            }
            PgTypeKind::Array(element) => Ty::Array(Box::new(Ty::of(element))),
            PgTypeKind::Range(subtype) => Ty::Range(Box::new(Ty::of(subtype))),
        }
    }
}

/// How a value becomes JSON.
enum Class {
    Bool,
    Int,
    Float,
    Json,
    Bytea,
    Text,
}

fn class(ty: &Ty) -> Class {
    match ty {
        Ty::Oid(oid::BOOL) => Class::Bool,
        Ty::Oid(oid::INT2 | oid::INT4 | oid::INT8 | oid::OID) => Class::Int,
        Ty::Oid(oid::FLOAT4 | oid::FLOAT8) => Class::Float,
        Ty::Oid(oid::JSON | oid::JSONB) => Class::Json,
        Ty::Oid(oid::BYTEA) => Class::Bytea,
        _ => Class::Text,
    }
}

/// One PostgreSQL cell and whether it was cut to `max` bytes.
pub(crate) fn postgres(row: &PgRow, i: usize, max: usize) -> (Value, bool) {
    let Ok(raw) = row.try_get_raw(i) else {
        return (Value::Null, false);
    };
    if raw.is_null() {
        return (Value::Null, false);
    }
    let Ok(bytes) = raw.as_bytes() else {
        return (Value::Null, false);
    };
    let ty = Ty::of(&raw.type_info());
    match raw.format() {
        PgValueFormat::Text => from_text(&ty, bytes, max),
        PgValueFormat::Binary => from_binary(&ty, bytes, max),
    }
}

/// A value in PostgreSQL's text format: numbers, booleans and JSON become JSON; the rest is the text itself.
fn from_text(ty: &Ty, bytes: &[u8], max: usize) -> (Value, bool) {
    let Ok(s) = std::str::from_utf8(bytes) else {
        return super::hex(bytes, max);
    };
    match class(ty) {
        Class::Bool => match s {
            "t" => (Value::Bool(true), false),
            "f" => (Value::Bool(false), false),
            _ => super::text(s, max),
        },
        Class::Int => match (s.parse::<i64>(), s.parse::<u64>()) {
            (Ok(v), _) => (json!(v), false),
            (_, Ok(v)) => (json!(v), false),
            _ => super::text(s, max),
        },
        Class::Float => (super::float_text(s), false),
        Class::Json => super::json_doc(s, max),
        Class::Bytea => match s.strip_prefix("\\x") {
            Some(_) => super::text(s, max),
            None => scalar::bytea_escape(s, max),
        },
        Class::Text => super::text(s, max),
    }
}

/// A value in PostgreSQL's binary format.
fn from_binary(ty: &Ty, bytes: &[u8], max: usize) -> (Value, bool) {
    let mut r = Reader(bytes);
    let direct = match class(ty) {
        Class::Bool if bytes.len() == 1 => Some(Value::Bool(bytes != [0])),
        Class::Int => match (ty, bytes.len()) {
            (Ty::Oid(oid::OID), 4) => r.u32().map(|v| json!(v)),
            (_, 2) => r.i16().map(|v| json!(v)),
            (_, 4) => r.i32().map(|v| json!(v)),
            (_, 8) => r.i64().map(|v| json!(v)),
            _ => None,
        },
        Class::Float => match bytes.len() {
            4 => r.f32().map(|x| {
                super::float4(x)
                    .unwrap_or_else(|| Value::String(scalar::float_special(f64::from(x))))
            }),
            8 => r.f64().map(|x| {
                super::finite(x).unwrap_or_else(|| Value::String(scalar::float_special(x)))
            }),
            _ => None,
        },
        Class::Json => {
            let text = match ty {
                Ty::Oid(oid::JSONB) => bytes.strip_prefix(&[1]),
                _ => Some(bytes),
            };
            if let Some(s) = text.and_then(|t| std::str::from_utf8(t).ok()) {
                return super::json_doc(s, max);
            }
            None
        }
        Class::Bytea => return super::hex(bytes, max),
        Class::Bool | Class::Text => None,
    };
    if let Some(value) = direct {
        return (value, false);
    }
    let mut out = Out::new(max);
    if render(ty, bytes, &mut out).is_none() {
        out = Out::new(max);
        unknown(bytes, &mut out);
    }
    out.finish()
}

/// A binary value of a type not known here: printable UTF-8 as it is (enums, `citext`, domains over text); an
/// array or a record when the bytes are exactly one in PostgreSQL's binary form (both name the types of what
/// they hold: an array of enums, a composite inside an anonymous record); else hex.
pub(super) fn unknown(bytes: &[u8], out: &mut Out) {
    if let Some(s) = super::printable(bytes) {
        out.push_str(s);
        return;
    }
    for attempt in [compound::some_array, compound::some_record] {
        let mut tried = Out::new(out.room());
        if attempt(bytes, &mut tried).is_some() {
            out.push_str(&tried.text);
            out.cut |= tried.cut;
            return;
        }
    }
    out.push_str("\\x");
    super::push_hex(out, bytes);
}

/// Writes a binary value as PostgreSQL's text output (ISO dates, UTC, `postgres` intervals); `None` when the
/// type is not known here or the bytes are not its binary form.
pub(super) fn render(ty: &Ty, bytes: &[u8], out: &mut Out) -> Option<()> {
    match ty {
        Ty::Label => {
            out.push_str(std::str::from_utf8(bytes).ok()?);
            Some(())
        }
        Ty::Array(element) => compound::array(bytes, Some(element), ",", out),
        Ty::Range(subtype) => compound::range(bytes, subtype, out),
        Ty::Record(fields) => compound::record(bytes, fields, out),
        Ty::Oid(o) => render_oid(*o, bytes, out),
    }
}

fn render_oid(o: u32, bytes: &[u8], out: &mut Out) -> Option<()> {
    let mut r = Reader(bytes);
    let text = |out: &mut Out| {
        out.push_str(std::str::from_utf8(bytes).ok()?);
        Some(())
    };
    match o {
        oid::TEXT
        | oid::VARCHAR
        | oid::BPCHAR
        | oid::NAME
        | oid::UNKNOWN
        | oid::XML
        | oid::CSTRING
        | oid::JSON
        | oid::VOID => text(out),
        oid::JSONB | oid::JSONPATH => {
            out.push_str(std::str::from_utf8(bytes.strip_prefix(&[1])?).ok()?);
            Some(())
        }
        oid::BOOL => {
            out.push_str(if r.u8()? != 0 { "t" } else { "f" });
            r.end()
        }
        oid::CHAR => scalar::char(bytes, out),
        oid::INT2 => r.exact(2, |r| r.i16().map(|v| out.push_str(&v.to_string()))),
        oid::INT4 => r.exact(4, |r| r.i32().map(|v| out.push_str(&v.to_string()))),
        oid::INT8 => r.exact(8, |r| r.i64().map(|v| out.push_str(&v.to_string()))),
        oid::OID | oid::XID | oid::CID | oid::REGPROC => {
            r.exact(4, |r| r.u32().map(|v| out.push_str(&v.to_string())))
        }
        o if oid::REG.contains(&o) => r.exact(4, |r| r.u32().map(|v| out.push_str(&v.to_string()))),
        oid::XID8 => r.exact(8, |r| r.u64().map(|v| out.push_str(&v.to_string()))),
        oid::FLOAT4 => r.exact(4, |r| r.f32().map(|x| scalar::float4(x, out))),
        oid::FLOAT8 => r.exact(8, |r| r.f64().map(|x| scalar::float8(x, out))),
        oid::NUMERIC => scalar::numeric(bytes, out),
        oid::MONEY => r.exact(8, |r| r.i64().map(|v| scalar::money(v, out))),
        oid::BYTEA => {
            out.push_str("\\x");
            super::push_hex(out, bytes);
            Some(())
        }
        oid::UUID => scalar::uuid(bytes, out),
        oid::INET | oid::CIDR => network::inet(bytes, out),
        oid::MACADDR | oid::MACADDR8 => network::macaddr(bytes, out),
        oid::BIT | oid::VARBIT => scalar::bits(bytes, out),
        oid::POINT | oid::LSEG | oid::PATH | oid::BOX | oid::POLYGON | oid::LINE | oid::CIRCLE => {
            geometry::geometry(o, bytes, out)
        }
        oid::PG_LSN => r.exact(8, |r| r.u64().map(|v| scalar::lsn(v, out))),
        oid::TID => scalar::tid(bytes, out),
        oid::TSVECTOR => scalar::tsvector(bytes, out),
        oid::DATE => time::date(bytes, out),
        oid::TIME => time::time(bytes, out),
        oid::TIMETZ => time::timetz(bytes, out),
        oid::TIMESTAMP => time::timestamp(bytes, false, out),
        oid::TIMESTAMPTZ => time::timestamp(bytes, true, out),
        oid::INTERVAL => time::interval(bytes, out),
        oid::INT2VECTOR | oid::OIDVECTOR => compound::array(bytes, None, " ", out),
        oid::RECORD => compound::record(bytes, &[], out),
        o => {
            if let Some(subtype) = compound::range_subtype(o) {
                compound::range(bytes, &Ty::Oid(subtype), out)
            } else if let Some(range) = compound::multirange_range(o) {
                compound::multirange(bytes, range, out)
            } else if compound::is_array(o) {
                compound::array(bytes, None, ",", out)
            } else {
                None
            }
        }
    }
}

/// Big-endian reads over a binary value; every read says `None` past the end.
pub(super) struct Reader<'a>(pub(super) &'a [u8]);

impl<'a> Reader<'a> {
    pub(super) fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let (head, rest) = self.0.split_at_checked(n)?;
        self.0 = rest;
        Some(head)
    }

    fn array<const N: usize>(&mut self) -> Option<[u8; N]> {
        self.take(N)?.try_into().ok()
    }

    pub(super) fn u8(&mut self) -> Option<u8> {
        self.array::<1>().map(|[b]| b)
    }

    pub(super) fn i16(&mut self) -> Option<i16> {
        self.array().map(i16::from_be_bytes)
    }

    pub(super) fn u16(&mut self) -> Option<u16> {
        self.array().map(u16::from_be_bytes)
    }

    pub(super) fn i32(&mut self) -> Option<i32> {
        self.array().map(i32::from_be_bytes)
    }

    pub(super) fn u32(&mut self) -> Option<u32> {
        self.array().map(u32::from_be_bytes)
    }

    pub(super) fn i64(&mut self) -> Option<i64> {
        self.array().map(i64::from_be_bytes)
    }

    pub(super) fn u64(&mut self) -> Option<u64> {
        self.array().map(u64::from_be_bytes)
    }

    pub(super) fn f32(&mut self) -> Option<f32> {
        self.array().map(f32::from_be_bytes)
    }

    pub(super) fn f64(&mut self) -> Option<f64> {
        self.array().map(f64::from_be_bytes)
    }

    /// A length-prefixed value: `Some(None)` for NULL (length -1).
    pub(super) fn value(&mut self) -> Option<Option<&'a [u8]>> {
        let len = self.i32()?;
        if len < 0 {
            return Some(None);
        }
        self.take(usize::try_from(len).ok()?).map(Some)
    }

    /// `Some` when every byte was read.
    pub(super) fn end(&self) -> Option<()> {
        self.0.is_empty().then_some(())
    }

    /// Runs `read` on a value that must be exactly `n` bytes long.
    fn exact<T>(&mut self, n: usize, read: impl FnOnce(&mut Self) -> Option<T>) -> Option<()> {
        if self.0.len() != n {
            return None;
        }
        read(self).map(|_| ())
    }
}

#[cfg(test)]
mod tests;
