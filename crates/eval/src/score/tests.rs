//! Hand-made cases for each semantics: row order, duplicates, column permutations, NULLs, integers against
//! floats and decimals, empty results. (Gold alternatives are tried by the caller: see
//! `tests/scoring.rs`.)

use serde_json::{Value, json};

use super::{Rows, Semantics, answer_matches, matches};

const SPIDER: Semantics = Semantics::Spider;
const BIRD: Semantics = Semantics::Bird;
const DEFOG: Semantics = Semantics::Defog;
const STEWARD: Semantics = Semantics::Steward;

/// Rows with columns `c0, c1, …` (or the names given) from a JSON array of arrays.
fn rows(value: Value) -> Rows {
    let rows: Vec<Vec<Value>> = value
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| r.as_array().cloned().unwrap_or_default())
        .collect();
    let width = rows.first().map_or(0, Vec::len);
    Rows::new((0..width).map(|i| format!("c{i}")).collect(), rows)
}

fn named(names: &[&str], value: Value) -> Rows {
    let mut r = rows(value);
    r.columns = names.iter().map(|s| (*s).to_owned()).collect();
    r
}

const PLAIN: &str = "SELECT a, b FROM t";
const ORDERED: &str = "SELECT a, b FROM t ORDER BY a";

#[test]
fn row_order() {
    let gold = rows(json!([[1, "x"], [2, "y"]]));
    let swapped = rows(json!([[2, "y"], [1, "x"]]));
    // Spider: free without ORDER BY, compared with it (anywhere in the gold text).
    assert!(matches(SPIDER, &gold, &swapped, PLAIN));
    assert!(!matches(SPIDER, &gold, &swapped, ORDERED));
    assert!(matches(SPIDER, &gold, &gold, ORDERED));
    assert!(!matches(
        SPIDER,
        &gold,
        &swapped,
        "select count(*) from (select a from t order by a)"
    ));
    // BIRD: sets.
    assert!(matches(BIRD, &gold, &swapped, ORDERED));
    // defog: the official sorts rows even for ordered questions.
    assert!(matches(DEFOG, &gold, &swapped, ORDERED));
}

#[test]
fn duplicates() {
    let gold = rows(json!([[1], [1], [2]]));
    let once = rows(json!([[1], [2]]));
    let other_counts = rows(json!([[1], [2], [2]]));
    // Spider: bags, duplicates count.
    assert!(!matches(SPIDER, &gold, &once, PLAIN));
    assert!(!matches(SPIDER, &gold, &other_counts, PLAIN));
    assert!(matches(SPIDER, &gold, &rows(json!([[2], [1], [1]])), PLAIN));
    // BIRD: sets, duplicates don't.
    assert!(matches(BIRD, &gold, &once, PLAIN));
    assert!(matches(BIRD, &gold, &other_counts, PLAIN));
    // defog: normalize_table drops duplicates (compare_df, columns in the order of their names); the
    // column test of subset_df needs equal lengths. So other counts match when the names line the columns
    // up, and not when they don't.
    assert!(matches(DEFOG, &gold, &once, PLAIN));
    let gold = named(&["n", "k"], json!([[1, "a"], [1, "a"], [2, "b"]]));
    assert!(matches(
        DEFOG,
        &gold,
        &named(&["n", "k"], json!([[1, "a"], [2, "b"]])),
        PLAIN
    ));
    assert!(!matches(
        DEFOG,
        &gold,
        &named(&["a", "z"], json!([[1, "a"], [2, "b"]])),
        PLAIN
    ));
}

#[test]
fn column_permutations() {
    let gold = rows(json!([[1, "a", 3.5], [2, "b", 4.5]]));
    let permuted = rows(json!([["a", 3.5, 1], ["b", 4.5, 2]]));
    assert!(matches(SPIDER, &gold, &permuted, PLAIN));
    assert!(matches(
        SPIDER,
        &gold,
        &rows(json!([["b", 4.5, 2], ["a", 3.5, 1]])),
        PLAIN
    ));
    assert!(!matches(
        SPIDER,
        &gold,
        &rows(json!([["b", 4.5, 2], ["a", 3.5, 1]])),
        ORDERED
    ));
    // Column permutation must be one for all rows: values swapped inside one row only is different.
    let mixed = rows(json!([[1, "a"], [2, "b"]]));
    assert!(!matches(
        SPIDER,
        &mixed,
        &rows(json!([[1, "a"], ["b", 2]])),
        PLAIN
    ));
    // Same column multisets, different pairing.
    let pairs = rows(json!([[1, 1], [2, 2]]));
    assert!(!matches(
        SPIDER,
        &pairs,
        &rows(json!([[1, 2], [2, 1]])),
        PLAIN
    ));
    // Identical columns: any permutation works.
    assert!(matches(
        SPIDER,
        &rows(json!([[1, 1, 1, 1, 1]])),
        &rows(json!([[1, 1, 1, 1, 1]])),
        PLAIN
    ));
    // BIRD: tuples, column order matters.
    assert!(!matches(BIRD, &gold, &permuted, PLAIN));
    assert!(matches(BIRD, &gold, &gold, PLAIN));
    // defog: columns are matched by their values.
    assert!(matches(DEFOG, &gold, &permuted, PLAIN));
}

#[test]
fn extra_columns() {
    let gold = named(&["name"], json!([["Ada"], ["Alan"]]));
    let wider = named(&["id", "name", "n"], json!([[1, "Ada", 3], [2, "Alan", 5]]));
    assert!(matches(DEFOG, &gold, &wider, PLAIN));
    assert!(!matches(SPIDER, &gold, &wider, PLAIN));
    assert!(!matches(BIRD, &gold, &wider, PLAIN));
    // Fewer columns than the gold: not a match.
    assert!(!matches(DEFOG, &wider, &gold, PLAIN));
    // Extra rows are not allowed.
    let more = named(&["name"], json!([["Ada"], ["Alan"], ["Grace"]]));
    assert!(!matches(DEFOG, &gold, &more, PLAIN));
    // Each gold column takes its own predicted column: two equal gold columns need two.
    let twice = named(&["a", "b"], json!([["x", "x"]]));
    assert!(!matches(
        DEFOG,
        &twice,
        &named(&["a", "n"], json!([["x", 1]])),
        PLAIN
    ));
    assert!(matches(
        DEFOG,
        &twice,
        &named(&["n", "a", "b"], json!([[1, "x", "x"]])),
        PLAIN
    ));
}

#[test]
fn nulls() {
    let gold = rows(json!([[null, 1], [2, null]]));
    for semantics in [SPIDER, BIRD, DEFOG] {
        assert!(matches(semantics, &gold, &gold, PLAIN), "{semantics}");
        assert!(
            !matches(semantics, &gold, &rows(json!([[0, 1], [2, 0]])), PLAIN),
            "{semantics}: NULL is not 0"
        );
        assert!(
            !matches(semantics, &gold, &rows(json!([["", 1], [2, ""]])), PLAIN),
            "{semantics}: NULL is not ''"
        );
    }
    assert!(matches(
        DEFOG,
        &gold,
        &rows(json!([[2, null], [null, 1]])),
        PLAIN
    ));
}

#[test]
fn integers_floats_and_decimals() {
    let gold = rows(json!([[1, 2.5]]));
    // Text that spells a number is that number for Steward only; an exact decimal (NUMERIC) is a number for
    // everyone, as Python's Decimal.
    assert!(matches(
        STEWARD,
        &gold,
        &rows(json!([["1.00", "2.50"]])),
        PLAIN
    ));
    let decimals = rows(json!([["1.00", "2.50"]])).with_types(vec!["NUMERIC".into(); 2]);
    for semantics in [SPIDER, BIRD, DEFOG, STEWARD] {
        assert!(matches(semantics, &gold, &decimals, PLAIN), "{semantics}");
    }
    for semantics in [SPIDER, BIRD, DEFOG] {
        assert!(
            !matches(semantics, &gold, &rows(json!([["1.00", "2.50"]])), PLAIN),
            "{semantics}"
        );
    }
    for semantics in [SPIDER, BIRD, DEFOG, STEWARD] {
        assert!(
            matches(semantics, &gold, &rows(json!([[1.0, 2.5]])), PLAIN),
            "{semantics}"
        );
        assert!(
            matches(semantics, &gold, &rows(json!([[true, 2.5]])), PLAIN),
            "{semantics}"
        );
        assert!(
            !matches(semantics, &gold, &rows(json!([[1, 2.51]])), PLAIN),
            "{semantics}"
        );
        assert!(
            !matches(semantics, &gold, &rows(json!([["one", 2.5]])), PLAIN),
            "{semantics}"
        );
    }
    // Rounding noise between a float average and an exact decimal: forgiven by Steward only (Python
    // compares a float and a Decimal exactly).
    let avg = rows(json!([[2.3333333333333335]]));
    assert!(matches(
        STEWARD,
        &avg,
        &rows(json!([["2.3333333333333333"]])),
        PLAIN
    ));
    for semantics in [SPIDER, BIRD, DEFOG] {
        assert!(!matches(
            semantics,
            &avg,
            &rows(json!([["2.3333333333333333"]])).with_types(vec!["NUMERIC".into()]),
            PLAIN
        ));
    }
    // defog's subset test takes pandas' tolerance (relative 1e-5); the exact semantics do not.
    let rounded = named(&["x"], json!([[2.33333]]));
    let precise = named(&["y"], json!([[2.333333333]]));
    assert!(matches(DEFOG, &rounded, &precise, PLAIN));
    assert!(!matches(SPIDER, &rounded, &precise, PLAIN));
    assert!(!matches(BIRD, &rounded, &precise, PLAIN));
    // Integers are exact even in defog.
    assert!(!matches(
        DEFOG,
        &named(&["x"], json!([[1_000_001]])),
        &named(&["x"], json!([[1_000_002]])),
        PLAIN
    ));
}

#[test]
fn empty_results() {
    let empty = Rows::new(vec!["a".into()], vec![]);
    let empty_wider = Rows::new(vec!["a".into(), "b".into()], vec![]);
    let one = rows(json!([[1]]));
    // Spider and BIRD: two empty results are equal whatever their columns.
    for semantics in [SPIDER, BIRD] {
        assert!(matches(semantics, &empty, &empty, PLAIN));
        assert!(matches(semantics, &empty, &empty_wider, PLAIN));
        assert!(!matches(semantics, &empty, &one, PLAIN));
        assert!(!matches(semantics, &one, &empty, PLAIN));
    }
    // Steward: an empty gold matches an empty prediction of the same shape only.
    assert!(matches(STEWARD, &empty, &empty, PLAIN));
    assert!(!matches(STEWARD, &empty, &empty_wider, PLAIN));
    assert!(!matches(STEWARD, &empty, &one, PLAIN));
    assert!(!matches(STEWARD, &one, &empty, PLAIN));
    // defog: numpy broadcasting in compare_df's first test — an empty gold result "equals" an empty or a
    // one-row prediction (pandas 2.3, numpy 2.4: compare_df(DataFrame({'a': []}), DataFrame({'a': [7]}))
    // is True).
    assert!(matches(DEFOG, &empty, &empty, PLAIN));
    assert!(matches(DEFOG, &empty, &empty_wider, PLAIN));
    assert!(matches(DEFOG, &empty, &one, PLAIN));
    assert!(!matches(DEFOG, &empty, &rows(json!([[1], [2]])), PLAIN));
    // …and a one-row gold result equals an empty prediction (compare_df(DataFrame({'a': [1]}),
    // DataFrame({'a': []})) is True).
    assert!(matches(DEFOG, &one, &empty, PLAIN));
}

#[test]
fn defog_compare_df_uses_names() {
    // The same values under other names in another order: compare_df's name sort cannot align them, but
    // subset_df matches columns by value.
    let gold = named(&["b", "a"], json!([[1, "x"], [1, "x"], [2, "y"]]));
    let predicted = named(&["a", "b"], json!([["x", 1], ["y", 2]]));
    // compare_df: duplicates dropped, columns sorted by name (a, b) on both sides: equal.
    assert!(matches(DEFOG, &gold, &predicted, PLAIN));
    let renamed = named(&["p", "q"], json!([["x", 1], ["y", 2]]));
    // Names sort differently (gold a:"x", b:1 vs p:"x", q:1 → same order here) — equal again.
    assert!(matches(DEFOG, &gold, &renamed, PLAIN));
    let flipped = named(&["q", "p"], json!([["x", 1], ["y", 2]]));
    // compare_df now aligns gold (a, b) = ("x", 1) with (p, q) = (1, "x"): different; subset_df needs equal
    // row counts (3 against 2): different.
    assert!(!matches(DEFOG, &gold, &flipped, PLAIN));
}

#[test]
fn answers() {
    let one = named(&["total"], json!([["12.50"]]));
    assert!(answer_matches("12.5", &one));
    assert!(answer_matches(" 12.50 ", &one));
    assert!(!answer_matches("12", &one));
    assert!(answer_matches(
        "Ada",
        &named(&["id", "name"], json!([[1, "Ada"]]))
    ));
    assert!(!answer_matches(
        "Ada",
        &named(&["name"], json!([["Ada"], ["Alan"]]))
    ));
}

/// Each official quirk on a hand-made case, with the official verdict found by running the official code
/// (test-suite-sql-eval e97acc5, BIRD mini_dev 4d970a9, defog sql-eval b833324 with pandas 2.3.3, numpy
/// 2.4.6) on the same values.
mod official {
    use super::*;
    use crate::score::{Comparison, MatchContext, compare};

    #[test]
    fn text_three_is_not_the_number_three() {
        // Spider dev question 420 and its kind: a number stored as TEXT against an INTEGER.
        let gold = rows(json!([["3"]]));
        let predicted = rows(json!([[3]]));
        assert!(!matches(SPIDER, &gold, &predicted, PLAIN));
        assert!(!matches(BIRD, &gold, &predicted, PLAIN));
        assert!(!matches(DEFOG, &gold, &predicted, PLAIN));
        assert!(matches(STEWARD, &gold, &predicted, PLAIN));
        // Python: 1 == 1.0, floats exactly.
        assert!(matches(
            SPIDER,
            &rows(json!([[1]])),
            &rows(json!([[1.0]])),
            PLAIN
        ));
        assert!(!matches(
            BIRD,
            &rows(json!([[0.30000000000000004]])),
            &rows(json!([[0.3]])),
            PLAIN
        ));
    }

    #[test]
    fn spider_quick_rejection_sorts_by_python_text() {
        // unorder_row sorts (1, 1.5) to (1.5, 1) ("1<class 'int'>" > "1.5…") and (1.0, 1.5) to (1.0, 1.5):
        // rejected although 1 == 1.0.
        assert!(!matches(
            SPIDER,
            &rows(json!([[1, 1.5]])),
            &rows(json!([[1.0, 1.5]])),
            PLAIN
        ));
        assert!(matches(
            SPIDER,
            &rows(json!([[2, 1.5]])),
            &rows(json!([[2.0, 1.5]])),
            PLAIN
        ));
    }

    fn defog(
        gold: &Rows,
        predicted: &Rows,
        question: &str,
        gold_sql: &str,
        predicted_sql: &str,
    ) -> Comparison {
        let context = MatchContext {
            question,
            category: None,
            gold_text: gold_sql,
            predicted_sql,
        };
        compare(DEFOG, gold, predicted, gold_sql, &context)
    }

    #[test]
    fn defog_orders_rows_of_ordered_questions_as_the_official() {
        let gold = named(&["name", "n"], json!([["a", 1], ["b", 2]]));
        let swapped = named(&["name", "n"], json!([["b", 2], ["a", 1]]));
        let wider_swapped = named(&["id", "name", "n"], json!([[9, "b", 2], [8, "a", 1]]));
        let wider_same = named(&["id", "name", "n"], json!([[8, "a", 1], [9, "b", 2]]));
        let by_n = "SELECT name, n FROM t ORDER BY n";
        // "sort" asks for an order: subset_df keeps the rows as returned.
        let q = "List the names, sort by n";
        assert_eq!(
            defog(
                &gold,
                &wider_swapped,
                q,
                by_n,
                "SELECT id, name, n FROM t ORDER BY n DESC"
            ),
            Comparison::Different
        );
        assert_eq!(
            defog(
                &gold,
                &wider_same,
                q,
                by_n,
                "SELECT id, name, n FROM t ORDER BY n"
            ),
            Comparison::Correct
        );
        // compare_df sorts by the ORDER BY columns, descending unless the text says ASC: both texts without
        // a direction sort the same way.
        assert_eq!(
            defog(
                &gold,
                &swapped,
                q,
                by_n,
                "SELECT name, n FROM t ORDER BY n DESC"
            ),
            Comparison::Same
        );
        // …but ASC on one side only sorts them apart.
        assert_eq!(
            defog(
                &gold,
                &swapped,
                q,
                "SELECT name, n FROM t ORDER BY n ASC",
                "SELECT name, n FROM t ORDER BY n"
            ),
            Comparison::Different
        );
        // An ordered question without ORDER BY in the SQL: no sort at all.
        assert_eq!(
            defog(
                &gold,
                &swapped,
                "List names in order",
                "SELECT name, n FROM t",
                "SELECT name, n FROM t"
            ),
            Comparison::Different
        );
        // "sorted" is not the word "sort": rows are sorted, the order is free.
        assert_eq!(
            defog(
                &gold,
                &wider_swapped,
                "Names sorted by n",
                by_n,
                "SELECT id, name, n FROM t"
            ),
            Comparison::Correct
        );
        // An ORDER BY clause cut by a line break before `;`, `,` or `)` names no column: descending.
        assert_eq!(
            defog(
                &gold,
                &swapped,
                q,
                "SELECT name, n FROM t ORDER BY n\nLIMIT 5",
                "SELECT name, n FROM t ORDER BY n ASC\nLIMIT 5"
            ),
            Comparison::Same
        );
    }

    #[test]
    fn defog_fails_on_duplicate_column_names() {
        let gold = named(&["a", "a"], json!([[1, 2], [3, 4]]));
        // Equal as given: compare_df's first test passes before normalising.
        assert_eq!(
            defog(
                &gold,
                &named(&["a", "a"], json!([[1, 2], [3, 4]])),
                "q",
                PLAIN,
                PLAIN
            ),
            Comparison::Same
        );
        // Otherwise pandas raises: the question is wrong.
        assert!(matches!(
            defog(
                &gold,
                &named(&["a", "a"], json!([[3, 4], [1, 2]])),
                "q",
                PLAIN,
                PLAIN
            ),
            Comparison::Fails(_)
        ));
        let unique = named(&["a", "b"], json!([[1, 2], [3, 4]]));
        assert!(matches!(
            defog(
                &unique,
                &named(&["x", "x"], json!([[3, 4], [1, 2]])),
                "q",
                PLAIN,
                PLAIN
            ),
            Comparison::Fails(_)
        ));
        // Steward's own rule compares them as any columns.
        assert!(matches(
            STEWARD,
            &gold,
            &named(&["a", "a"], json!([[3, 4], [1, 2]])),
            PLAIN
        ));
    }

    #[test]
    fn defog_pandas_rules() {
        // One gold row broadcasts over a prediction of equal rows.
        assert!(matches(
            DEFOG,
            &rows(json!([[5]])),
            &rows(json!([[5], [5], [5]])),
            PLAIN
        ));
        // subset_df's tolerance.
        assert!(matches(
            DEFOG,
            &named(&["x"], json!([[2.33333]])),
            &named(&["y"], json!([[2.333333333]])),
            PLAIN
        ));
        // A column of text and numbers cannot be sorted: the official raises.
        assert!(matches!(
            defog(
                &rows(json!([["x"], [1]])),
                &rows(json!([[1], ["x"]])),
                "q",
                PLAIN,
                PLAIN
            ),
            Comparison::Fails(_)
        ));
    }
}
