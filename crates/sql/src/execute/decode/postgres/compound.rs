//! PostgreSQL arrays, ranges, multiranges and records from their binary form, quoted as PostgreSQL's output
//! functions quote them.

use std::fmt::Write as _;

use super::{Out, Reader, Ty, oid, render};

/// The element of built-in range types, by the range's OID.
pub(super) fn range_subtype(o: u32) -> Option<u32> {
    Some(match o {
        3904 => oid::INT4,
        3906 => oid::NUMERIC,
        3908 => oid::TIMESTAMP,
        3910 => oid::TIMESTAMPTZ,
        3912 => oid::DATE,
        3926 => oid::INT8,
        _ => return None,
    })
}

/// The range type of built-in multirange types, by the multirange's OID.
pub(super) fn multirange_range(o: u32) -> Option<u32> {
    Some(match o {
        4451 => 3904,
        4532 => 3906,
        4533 => 3908,
        4534 => 3910,
        4535 => 3912,
        4536 => 3926,
        _ => return None,
    })
}

/// Built-in array types (whose binary form names its element type), by OID.
pub(super) fn is_array(o: u32) -> bool {
    matches!(
        o,
        143 | 199
            | 271
            | 629
            | 651
            | 719
            | 775
            | 791
            | 1000..=1022
            | 1027
            | 1028
            | 1034
            | 1040
            | 1041
            | 1115
            | 1182
            | 1183
            | 1185
            | 1187
            | 1231
            | 1263
            | 1270
            | 1561
            | 1563
            | 2201
            | 2207..=2211
            | 2287
            | 2949
            | 2951
            | 3221
            | 3643..=3645
            | 3735
            | 3770
            | 3807
            | 3905
            | 3907
            | 3909
            | 3911
            | 3913
            | 3927
            | 4073
            | 4090
            | 4097
            | 4192
            | 6150..=6157
    )
}

/// One element of an array, range or record: its text, borrowed when it is text already.
fn element_text<'a>(ty: &Ty, bytes: &'a [u8], room: usize) -> std::borrow::Cow<'a, str> {
    let text_like = matches!(
        ty,
        Ty::Label
            | Ty::Oid(
                oid::TEXT
                    | oid::VARCHAR
                    | oid::BPCHAR
                    | oid::NAME
                    | oid::UNKNOWN
                    | oid::XML
                    | oid::JSON
            )
    );
    if text_like && let Ok(s) = std::str::from_utf8(bytes) {
        return s.into();
    }
    let mut out = Out::new(room);
    if render(ty, bytes, &mut out).is_some() {
        return out.text.into();
    }
    let mut out = Out::new(room);
    super::unknown(bytes, &mut out);
    out.text.into()
}

/// An array of at least one dimension whose bytes are read exactly, for a value of a type not known here.
pub(super) fn some_array(bytes: &[u8], out: &mut Out) -> Option<()> {
    let mut r = Reader(bytes);
    let (ndim, flags) = (r.i32()?, r.i32()?);
    if !(1..=6).contains(&ndim) || !(0..=1).contains(&flags) {
        return None;
    }
    array(bytes, None, ",", out)
}

/// A record of at least one field whose bytes are read exactly, for a value of a type not known here.
pub(super) fn some_record(bytes: &[u8], out: &mut Out) -> Option<()> {
    if Reader(bytes).i32()? < 1 {
        return None;
    }
    record(bytes, &[], out)
}

/// Writes `text` in double quotes when `needs_quotes`, escaping `"` and `\` with `escape` before them.
fn quoted(text: &str, needs_quotes: bool, escape: char, out: &mut Out) {
    if !needs_quotes {
        out.push_str(text);
        return;
    }
    out.push('"');
    let mut start = 0;
    for (k, c) in text.char_indices() {
        if c == '"' || c == '\\' {
            out.push_str(text.get(start..k).unwrap_or(""));
            out.push(if c == '\\' { '\\' } else { escape });
            start = k;
        }
    }
    out.push_str(text.get(start..).unwrap_or(""));
    out.push('"');
}

/// PostgreSQL's `isspace` for array, record and range output.
fn space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r' | '\u{b}' | '\u{c}')
}

/// An array: dimensions, element OID, then elements; written as `{1,NULL,3}`, `{{1,2},{3,4}}`, with
/// `[0:1]=` before it when a lower bound is not 1. `element` overrides the element type the value names (the
/// column's own element type knows domains and enums); `delimiter` is `,` (`;` for `box`, a space for the
/// `int2vector` and `oidvector` types, which have no braces).
pub(super) fn array(
    bytes: &[u8],
    element: Option<&Ty>,
    delimiter: &str,
    out: &mut Out,
) -> Option<()> {
    let mut r = Reader(bytes);
    let ndim = usize::try_from(r.i32()?).ok()?;
    let _has_nulls = r.i32()?;
    let element_oid = r.u32()?;
    let named = Ty::Oid(element_oid);
    let ty = element.unwrap_or(&named);
    let delimiter = if element_oid == oid::BOX {
        ";"
    } else {
        delimiter
    };
    let vector = delimiter == " ";
    let mut dims = Vec::with_capacity(ndim.min(6));
    for _ in 0..ndim {
        let (len, lower) = (usize::try_from(r.i32()?).ok()?, r.i32()?);
        dims.push((len, lower));
    }
    if ndim == 0 || dims.iter().any(|(len, _)| *len == 0) {
        if !vector {
            out.push_str("{}");
        }
        return r.end();
    }
    if !vector && dims.iter().any(|(_, lower)| *lower != 1) {
        for (len, lower) in &dims {
            let upper = i64::from(*lower) + i64::try_from(*len).ok()? - 1;
            let _ = write!(out, "[{lower}:{upper}]");
        }
        out.push('=');
    }
    let total = dims
        .iter()
        .try_fold(1usize, |acc, (len, _)| acc.checked_mul(*len))?;
    // Open the braces of every dimension that starts at element k, write it, close those that end there.
    let mut sizes = Vec::with_capacity(dims.len());
    let mut size: usize = 1;
    for (len, _) in dims.iter().rev() {
        size = size.checked_mul(*len)?;
        sizes.push(size);
    }
    sizes.reverse();
    for k in 0..total {
        let opening = sizes.iter().filter(|s| k % **s == 0).count();
        if k > 0 {
            out.push_str(delimiter);
        }
        if !vector {
            for _ in 0..opening {
                out.push('{');
            }
        }
        match r.value()? {
            None => out.push_str("NULL"),
            Some(value) => {
                let text = element_text(ty, value, out.room());
                let needs_quotes = !vector
                    && (text.is_empty()
                        || text.eq_ignore_ascii_case("NULL")
                        || text.chars().any(|c| {
                            matches!(c, '"' | '\\' | '{' | '}') || delimiter.contains(c) || space(c)
                        }));
                quoted(&text, needs_quotes, '\\', out);
            }
        }
        if !vector {
            let closing = sizes.iter().filter(|s| (k + 1) % **s == 0).count();
            for _ in 0..closing {
                out.push('}');
            }
        }
        if out.is_full() {
            return Some(());
        }
    }
    r.end()
}

const EMPTY: u8 = 0x01;
const LB_INC: u8 = 0x02;
const UB_INC: u8 = 0x04;
const LB_INF: u8 = 0x08;
const UB_INF: u8 = 0x10;

/// A range: flags, then the bounds that are present; written as `[1,5)`, `(,)` or `empty`.
pub(super) fn range(bytes: &[u8], subtype: &Ty, out: &mut Out) -> Option<()> {
    let mut r = Reader(bytes);
    let flags = r.u8()?;
    if flags & EMPTY != 0 {
        out.push_str("empty");
        return r.end();
    }
    out.push(if flags & LB_INC != 0 { '[' } else { '(' });
    if flags & LB_INF == 0 {
        bound(r.value()??, subtype, out);
    }
    out.push(',');
    if flags & UB_INF == 0 {
        bound(r.value()??, subtype, out);
    }
    out.push(if flags & UB_INC != 0 { ']' } else { ')' });
    if out.is_full() { Some(()) } else { r.end() }
}

fn bound(bytes: &[u8], subtype: &Ty, out: &mut Out) {
    let text = element_text(subtype, bytes, out.room());
    let needs_quotes = text.is_empty()
        || text
            .chars()
            .any(|c| matches!(c, '"' | '\\' | '(' | ')' | '[' | ']' | ',') || space(c));
    quoted(&text, needs_quotes, '"', out);
}

/// A multirange: a count, then each range with its length; written as `{[1,3),[5,7)}`.
pub(super) fn multirange(bytes: &[u8], range_oid: u32, out: &mut Out) -> Option<()> {
    let subtype = Ty::Oid(range_subtype(range_oid)?);
    let mut r = Reader(bytes);
    let count = r.i32()?;
    out.push('{');
    for k in 0..count {
        if k > 0 {
            out.push(',');
        }
        range(r.value()??, &subtype, out)?;
        if out.is_full() {
            return Some(());
        }
    }
    out.push('}');
    r.end()
}

/// A record: a field count, then each field's OID and value; written as `(1,"a b",)` (NULL is nothing).
/// `fields` are the composite type's own field types, when known.
pub(super) fn record(bytes: &[u8], fields: &[Ty], out: &mut Out) -> Option<()> {
    let mut r = Reader(bytes);
    let count = usize::try_from(r.i32()?).ok()?;
    out.push('(');
    for k in 0..count {
        if k > 0 {
            out.push(',');
        }
        let named = Ty::Oid(r.u32()?);
        let ty = fields.get(k).unwrap_or(&named);
        if let Some(value) = r.value()? {
            let text = element_text(ty, value, out.room());
            let needs_quotes = text.is_empty()
                || text
                    .chars()
                    .any(|c| matches!(c, '"' | '\\' | '(' | ')' | ',') || space(c));
            quoted(&text, needs_quotes, '"', out);
        }
        if out.is_full() {
            return Some(());
        }
    }
    out.push(')');
    r.end()
}
