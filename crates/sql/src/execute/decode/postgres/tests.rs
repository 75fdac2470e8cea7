//! Binary values built by hand, rendered as PostgreSQL writes them.

use serde_json::json;

use super::*;

fn array_bytes(element_oid: u32, dims: &[(i32, i32)], values: &[Option<&[u8]>]) -> Vec<u8> {
    let mut b = Vec::new();
    b.extend(i32::try_from(dims.len()).unwrap().to_be_bytes());
    b.extend(i32::from(values.iter().any(Option::is_none)).to_be_bytes());
    b.extend(element_oid.to_be_bytes());
    for (len, lower) in dims {
        b.extend(len.to_be_bytes());
        b.extend(lower.to_be_bytes());
    }
    for v in values {
        match v {
            None => b.extend((-1i32).to_be_bytes()),
            Some(v) => {
                b.extend(i32::try_from(v.len()).unwrap().to_be_bytes());
                b.extend(*v);
            }
        }
    }
    b
}

fn rendered(ty: &Ty, bytes: &[u8]) -> (serde_json::Value, bool) {
    from_binary(ty, bytes, 1000)
}

#[test]
fn arrays_keep_nulls_dimensions_bounds_and_quotes() {
    let one = 1i32.to_be_bytes();
    let three = 3i32.to_be_bytes();
    let b = array_bytes(oid::INT4, &[(3, 1)], &[Some(&one), None, Some(&three)]);
    assert_eq!(rendered(&Ty::Oid(1007), &b), (json!("{1,NULL,3}"), false));
    let (two, four) = (2i32.to_be_bytes(), 4i32.to_be_bytes());
    let b = array_bytes(
        oid::INT4,
        &[(2, 1), (2, 1)],
        &[Some(&one), Some(&two), Some(&three), Some(&four)],
    );
    assert_eq!(
        rendered(&Ty::Oid(1007), &b),
        (json!("{{1,2},{3,4}}"), false)
    );
    let b = array_bytes(oid::TEXT, &[(2, 0)], &[Some(b"a"), Some(b"b")]);
    assert_eq!(rendered(&Ty::Oid(1009), &b), (json!("[0:1]={a,b}"), false));
    let b = array_bytes(
        oid::TEXT,
        &[(6, 1)],
        &[
            Some(b"a b"),
            Some(b""),
            Some(b"NULL"),
            Some(b"x\"y"),
            Some(b"back\\slash"),
            None,
        ],
    );
    assert_eq!(
        rendered(&Ty::Array(Box::new(Ty::Oid(oid::TEXT))), &b),
        (
            json!(r#"{"a b","","NULL","x\"y","back\\slash",NULL}"#),
            false
        )
    );
    let b = array_bytes(oid::INT4, &[], &[]);
    assert_eq!(rendered(&Ty::Oid(1007), &b), (json!("{}"), false));
    // numeric[] keeps each element's scale.
    let n150: &[u8] = &[0, 2, 0, 0, 0, 0, 0, 2, 0, 1, 0x13, 0x88];
    let b = array_bytes(oid::NUMERIC, &[(1, 1)], &[Some(n150)]);
    assert_eq!(rendered(&Ty::Oid(1231), &b), (json!("{1.50}"), false));
}

#[test]
fn records_and_ranges_quote_like_postgres() {
    let mut b = 4i32.to_be_bytes().to_vec();
    for (o, v) in [
        (oid::INT4, Some(&1i32.to_be_bytes()[..])),
        (oid::TEXT, Some(&b"x\"y"[..])),
        (oid::TEXT, None),
        (oid::TEXT, Some(&b""[..])),
    ] {
        b.extend(o.to_be_bytes());
        match v {
            Some(v) => {
                b.extend(i32::try_from(v.len()).unwrap().to_be_bytes());
                b.extend(v);
            }
            None => b.extend((-1i32).to_be_bytes()),
        }
    }
    assert_eq!(
        rendered(&Ty::Oid(oid::RECORD), &b),
        (json!(r#"(1,"x""y",,"")"#), false)
    );
    let mut b = vec![LB_INC_FOR_TEST];
    for v in [1i32, 5] {
        b.extend(4i32.to_be_bytes());
        b.extend(v.to_be_bytes());
    }
    assert_eq!(rendered(&Ty::Oid(3904), &b), (json!("[1,5)"), false));
    assert_eq!(rendered(&Ty::Oid(3904), &[1]), (json!("empty"), false));
    assert_eq!(rendered(&Ty::Oid(3906), &[0x18]), (json!("(,)"), false));
}

const LB_INC_FOR_TEST: u8 = 0x02;

#[test]
fn scalars_from_binary() {
    assert_eq!(rendered(&Ty::Oid(oid::BOOL), &[1]), (json!(true), false));
    assert_eq!(
        rendered(&Ty::Oid(oid::INT8), &i64::MIN.to_be_bytes()),
        (json!(i64::MIN), false)
    );
    assert_eq!(
        rendered(&Ty::Oid(oid::FLOAT4), &0.1f32.to_be_bytes()),
        (json!(0.1), false)
    );
    assert_eq!(
        rendered(&Ty::Oid(oid::FLOAT8), &f64::NEG_INFINITY.to_be_bytes()),
        (json!("-Infinity"), false)
    );
    assert_eq!(
        rendered(&Ty::Oid(oid::JSONB), b"\x01{\"a\": 1}"),
        (json!({"a": 1}), false)
    );
    assert_eq!(
        rendered(&Ty::Oid(oid::BYTEA), &[0xde, 0xad]),
        (json!("\\xdead"), false)
    );
    assert_eq!(
        rendered(&Ty::Oid(oid::UUID), &[0xa0; 16]),
        (json!("a0a0a0a0-a0a0-a0a0-a0a0-a0a0a0a0a0a0"), false)
    );
    assert_eq!(
        rendered(
            &Ty::Oid(oid::PG_LSN),
            &0x16_0000_0000_u64.wrapping_add(0xB374D848).to_be_bytes()
        ),
        (json!("16/B374D848"), false)
    );
    assert_eq!(
        rendered(&Ty::Oid(oid::BIT), &[0, 0, 0, 4, 0b0101_0000]),
        (json!("0101"), false)
    );
    // A type not known here: printable bytes as text, others in hex; never a placeholder.
    assert_eq!(
        rendered(&Ty::Oid(99_999), b"happy"),
        (json!("happy"), false)
    );
    assert_eq!(
        rendered(&Ty::Oid(99_999), &[0, 1]),
        (json!("\\x0001"), false)
    );
}

#[test]
fn text_values_become_json_by_type() {
    let t = |ty: u32, s: &str| from_text(&Ty::Oid(ty), s.as_bytes(), 1000).0;
    assert_eq!(t(oid::BOOL, "t"), json!(true));
    assert_eq!(t(oid::INT8, "-9223372036854775808"), json!(i64::MIN));
    assert_eq!(t(oid::OID, "4294967295"), json!(4_294_967_295u32));
    assert_eq!(t(oid::FLOAT8, "1e+300"), json!(1e300));
    assert_eq!(t(oid::FLOAT4, "Infinity"), json!("Infinity"));
    assert_eq!(t(oid::NUMERIC, "0.000"), json!("0.000"));
    assert_eq!(t(oid::JSON, "{\"a\" : [1]}"), json!({"a": [1]}));
    assert_eq!(t(oid::BYTEA, "\\x00ff"), json!("\\x00ff"));
    assert_eq!(t(oid::BYTEA, "a\\000"), json!("\\x6100"));
    assert_eq!(t(oid::TIMESTAMPTZ, "infinity"), json!("infinity"));
    assert_eq!(
        from_text(&Ty::Oid(oid::TEXT), &[0xff], 1000),
        (json!("\\xff"), false)
    );
}

#[test]
fn long_values_are_cut_without_rendering_them_whole() {
    let long = "x".repeat(10_000);
    assert_eq!(
        from_text(&Ty::Oid(oid::TEXT), long.as_bytes(), 5),
        (json!("xxxxx"), true)
    );
    assert_eq!(
        from_binary(&Ty::Oid(oid::BYTEA), &[0xab; 10_000], 6),
        (json!("\\xabab"), true)
    );
    let values: Vec<Option<&[u8]>> = vec![Some(long.as_bytes()); 3];
    let b = array_bytes(oid::TEXT, &[(3, 1)], &values);
    let (v, cut) = from_binary(&Ty::Oid(1009), &b, 100);
    assert!(cut);
    assert_eq!(v.as_str().unwrap().len(), 100);
}

#[test]
fn unknown_types_inside_records_are_read_by_their_shape() {
    // ROW(1, '{happy,"with space"}'::mood[]): the array names an element type not known here.
    let labels = array_bytes(77_777, &[(2, 1)], &[Some(b"happy"), Some(b"with space")]);
    let mut b = 2i32.to_be_bytes().to_vec();
    b.extend(oid::INT4.to_be_bytes());
    b.extend(4i32.to_be_bytes());
    b.extend(1i32.to_be_bytes());
    b.extend(77_778u32.to_be_bytes());
    b.extend(i32::try_from(labels.len()).unwrap().to_be_bytes());
    b.extend(&labels);
    assert_eq!(
        rendered(&Ty::Oid(oid::RECORD), &b),
        (json!(r#"(1,"{happy,""with space""}")"#), false)
    );
    // Four bytes of an unknown type are not taken for a record or an array.
    assert_eq!(
        rendered(&Ty::Oid(77_779), &[0, 0, 0, 0]),
        (json!("\\x00000000"), false)
    );
}
