//! The persistent worker pool (feature `std`): threads are started once
//! and run the parts of each layer call (SMaLL §4: `p = min(p_avail,
//! p_max)`).
//!
//! Purpose-built rather than `rayon`: a layer of an MLPerf Tiny network
//! takes a few microseconds, so the fork and join must cost well under
//! one. Here a fork is one atomic increment that spinning workers see,
//! and a join one counter the caller spins on (measured by the bench's
//! `fork-join` line; about 0.3 µs on the 2-core Zen 5 VM of 2026-11-23).
//! Workers spin for [`SPIN`] polls (about 2 ms) after a job, so consecutive
//! layers find them awake, then sleep on a condition variable until the
//! next fork.
//!
//! The thread count is `SMALL_THREADS`, else the number of available
//! cores, or [`set_threads`]. Every part of a job writes its own outputs,
//! so results do not depend on the thread count.

use std::format;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock, RwLock};
use std::thread::JoinHandle;
use std::vec::Vec;

/// Polls of a worker waiting for work before it sleeps: about 1.8 ms at
/// the 28 ns a `spin_loop` poll takes on Zen 5. With `1 << 14` (0.46 ms)
/// the workers slept between the layers of a network with several
/// one-part layers in a row, and each wake cost more than the layer:
/// VWW 0.25 ran 0.43x as fast on 2 threads as on one (`small-bench
/// --threads 2`, 2026-11-23), 1.18x with this value.
pub const SPIN: usize = 1 << 16;

/// A job: `parts` calls of `f`, part 0 by the caller, part `k` by worker
/// `k - 1`; `done` counts the workers that have finished with it.
struct Job<'a> {
    f: &'a (dyn Fn(usize) + Sync),
    parts: usize,
    done: AtomicUsize,
}

struct Shared {
    /// Bumped once per job; workers run each generation exactly once.
    generation: AtomicUsize,
    /// The current job, valid until every worker has counted itself done.
    job: AtomicPtr<Job<'static>>,
    shutdown: AtomicBool,
    /// Polls before sleeping (or yielding): [`SPIN`], or a few when there
    /// are more threads than cores and a spinning thread would only take
    /// the core from one with work.
    spin: usize,
    /// Workers asleep (or about to be) on `wake`; a fork with none skips
    /// the mutex and the notification.
    sleepers: AtomicUsize,
    sleep: Mutex<()>,
    wake: Condvar,
}

/// A fixed set of worker threads (see the module docs).
pub struct Pool {
    shared: Arc<Shared>,
    workers: Vec<JoinHandle<()>>,
    /// One job at a time: concurrent callers take turns.
    turn: Mutex<()>,
}

impl Pool {
    /// A pool running jobs on `threads` threads (the caller and
    /// `threads - 1` workers).
    pub fn new(threads: usize) -> Pool {
        let shared = Arc::new(Shared {
            generation: AtomicUsize::new(0),
            job: AtomicPtr::new(core::ptr::null_mut()),
            shutdown: AtomicBool::new(false),
            spin: if threads <= std::thread::available_parallelism().map_or(1, |n| n.get()) {
                SPIN
            } else {
                64
            },
            sleepers: AtomicUsize::new(0),
            sleep: Mutex::new(()),
            wake: Condvar::new(),
        });
        let workers = (1..threads.max(1))
            .map(|k| {
                let s = shared.clone();
                std::thread::Builder::new()
                    .name(format!("small-rs-{k}"))
                    .spawn(move || worker(&s, k))
                    .expect("spawning a small-rs worker thread")
            })
            .collect();
        Pool {
            shared,
            workers,
            turn: Mutex::new(()),
        }
    }

    /// Threads a job can use (workers and the caller).
    pub fn threads(&self) -> usize {
        self.workers.len() + 1
    }

    /// Runs `f(0..parts)`, part 0 on the calling thread, and returns when
    /// all have run. `parts` is capped at [`Pool::threads`].
    pub fn run(&self, parts: usize, f: &(dyn Fn(usize) + Sync)) {
        let parts = parts.min(self.threads());
        if parts <= 1 {
            f(0);
            return;
        }
        let _turn = self.turn.lock().unwrap_or_else(|e| e.into_inner());
        let job = Job {
            f,
            parts,
            done: AtomicUsize::new(0),
        };
        // SAFETY of the lifetime erasure: `job` outlives every use, since
        // this function waits below until all workers are done with it.
        let ptr = &job as *const Job<'_> as *mut Job<'static>;
        self.shared.job.store(ptr, Ordering::Release);
        // SeqCst pairs with the worker's `sleepers` increment and check: a
        // worker either sees this generation or is counted here.
        self.shared.generation.fetch_add(1, Ordering::SeqCst);
        if self.shared.sleepers.load(Ordering::SeqCst) > 0 {
            let _g = self.shared.sleep.lock().unwrap_or_else(|e| e.into_inner());
            self.shared.wake.notify_all();
        }
        // The workers use `job` until they are done, so even a panic here
        // must wait for them before unwinding.
        let mine = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(0)));
        let mut polls = 0usize;
        while job.done.load(Ordering::Acquire) < self.workers.len() {
            polls += 1;
            if polls < self.shared.spin {
                core::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
        }
        self.shared
            .job
            .store(core::ptr::null_mut(), Ordering::Release);
        if let Err(panic) = mine {
            std::panic::resume_unwind(panic);
        }
    }
}

fn worker(s: &Shared, k: usize) {
    let mut seen = 0usize;
    loop {
        // Wait for the next generation: spin, then sleep.
        let mut polls = 0usize;
        let g = loop {
            let g = s.generation.load(Ordering::Acquire);
            if g != seen || s.shutdown.load(Ordering::Acquire) {
                break g;
            }
            polls += 1;
            if polls < s.spin {
                core::hint::spin_loop();
            } else {
                let guard = s.sleep.lock().unwrap_or_else(|e| e.into_inner());
                s.sleepers.fetch_add(1, Ordering::SeqCst);
                if s.generation.load(Ordering::SeqCst) == seen && !s.shutdown.load(Ordering::SeqCst)
                {
                    drop(s.wake.wait(guard));
                } else {
                    drop(guard);
                }
                s.sleepers.fetch_sub(1, Ordering::SeqCst);
                polls = 0;
            }
        };
        if s.shutdown.load(Ordering::Acquire) {
            return;
        }
        seen = g;
        // SAFETY: the caller published the job before bumping the
        // generation and keeps it alive until this worker counts itself
        // done; no new job is published before that.
        let job = unsafe { &*s.job.load(Ordering::Acquire) };
        if k < job.parts {
            // A panicking part must still count itself done (the caller
            // waits for it); the kernels themselves never panic.
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| (job.f)(k)));
        }
        job.done.fetch_add(1, Ordering::AcqRel);
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        self.shared.shutdown.store(true, Ordering::Release);
        {
            let _g = self.shared.sleep.lock().unwrap_or_else(|e| e.into_inner());
            self.shared.wake.notify_all();
        }
        for w in self.workers.drain(..) {
            let _ = w.join();
        }
    }
}

static POOL: OnceLock<RwLock<Arc<Pool>>> = OnceLock::new();

fn default_threads() -> usize {
    std::env::var("SMALL_THREADS")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|&n| n >= 1)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// The process-wide pool, started on first use.
pub fn pool() -> Arc<Pool> {
    let lock = POOL.get_or_init(|| RwLock::new(Arc::new(Pool::new(default_threads()))));
    lock.read().unwrap_or_else(|e| e.into_inner()).clone()
}

/// Sets the number of threads layers may use (1 = single-threaded). The
/// old pool's threads end once no call uses them.
pub fn set_threads(threads: usize) {
    let new = Arc::new(Pool::new(threads.max(1)));
    match POOL.get() {
        Some(lock) => *lock.write().unwrap_or_else(|e| e.into_inner()) = new,
        None => {
            let _ = POOL.set(RwLock::new(new));
        }
    }
}

/// Threads layers may use now.
pub fn threads() -> usize {
    pool().threads()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_part_runs_once_for_any_thread_count() {
        for threads in [1, 2, 3, 8] {
            let pool = Pool::new(threads);
            for parts in 1..=10 {
                let hits: Vec<AtomicUsize> = (0..parts).map(|_| AtomicUsize::new(0)).collect();
                pool.run(parts, &|k| {
                    hits[k].fetch_add(1, Ordering::Relaxed);
                });
                let ran = parts.min(threads);
                for (k, h) in hits.iter().enumerate() {
                    assert_eq!(
                        h.load(Ordering::Relaxed),
                        usize::from(k < ran),
                        "{threads} {parts} {k}"
                    );
                }
            }
        }
    }

    #[test]
    fn oversubscribed_every_part_runs_once() {
        // More threads than cores: workers are often off their core, and
        // each job still runs every part exactly once.
        let pool = Pool::new(8);
        for round in 0..2000 {
            let parts = 1 + round % 8;
            let hits: Vec<AtomicUsize> = (0..parts).map(|_| AtomicUsize::new(0)).collect();
            pool.run(parts, &|k| {
                hits[k].fetch_add(1, Ordering::Relaxed);
            });
            assert!(
                hits.iter().all(|h| h.load(Ordering::Relaxed) == 1),
                "round {round}"
            );
        }
    }

    #[test]
    fn sleeping_workers_wake_for_the_next_job() {
        let pool = Pool::new(2);
        let sum = AtomicUsize::new(0);
        for _ in 0..20 {
            // Long enough for the worker to stop spinning and sleep.
            std::thread::sleep(std::time::Duration::from_millis(3));
            pool.run(2, &|k| {
                sum.fetch_add(k + 1, Ordering::Relaxed);
            });
        }
        assert_eq!(sum.load(Ordering::Relaxed), 60);
    }

    #[test]
    fn many_jobs_in_a_row_and_clean_shutdown() {
        let pool = Pool::new(3);
        let sum = AtomicUsize::new(0);
        for _ in 0..10_000 {
            pool.run(3, &|k| {
                sum.fetch_add(k + 1, Ordering::Relaxed);
            });
        }
        assert_eq!(sum.load(Ordering::Relaxed), 60_000);
        drop(pool); // joins its workers; a hang here fails the test run
    }
}
