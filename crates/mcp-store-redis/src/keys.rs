//! Secrets the instances of a deployment share: the keys that seal `requestState` and
//! pagination cursors, so that a client's next round or next page may reach any instance.
//! Made once by whichever instance asks first (`SET NX`), read by the others.

use std::time::Duration;

use mcp_server::shared::StoreError;

use crate::{millis, RedisStore};

/// How long a shared secret is kept after an instance last asked for it: every instance asks
/// when it starts, so a deployment that runs keeps its secrets, and one gone that long
/// leaves nothing behind.
const SECRET_LIFETIME: Duration = Duration::from_secs(90 * 24 * 3600);

impl RedisStore {
    /// The deployment's secret named `name` (`PREFIX:secret:NAME`): 32 random bytes made by the
    /// first instance that asks, the same for every instance after.
    pub async fn shared_secret(&self, name: &str) -> Result<[u8; 32], StoreError> {
        let key = self.key("secret", name);
        let fresh: [u8; 32] = rand::random();
        let mut c = self.commands();
        let (kept,): (Option<Vec<u8>>,) = redis::pipe()
            .atomic()
            .cmd("SET")
            .arg(&key)
            .arg(&fresh[..])
            .arg("NX")
            .ignore()
            .cmd("PEXPIRE")
            .arg(&key)
            .arg(millis(SECRET_LIFETIME))
            .ignore()
            .cmd("GET")
            .arg(&key)
            .query_async(&mut c)
            .await
            .map_err(|e| StoreError::unavailable("shared secret", e))?;
        let kept = kept.ok_or_else(|| StoreError::corrupt("shared secret", "the secret vanished as it was made"))?;
        kept.try_into().map_err(|_| StoreError::corrupt("shared secret", "a shared secret is not 32 bytes"))
    }
}
