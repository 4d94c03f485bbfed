//! What a bench run left in the database, per row: the bytes of each table
//! (heap and TOAST) and of each of its indexes, for the capacity model of
//! docs/SCALING.md.

use sqlx::PgPool;

/// The tables of the write path measured.
const TABLES: [&str; 4] = ["chunks", "source_versions", "documents", "outbox"];

/// One table's rows and sizes.
#[derive(Debug)]
pub struct TableSize {
    table: String,
    rows: i64,
    /// Heap + TOAST + free space map + visibility map.
    table_bytes: i64,
    /// (index name, bytes).
    indexes: Vec<(String, i64)>,
}

/// Sizes of the write path's tables.
#[derive(Debug)]
pub struct Storage(Vec<TableSize>);

impl Storage {
    /// Counts rows and reads relation sizes (after a CHECKPOINT-free read:
    /// sizes are what the files hold now).
    pub async fn measure(pool: &PgPool) -> Result<Self, sqlx::Error> {
        let mut out = Vec::new();
        for table in TABLES {
            let rows: i64 = sqlx::query_scalar(&format!("SELECT count(*) FROM {table}"))
                .fetch_one(pool)
                .await?;
            let table_bytes: i64 = sqlx::query_scalar("SELECT pg_table_size($1::regclass)")
                .bind(table)
                .fetch_one(pool)
                .await?;
            let indexes: Vec<(String, i64)> = sqlx::query_as(
                "SELECT c.relname::text, pg_relation_size(c.oid) \
                 FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid \
                 WHERE i.indrelid = $1::regclass ORDER BY c.relname",
            )
            .bind(table)
            .fetch_all(pool)
            .await?;
            out.push(TableSize {
                table: table.into(),
                rows,
                table_bytes,
                indexes,
            });
        }
        Ok(Self(out))
    }

    /// Prints bytes per row for each table and index.
    pub fn print(&self) {
        for t in &self.0 {
            let per = |b: i64| b as f64 / t.rows.max(1) as f64;
            let index_total: i64 = t.indexes.iter().map(|(_, b)| b).sum();
            println!(
                "storage {:<16} {:>8} rows  table {:>7.0} B/row  indexes {:>6.0} B/row",
                t.table,
                t.rows,
                per(t.table_bytes),
                per(index_total)
            );
            for (name, bytes) in &t.indexes {
                println!("        {name:<40} {:>6.0} B/row", per(*bytes));
            }
        }
    }
}
