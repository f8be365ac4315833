//! Where the pool's forks spend their time, for diagnosis
//! ([`Pool::set_trace`](super::Pool::set_trace)): per slot (a layer, say),
//! the caller's share, how late a worker starts, the worker's share, and
//! how long the caller takes to see the worker finish; or, with
//! [`TraceMode::Serial`], the same parts run one after the other on the
//! calling thread, the baseline a second core is measured against. Off by
//! default: an untraced fork reads one flag.

use std::sync::atomic::{AtomicU8, AtomicU64, AtomicUsize, Ordering};
use std::time::Instant;
use std::vec::Vec;

/// What [`Pool::set_trace`](super::Pool::set_trace) records.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraceMode {
    /// Nothing (the default).
    Off,
    /// Calls split as usual; each fork's times are added to the current
    /// slot.
    Threads,
    /// Every part of a call runs on the calling thread, one after the
    /// other, each timed: part 0 as the caller's share, the others as
    /// the worker's.
    Serial,
}

/// Sums over the traced forks of one slot, in nanoseconds
/// ([`Pool::trace`](super::Pool::trace)). Divide `caller_part` by
/// `forks` and the `worker_*` and `join_seen` sums by `worker_forks`
/// for means.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ForkTimes {
    /// Forks traced in this slot.
    pub forks: u64,
    /// Of those, forks in which a worker ran a part ([`TraceMode::Serial`]:
    /// calls of two or more parts).
    pub worker_forks: u64,
    /// From the publication of the job to the end of the caller's last
    /// part (serial: part 0).
    pub caller_part: u64,
    /// From the publication to a worker's start of its part (serial: 0).
    pub worker_start: u64,
    /// A worker's part (serial: the parts after part 0).
    pub worker_part: u64,
    /// From the end of the worker's part to the caller seeing the join
    /// (serial: 0).
    pub join_seen: u64,
}

/// Slots a trace holds; a later slot adds to the last.
pub const SLOTS: usize = 64;

const FIELDS: usize = 6;

pub(super) struct Trace {
    mode: AtomicU8,
    slot: AtomicUsize,
    sums: [[AtomicU64; FIELDS]; SLOTS],
}

impl Trace {
    pub(super) fn new() -> Trace {
        Trace {
            mode: AtomicU8::new(0),
            slot: AtomicUsize::new(0),
            sums: [const { [const { AtomicU64::new(0) }; FIELDS] }; SLOTS],
        }
    }

    pub(super) fn mode(&self) -> TraceMode {
        match self.mode.load(Ordering::Relaxed) {
            1 => TraceMode::Threads,
            2 => TraceMode::Serial,
            _ => TraceMode::Off,
        }
    }

    /// Sets the mode and clears every slot.
    pub(super) fn set(&self, mode: TraceMode) {
        for s in self.sums.iter().flatten() {
            s.store(0, Ordering::Relaxed);
        }
        self.slot.store(0, Ordering::Relaxed);
        let m = match mode {
            TraceMode::Off => 0,
            TraceMode::Threads => 1,
            TraceMode::Serial => 2,
        };
        self.mode.store(m, Ordering::Relaxed);
    }

    pub(super) fn select(&self, slot: usize) {
        self.slot.store(slot.min(SLOTS - 1), Ordering::Relaxed);
    }

    /// Adds one fork: `worker` is `(start, part, join seen)` if a worker
    /// ran a part.
    pub(super) fn add(&self, caller_part: u64, worker: Option<(u64, u64, u64)>) {
        let s = &self.sums[self.slot.load(Ordering::Relaxed)];
        s[0].fetch_add(1, Ordering::Relaxed);
        s[2].fetch_add(caller_part, Ordering::Relaxed);
        if let Some((start, part, seen)) = worker {
            s[1].fetch_add(1, Ordering::Relaxed);
            s[3].fetch_add(start, Ordering::Relaxed);
            s[4].fetch_add(part, Ordering::Relaxed);
            s[5].fetch_add(seen, Ordering::Relaxed);
        }
    }

    pub(super) fn read(&self) -> Vec<ForkTimes> {
        self.sums
            .iter()
            .map(|s| {
                let v = |i: usize| s[i].load(Ordering::Relaxed);
                ForkTimes {
                    forks: v(0),
                    worker_forks: v(1),
                    caller_part: v(2),
                    worker_start: v(3),
                    worker_part: v(4),
                    join_seen: v(5),
                }
            })
            .collect()
    }
}

/// Nanoseconds from `epoch` to now, at least 1 (0 marks "not yet").
pub(super) fn since(epoch: Instant) -> u64 {
    u64::try_from(epoch.elapsed().as_nanos())
        .unwrap_or(u64::MAX)
        .max(1)
}
