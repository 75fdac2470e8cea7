//! Binding [`Param`]s, each engine in its own way (exact decimals as text on SQLite, which has no decimal
//! type).

use crate::query::Param;

macro_rules! bind_all {
    ($query:expr, $params:expr) => {{
        let mut q = $query;
        for p in $params {
            q = $crate::execute::bind::Bind::bind_param(q, p);
        }
        q
    }};
}
pub(crate) use bind_all;

/// A query that takes a [`Param`] in each engine's own way.
pub(crate) trait Bind: Sized {
    /// The query with `param` bound to its next placeholder.
    fn bind_param(self, param: &Param) -> Self;
}

macro_rules! bind_common {
    ($q:expr, $p:expr, $decimal:expr) => {
        match $p {
            Param::Int(v) => $q.bind(*v),
            Param::Float(v) => $q.bind(*v),
            Param::Decimal(v) => $decimal($q, v),
            Param::Text(v) => $q.bind(v.clone()),
            Param::Bool(v) => $q.bind(*v),
            Param::Date(v) => $q.bind(*v),
            Param::Timestamp(v) => $q.bind(*v),
            Param::Null => $q.bind(None::<String>),
            Param::NullInt => $q.bind(None::<i64>),
            Param::NullDate => $q.bind(None::<chrono::NaiveDate>),
            Param::NullFloat => $q.bind(None::<f64>),
            Param::NullBool => $q.bind(None::<bool>),
        }
    };
}

type Query<'q, DB> = sqlx::query::Query<'q, DB, <DB as sqlx::Database>::Arguments>;

impl Bind for Query<'_, sqlx::Sqlite> {
    fn bind_param(self, param: &Param) -> Self {
        bind_common!(self, param, |q: Self, v: &bigdecimal::BigDecimal| q
            .bind(v.to_string()))
    }
}

impl Bind for Query<'_, sqlx::Postgres> {
    fn bind_param(self, param: &Param) -> Self {
        bind_common!(self, param, |q: Self, v: &bigdecimal::BigDecimal| q
            .bind(v.clone()))
    }
}

impl Bind for Query<'_, sqlx::MySql> {
    fn bind_param(self, param: &Param) -> Self {
        bind_common!(self, param, |q: Self, v: &bigdecimal::BigDecimal| q
            .bind(v.clone()))
    }
}
