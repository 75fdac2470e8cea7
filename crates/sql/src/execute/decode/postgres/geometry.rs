//! PostgreSQL's geometric types from their binary form, with coordinates written like `float8`.

use super::scalar::float8;
use super::{Out, Reader, oid};

/// `point`, `lseg`, `box`, `path`, `polygon`, `line` and `circle`.
pub(super) fn geometry(o: u32, bytes: &[u8], out: &mut Out) -> Option<()> {
    let mut r = Reader(bytes);
    let point = |r: &mut Reader<'_>, out: &mut Out| -> Option<()> {
        let (x, y) = (r.f64()?, r.f64()?);
        out.push('(');
        float8(x, out);
        out.push(',');
        float8(y, out);
        out.push(')');
        Some(())
    };
    let points = |r: &mut Reader<'_>, n: usize, out: &mut Out| -> Option<()> {
        for k in 0..n {
            if k > 0 {
                out.push(',');
            }
            point(r, out)?;
            if out.is_full() {
                return Some(());
            }
        }
        Some(())
    };
    match o {
        oid::POINT => point(&mut r, out)?,
        oid::LSEG => {
            out.push('[');
            points(&mut r, 2, out)?;
            out.push(']');
        }
        oid::BOX => points(&mut r, 2, out)?,
        oid::PATH => {
            let closed = r.u8()? != 0;
            let n = usize::try_from(r.i32()?).ok()?;
            out.push(if closed { '(' } else { '[' });
            points(&mut r, n, out)?;
            out.push(if closed { ')' } else { ']' });
        }
        oid::POLYGON => {
            let n = usize::try_from(r.i32()?).ok()?;
            out.push('(');
            points(&mut r, n, out)?;
            out.push(')');
        }
        oid::LINE => {
            let (a, b, c) = (r.f64()?, r.f64()?, r.f64()?);
            out.push('{');
            float8(a, out);
            out.push(',');
            float8(b, out);
            out.push(',');
            float8(c, out);
            out.push('}');
        }
        oid::CIRCLE => {
            out.push('<');
            point(&mut r, out)?;
            out.push(',');
            float8(r.f64()?, out);
            out.push('>');
        }
        _ => return None,
    }
    if out.is_full() { Some(()) } else { r.end() }
}
