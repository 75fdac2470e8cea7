//! PostgreSQL's network types from their binary form: `inet`, `cidr`, `macaddr`, `macaddr8`.

use std::fmt::Write as _;

use super::{Out, Reader};

/// `inet` and `cidr`: family, bits, is-cidr flag, address length, address; the mask length is shown unless an
/// `inet` covers a single host. IPv6 is written as PostgreSQL does (longest zero run as `::`, an embedded IPv4
/// address in dotted form).
pub(super) fn inet(bytes: &[u8], out: &mut Out) -> Option<()> {
    let mut r = Reader(bytes);
    let (family, bits, is_cidr, len) = (r.u8()?, r.u8()?, r.u8()?, r.u8()?);
    let address = r.take(usize::from(len))?;
    r.end()?;
    let max_bits = match (family, address.len()) {
        (2, 4) => {
            let text: Vec<String> = address.iter().map(u8::to_string).collect();
            out.push_str(&text.join("."));
            32
        }
        (3, 16) => {
            ipv6(address, out);
            128
        }
        _ => return None,
    };
    if is_cidr != 0 || bits != max_bits {
        let _ = write!(out, "/{bits}");
    }
    Some(())
}

fn ipv6(address: &[u8], out: &mut Out) {
    let words: Vec<u16> = address
        .chunks(2)
        .map(|pair| match pair {
            [hi, lo] => u16::from_be_bytes([*hi, *lo]),
            _ => 0,
        })
        .collect();
    // The longest run of zero words (two or more), the first one on ties.
    // Runs as (first word, length).
    let mut best: Option<(usize, usize)> = None;
    let mut current: Option<(usize, usize)> = None;
    for (k, w) in words.iter().enumerate() {
        if *w == 0 {
            current = Some(current.map_or((k, 1), |(base, len)| (base, len + 1)));
        } else if let Some(run) = current.take()
            && best.is_none_or(|b| run.1 > b.1)
        {
            best = Some(run);
        }
    }
    if let Some(run) = current
        && best.is_none_or(|b| run.1 > b.1)
    {
        best = Some(run);
    }
    let best = best.filter(|b| b.1 >= 2);
    let word = |k: usize| words.get(k).copied().unwrap_or(0);
    for k in 0..8 {
        if let Some((base, len)) = best
            && k >= base
            && k < base + len
        {
            if k == base {
                out.push(':');
            }
            continue;
        }
        if k != 0 {
            out.push(':');
        }
        let embedded_v4 = k == 6
            && best.is_some_and(|(base, len)| {
                base == 0
                    && (len == 6 || (len == 7 && word(7) != 1) || (len == 5 && word(5) == 0xffff))
            });
        if embedded_v4 {
            let v4: Vec<String> = address.iter().skip(12).map(u8::to_string).collect();
            out.push_str(&v4.join("."));
            return;
        }
        let _ = write!(out, "{:x}", word(k));
    }
    if best.is_some_and(|(base, len)| base + len == 8) {
        out.push(':');
    }
}

/// `macaddr` and `macaddr8`: lowercase hex pairs joined by colons.
pub(super) fn macaddr(bytes: &[u8], out: &mut Out) -> Option<()> {
    if bytes.len() != 6 && bytes.len() != 8 {
        return None;
    }
    for (k, b) in bytes.iter().enumerate() {
        if k > 0 {
            out.push(':');
        }
        let _ = write!(out, "{b:02x}");
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(bytes: &[u8]) -> String {
        let mut out = Out::new(100);
        inet(bytes, &mut out).unwrap();
        out.as_str().to_owned()
    }

    #[test]
    fn network_addresses_read_like_postgres() {
        let v6 = |words: [u16; 8], bits: u8, cidr: u8| {
            let mut b = vec![3, bits, cidr, 16];
            for w in words {
                b.extend(w.to_be_bytes());
            }
            ip(&b)
        };
        assert_eq!(
            v6([0, 0, 0, 0, 0, 0xffff, 0x0102, 0x0304], 128, 0),
            "::ffff:1.2.3.4"
        );
        assert_eq!(v6([0, 0, 0, 0, 0, 0, 0x0102, 0x0304], 128, 0), "::1.2.3.4");
        assert_eq!(v6([0, 0, 0, 0, 0, 0, 0, 1], 128, 0), "::1");
        assert_eq!(
            v6([0x2001, 0xdb8, 0, 0, 0, 0, 0, 0], 32, 1),
            "2001:db8::/32"
        );
        assert_eq!(v6([1, 0, 0, 1, 0, 0, 0, 0], 128, 0), "1:0:0:1::");
        assert_eq!(ip(&[2, 8, 1, 4, 10, 0, 0, 0]), "10.0.0.0/8");
        assert_eq!(ip(&[2, 32, 1, 4, 10, 1, 2, 3]), "10.1.2.3/32");
        assert_eq!(ip(&[2, 32, 0, 4, 10, 1, 2, 3]), "10.1.2.3");
        assert_eq!(ip(&[2, 24, 0, 4, 10, 1, 2, 3]), "10.1.2.3/24");
    }
}
