//! Secrets the instances of a deployment share: the keys that seal `requestState` and
//! pagination cursors, so that a client's next round or next page may reach any instance.
//! Made once by whichever instance asks first (`SET NX`), read by the others: one fixed
//! secret ([`RedisStore::shared_secret`]), or a ring of keys rotated with overlap
//! ([`RedisStore::key_ring`]).

use std::sync::Arc;
use std::time::Duration;

use mcpwire_protocol::engine::key_ring::{KeyId, KeyRing};
use mcpwire_server::shared::StoreError;

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

/// How many periods a rotated key is kept in the store after it is made. It is made one
/// period ahead at the earliest (the ring holds the next epoch's key), seals during its own
/// period and opens during the next: three periods; one more for instances whose clocks
/// differ, or that refresh late.
const KEPT_PERIODS: u32 = 4;

/// The shortest rotation period: an epoch is a whole number of seconds.
const MIN_PERIOD: Duration = Duration::from_secs(1);

/// The bounds of the time between two refreshes of a rotated ring (an eighth of the period):
/// often enough that an instance seals with the new epoch's key soon after it begins, rarely
/// enough not to matter to Redis.
const MIN_REFRESH: Duration = Duration::from_secs(1);
const MAX_REFRESH: Duration = Duration::from_secs(3600);

/// Keeps a [`KeyRing`] in step with the keys the instances of a deployment share in the
/// store, rotated every period (see [`RedisStore::key_ring`]). Refreshes it in the background
/// until dropped.
pub struct RingKeeper {
    rotation: Arc<Rotation>,
    refresher: tokio::task::AbortHandle,
}

struct Rotation {
    store: RedisStore,
    name: String,
    period: Duration,
    ring: KeyRing,
}

impl std::fmt::Debug for RingKeeper {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let r = &self.rotation;
        f.debug_struct("RingKeeper").field("name", &r.name).field("period", &r.period).field("ring", &r.ring).finish()
    }
}

impl Drop for RingKeeper {
    fn drop(&mut self) {
        self.refresher.abort();
    }
}

impl RedisStore {
    /// A ring of keys shared by every instance of the deployment under `name`, rotated every
    /// `period` (at least a second), and what keeps it rotated: drop the [`RingKeeper`] and
    /// the ring stays as it is.
    ///
    /// Time is cut into epochs of `period` (epoch E: `E * period <= unix time < (E + 1) *
    /// period`). The key of epoch E is `PREFIX:secret:NAME:E`, 32 random bytes made by the
    /// first instance that asks (`SET NX`) and kept for four periods; its id in the ring is E
    /// (its low 32 bits). The ring holds the keys of E - 1 (what was sealed just before the
    /// epoch began still opens), E (current: it seals) and E + 1 (made ahead, so that an
    /// instance whose clock is a little ahead seals with a key the others hold). Every eighth
    /// of the period (at most an hour) the ring is refreshed ([`RingKeeper::refresh`]); if the
    /// store cannot be reached then, the keys held are kept and the failure logged.
    ///
    /// So a sealed value opens on every instance for at least one whole period after it was
    /// sealed, and at most about three. Every instance must give the same `period`.
    pub async fn key_ring(&self, name: &str, period: Duration) -> Result<(KeyRing, RingKeeper), StoreError> {
        let period = period.max(MIN_PERIOD);
        let epoch = epoch_at(std::time::SystemTime::now(), period);
        let rotation = Rotation { store: self.clone(), name: name.to_owned(), period, ring: KeyRing::random() };
        let keys = rotation.fetch(epoch).await?;
        let (_, current) = keys
            .iter()
            .find(|(e, _)| *e == epoch)
            .copied()
            .ok_or_else(|| StoreError::corrupt("shared secret", "the current epoch's key is missing"))?;
        let ring = KeyRing::new(RingKeeper::key_id(epoch), current);
        for (e, key) in keys {
            ring.insert(RingKeeper::key_id(e), key);
        }
        let rotation = Arc::new(Rotation { ring: ring.clone(), ..rotation });
        let every = (period / 8).clamp(MIN_REFRESH, MAX_REFRESH);
        let refresher = tokio::spawn({
            let rotation = rotation.clone();
            async move {
                let mut ticks = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
                ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
                loop {
                    ticks.tick().await;
                    let epoch = epoch_at(std::time::SystemTime::now(), rotation.period);
                    if let Err(e) = rotation.refresh(epoch).await {
                        tracing::warn!(
                            name = %rotation.name,
                            "cannot refresh the sealing keys from the store; the keys held are kept: {e}"
                        );
                    }
                }
            }
        })
        .abort_handle();
        Ok((ring, RingKeeper { rotation, refresher }))
    }
}

impl RingKeeper {
    /// The id in the ring of the key of `epoch`.
    pub fn key_id(epoch: u64) -> KeyId {
        // Truncated: ids name the three epochs held, which the low bits tell apart.
        epoch as KeyId
    }

    /// The ring kept.
    pub fn ring(&self) -> &KeyRing {
        &self.rotation.ring
    }

    /// The rotation period.
    pub fn period(&self) -> Duration {
        self.rotation.period
    }

    /// The epoch now, by this machine's clock.
    pub fn epoch_now(&self) -> u64 {
        epoch_at(std::time::SystemTime::now(), self.rotation.period)
    }

    /// Brings the ring to `epoch` (what the background refresh does with the epoch of the
    /// clock; a test gives any): the keys of `epoch - 1`, `epoch` and `epoch + 1` are read
    /// from the store (made there if no instance made them yet) and held, `epoch`'s made
    /// current, and every other key dropped. On an error the ring is left as it was.
    pub async fn refresh(&self, epoch: u64) -> Result<(), StoreError> {
        self.rotation.refresh(epoch).await
    }
}

impl Rotation {
    /// The epochs a ring at `epoch` holds.
    fn epochs(epoch: u64) -> Vec<u64> {
        let mut epochs: Vec<u64> =
            [epoch.checked_sub(1), Some(epoch), epoch.checked_add(1)].into_iter().flatten().collect();
        epochs.dedup();
        epochs
    }

    /// The keys of the epochs around `epoch`, made by this instance where none is yet.
    async fn fetch(&self, epoch: u64) -> Result<Vec<(u64, [u8; 32])>, StoreError> {
        let epochs = Self::epochs(epoch);
        let ttl = self.period.saturating_mul(KEPT_PERIODS);
        let mut pipe = redis::pipe();
        // One transaction: each GET sees the key its SET made, or the one made before.
        pipe.atomic();
        for e in &epochs {
            let fresh: [u8; 32] = rand::random();
            let key = self.store.key("secret", &format!("{}:{e}", self.name));
            // The lifetime is set once, when the key is made: it ends a few periods after its
            // epoch, whoever reads it meanwhile.
            pipe.cmd("SET").arg(&key).arg(&fresh[..]).arg("NX").arg("PX").arg(millis(ttl)).ignore();
            pipe.cmd("GET").arg(&key);
        }
        let kept: Vec<Option<Vec<u8>>> = self.store.run_all("shared secret", &pipe).await?;
        if kept.len() != epochs.len() {
            return Err(StoreError::corrupt("shared secret", "the store answered for other keys than asked"));
        }
        epochs
            .into_iter()
            .zip(kept)
            .map(|(e, key)| {
                let key = key.ok_or_else(|| StoreError::corrupt("shared secret", "a key vanished as it was made"))?;
                let key: [u8; 32] = key
                    .try_into()
                    .map_err(|_| StoreError::corrupt("shared secret", "a shared secret is not 32 bytes"))?;
                Ok((e, key))
            })
            .collect()
    }

    async fn refresh(&self, epoch: u64) -> Result<(), StoreError> {
        let keys = self.fetch(epoch).await?;
        let held: Vec<KeyId> = keys.iter().map(|(e, _)| RingKeeper::key_id(*e)).collect();
        for (e, key) in keys {
            self.ring.insert(RingKeeper::key_id(e), key);
        }
        self.ring.set_current(RingKeeper::key_id(epoch));
        self.ring.retain(|id| held.contains(&id));
        Ok(())
    }
}

/// The epoch of `period` that `time` falls in (0 for a time before 1970).
fn epoch_at(time: std::time::SystemTime, period: Duration) -> u64 {
    let since = time.duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    since.as_secs() / period.as_secs().max(1)
}
