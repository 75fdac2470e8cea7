//! The catalog of real databases: Chinook on SQLite, PostgreSQL and MariaDB.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use steward_sql::{Catalog, Database, TableKind};

fn check_chinook(catalog: &Catalog, album: &str, artist_id: &str, title: &str) {
    assert_eq!(
        catalog.tables.len(),
        11,
        "{:?}",
        catalog.names().collect::<Vec<_>>()
    );
    let table = catalog.table(album).unwrap();
    assert_eq!(table.kind, TableKind::Table);
    assert_eq!(table.columns.len(), 3);
    assert_eq!(table.primary_key.len(), 1);
    let fk = &table.foreign_keys[0];
    assert_eq!(fk.columns, [artist_id]);
    assert!(fk.table.eq_ignore_ascii_case("artist"), "{fk:?}");
    assert_eq!(table.rows, Some(347), "{album}");
    let samples = &table.column(title).unwrap().samples;
    assert_eq!(samples.len(), 5, "{samples:?}");
    assert!(
        samples.iter().all(|s| s.chars().count() <= 30),
        "{samples:?}"
    );
    let t = catalog.table("Track").unwrap();
    assert_eq!(t.foreign_keys.len(), 3);
}

async fn sanity(db: Database, album: &str, artist_id: &str, title: &str) {
    let catalog = db.catalog().await.unwrap();
    let rows_ok = catalog.table(album).unwrap().rows;
    eprintln!("{album} rows: {rows_ok:?}");
    check_chinook(&catalog, album, artist_id, title);
}

#[tokio::test]
async fn chinook_on_sqlite() {
    let Some(db) = common::chinook_sqlite().await else {
        return;
    };
    sanity(db, "Album", "ArtistId", "Title").await;
}

#[tokio::test]
async fn chinook_on_postgres() {
    let Some(db) = common::chinook_postgres().await else {
        return;
    };
    db.execute_script("ANALYZE").await.unwrap();
    sanity(db, "album", "artist_id", "title").await;
}

#[tokio::test]
async fn chinook_on_mariadb() {
    let Some(db) = common::chinook_mariadb().await else {
        return;
    };
    db.execute_script("ANALYZE TABLE Album").await.unwrap();
    sanity(db, "Album", "ArtistId", "Title").await;
}
