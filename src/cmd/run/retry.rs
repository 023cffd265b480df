//! When `run` tries again: after a retryable failure, while retries are
//! left, the producer's `retry_after_ms` plus full jitter over exponential
//! backoff, capped by `--max-wait`; never exactly `retry_after_ms` (spec
//! §9.3: a minimum with jitter applied; docs/contract.md §1.3, §3.3).

use std::time::Duration;

use crate::config::RunOptions;

/// Whether to run again after attempt `attempt` failed retryably, and
/// when (see `retry_wait`); else why not, when there is a reason to say.
pub fn plan(
    opts: &RunOptions,
    attempt: u32,
    retry_after_ms: Option<u64>,
    rng: &mut Jitter,
) -> Result<Duration, Option<&'static str>> {
    if attempt > opts.retries {
        return Err((opts.retries > 0).then_some("no retries left"));
    }
    let max = opts.max_wait;
    if let Some(ms) = retry_after_ms
        && Duration::from_millis(ms) > max
    {
        return Err(Some(
            "not retried: the producer asks for a longer wait than --max-wait",
        ));
    }
    let doubling = 2u32.saturating_pow(attempt - 1);
    let backoff = opts.backoff.saturating_mul(doubling);
    let floor = Duration::from_millis(retry_after_ms.unwrap_or(0));
    Ok(retry_wait(floor, backoff, max, rng))
}

/// The wait before a retry: the producer's `retry_after_ms` (`floor`)
/// plus full jitter, a random 1 ms to `backoff` above it, all of it
/// capped by `--max-wait`. Never exactly `floor` while `--max-wait` leaves
/// room: clients told the same `retry_after_ms` must not come back in
/// lockstep (docs/contract.md §1.3, §3.3; spec §9.3). A producer asking for more than
/// `--max-wait` is not retried at all (`plan`).
fn retry_wait(floor: Duration, backoff: Duration, max: Duration, rng: &mut Jitter) -> Duration {
    let ms = |d: Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
    let room = ms(max).saturating_sub(ms(floor));
    // At least a millisecond of spread, even with --backoff 0.
    let spread = ms(backoff).max(1).min(room);
    let jitter = if spread == 0 {
        0
    } else {
        1 + rng.below(spread)
    };
    Duration::from_millis(ms(floor).saturating_add(jitter))
}

/// xorshift64: only spread matters for a retry wait, not secrecy, so no
/// crate is needed for it.
pub struct Jitter(u64);

impl Jitter {
    /// Seeded from the clock and the pid, so two clients started together
    /// still draw apart.
    pub fn seeded() -> Jitter {
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        Jitter::new(t ^ u64::from(std::process::id()).rotate_left(32))
    }

    fn new(seed: u64) -> Jitter {
        // Mixed first (splitmix64), so nearby seeds (pids one apart, the
        // same clock) start far apart; xorshift must not start at 0.
        let mut z = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        Jitter((z ^ (z >> 31)).max(1))
    }

    /// A number in `0..n` (`n` > 0); the modulo bias is immaterial here.
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: fn(u64) -> Duration = Duration::from_millis;

    #[test]
    fn a_wait_is_full_jitter_above_retry_after_never_exactly_it() {
        let mut rng = Jitter::new(42);
        let waits: Vec<Duration> = (0..2000)
            .map(|_| retry_wait(MS(400), MS(1000), MS(60_000), &mut rng))
            .collect();
        for w in &waits {
            assert!(*w > MS(400) && *w <= MS(1400), "{w:?}");
        }
        // Spread over the whole range: clients do not retry in lockstep.
        let distinct: std::collections::HashSet<_> = waits.iter().collect();
        assert!(distinct.len() > 800, "{} distinct waits", distinct.len());
        assert!(waits.iter().any(|w| *w < MS(500)));
        assert!(waits.iter().any(|w| *w > MS(1300)));
    }

    #[test]
    fn a_backoff_smaller_than_retry_after_still_spreads_above_it() {
        // The case that retried in lockstep: the wait was retry_after_ms.
        let mut rng = Jitter::new(7);
        for _ in 0..1000 {
            let w = retry_wait(MS(400), MS(10), MS(60_000), &mut rng);
            assert!(w > MS(400) && w <= MS(410), "{w:?}");
        }
        let w = retry_wait(MS(400), Duration::ZERO, MS(60_000), &mut rng);
        assert_eq!(w, MS(401), "--backoff 0: one millisecond above");
    }

    #[test]
    fn max_wait_caps_the_wait() {
        let mut rng = Jitter::new(3);
        for _ in 0..1000 {
            let w = retry_wait(MS(400), MS(10_000), MS(1000), &mut rng);
            assert!(w > MS(400) && w <= MS(1000), "{w:?}");
            let w = retry_wait(Duration::ZERO, MS(10_000), MS(1000), &mut rng);
            assert!(w > Duration::ZERO && w <= MS(1000), "{w:?}");
        }
        // No room left above the producer's wait: exactly --max-wait.
        assert_eq!(retry_wait(MS(1000), MS(50), MS(1000), &mut rng), MS(1000));
    }

    #[test]
    fn clients_seeded_apart_wait_apart() {
        let wait = |seed| retry_wait(MS(400), MS(1000), MS(60_000), &mut Jitter::new(seed));
        let waits: std::collections::HashSet<_> = (1..=100).map(wait).collect();
        assert!(waits.len() > 80, "{} distinct first waits", waits.len());
    }
}
