//! Applied migrations whose files were reworded (comments only) still
//! migrate on: a database that recorded the old text's checksum gets the new
//! one, and any other change to an applied migration is still refused.

use sqlx::PgPool;
use tests::{create_database, drop_database, random_suffix, PG_SERVER};
use worker::store::migrations::{accept_reworded, run};
use worker::store::MIGRATOR;

type R = anyhow::Result<()>;

async fn checksum(pool: &PgPool, version: i64) -> anyhow::Result<Vec<u8>> {
    Ok(
        sqlx::query_scalar("SELECT checksum FROM _sqlx_migrations WHERE version = $1")
            .bind(version)
            .fetch_one(pool)
            .await?,
    )
}

async fn set_checksum(pool: &PgPool, version: i64, bytes: &[u8]) -> R {
    sqlx::query("UPDATE _sqlx_migrations SET checksum = $1 WHERE version = $2")
        .bind(bytes)
        .bind(version)
        .execute(pool)
        .await?;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_database_migrated_before_the_comments_were_reworded_migrates_on() -> R {
    let name = format!("cw_mig_{}", random_suffix());
    create_database(&name).await?;
    let pool = PgPool::connect(&format!("{PG_SERVER}/{name}")).await?;
    let outcome = async {
        // Before any migration: nothing to accept.
        assert_eq!(accept_reworded(&pool).await?, 0);
        run(&pool).await?;
        let new = checksum(&pool, 2).await?;
        let compiled = MIGRATOR.iter().find(|m| m.version == 2).map(|m| m.checksum.to_vec());
        assert_eq!(Some(new.clone()), compiled);
        // The checksum an older release recorded for 0002 (its text before
        // the rewording): the SHA-384 of the old file.
        let old = (0..48)
            .map(|i| {
                u8::from_str_radix(
                    &"65af46cd0d4022980937c176dd44d278259c82e221b50c93cccb84dc4f0b6e683d75a39f3818bb37fb3ed18295655e48"[2 * i..2 * i + 2],
                    16,
                )
            })
            .collect::<Result<Vec<u8>, _>>()?;
        set_checksum(&pool, 2, &old).await?;
        run(&pool).await?;
        assert_eq!(checksum(&pool, 2).await?, new, "the old checksum was replaced");
        // Anything else is still a modified migration.
        set_checksum(&pool, 2, &[0u8; 48]).await?;
        let err = run(&pool).await.err().map(|e| e.to_string()).unwrap_or_default();
        assert!(
            err.contains("migration 2 was previously applied but has been modified"),
            "{err}"
        );
        anyhow::Ok(())
    }
    .await;
    pool.close().await;
    drop_database(&name).await;
    outcome
}
