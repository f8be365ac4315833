//! The persistent worker pool (feature `std`): threads are started once
//! and run the parts of each layer call (SMaLL §4: `p = min(p_avail,
//! p_max)`).
//!
//! Purpose-built rather than `rayon`: a layer of an MLPerf Tiny network
//! takes a few microseconds, so the fork and join must cost well under
//! one. A fork publishes the job in one atomic word that spinning workers
//! see; parts are *claimed* from that word, the caller first, so a part
//! no worker has started is run by the caller and a worker that is not
//! on a core delays nothing. Workers spin for [`SPIN`] polls (about 2 ms)
//! after a job, so consecutive layers find them awake, then sleep on a
//! condition variable until the next fork.
//!
//! **Under load.** A worker that the OS preempts in the middle of its part
//! still holds the join: the caller waits for it, typically a scheduler
//! time slice (3 ms on Linux, 100x a small layer). The caller times its
//! wait: one that is far longer than its own share of the job
//! ([`Pool::run`]) makes the pool run *solo* (every part on the calling
//! thread, workers asleep) for a while, 2 ms after the first late join and
//! twice as long after each further one up to about 1 s; [`CLEAN_CALLS`]
//! joins in time take one doubling back. So on a busy machine the default
//! thread count costs at most one slow call per solo period, and on an
//! idle one it keeps the speed-up of every core. Several threads calling
//! layers at once do not queue for the pool either: a caller that finds
//! it busy runs its parts itself.
//!
//! The thread count is `SMALL_THREADS`, else the cores available to the
//! process ([`available`]: its CPU affinity mask and cgroup quota), or
//! [`set_threads`]; a count above the available cores is capped, and an
//! invalid `SMALL_THREADS` is ignored, each with a one-line warning on
//! stderr (a thread count changes speed, never results, so the default is
//! safe). Every part of a job writes its own outputs, so results do not
//! depend on the thread count.

use std::eprintln;
use std::format;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock, RwLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use std::vec::Vec;

mod trace;
pub use trace::{ForkTimes, SLOTS, TraceMode};

/// Polls of a worker waiting for work before it sleeps: about 1.8 ms at
/// the 28 ns a `spin_loop` poll takes on Zen 5. With `1 << 14` (0.46 ms)
/// the workers slept between the layers of a network with several
/// one-part layers in a row, and each wake cost more than the layer:
/// VWW 0.25 ran 0.43x as fast on 2 threads as on one (`small-bench
/// --threads 2`, 2026-11-23), 1.18x with this value.
pub const SPIN: usize = 1 << 16;

/// Most threads a [`Pool`] starts (parts are counted in 16 bits).
pub const MAX_THREADS: usize = 256;

/// A join is late when the caller waited longer than this and than twice
/// its own share of the job: a worker's part started with the caller's,
/// so a longer wait means the worker lost its core. Above the wake-up
/// latency of a sleeping worker on a VM (tens of µs).
pub const LATE_WAIT: Duration = Duration::from_micros(50);

/// Polls of a waiting caller before it looks at the clock: a join
/// within them (about 7 µs) is in time.
const QUICK_POLLS: usize = 256;

/// How long a caller whose own share of the job took `mine` waits before
/// the join counts as late.
fn patience(mine: Duration) -> Duration {
    (mine * 2).max(LATE_WAIT)
}

/// The first solo period after a late join; each further late join
/// doubles it, up to `SOLO_BASE << MAX_PENALTY` (about 1 s).
pub const SOLO_BASE: Duration = Duration::from_millis(1);
const MAX_PENALTY: u32 = 10;

/// Joins in time that undo one doubling of the solo period.
pub const CLEAN_CALLS: u32 = 256;

/// A job: the function whose parts are claimed through `Shared::state`.
struct Job<'a> {
    f: &'a (dyn Fn(usize) + Sync),
}

/// The current job's word: `generation << 32 | parts << 16 | next part`.
fn pack(generation: u64, parts: usize, next: usize) -> u64 {
    (generation << 32) | ((parts as u64) << 16) | next as u64
}

/// `T` alone on its cache lines (two: Intel's prefetcher pairs lines).
#[repr(align(128))]
struct Padded<T>(T);

impl<T> core::ops::Deref for Padded<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

/// What a fork writes and idle workers poll shares one cache line, and the
/// counters that other threads write have their own: every cross-core
/// transfer of a line costs about 80 ns on a VM, and a fork that wrote
/// three fields of the line that workers re-read between the stores paid
/// three transfers (0.3-0.45 µs of a 0.9 µs empty fork-join on a 2-core
/// Xeon VM).
#[repr(C, align(128))]
struct Shared {
    /// The current job's generation, part count and next unclaimed part
    /// (see [`pack`]); a part is claimed by one compare-and-swap.
    state: AtomicU64,
    /// The current job, valid while any of its parts is unfinished.
    job: AtomicPtr<Job<'static>>,
    shutdown: AtomicBool,
    /// Polls before sleeping: [`SPIN`], or a few when there are more
    /// threads than cores and a spinning thread would only take the core
    /// from one with work.
    spin: usize,
    /// Set while the pool runs solo: workers sleep at once instead of
    /// spinning, and leave the cores to the caller and the other load.
    quiet: AtomicBool,
    /// Set while [`TraceMode::Threads`] traces: a worker stamps `span`.
    tracing: AtomicBool,
    /// The clock of `span`.
    epoch: Instant,
    /// A traced job's last worker part: its start and end after `epoch`
    /// (0: none yet).
    span: Padded<[AtomicU64; 2]>,
    /// Parts finished, over all jobs (wrapping): a job is done when it
    /// has grown by the job's parts, so a fork need not reset it.
    done: Padded<AtomicUsize>,
    /// Workers asleep (or about to be) on `wake`; a fork with none skips
    /// the mutex and the notification.
    sleepers: Padded<AtomicUsize>,
    sleep: Mutex<()>,
    wake: Condvar,
}

impl Shared {
    /// Claims the next part of job `generation`, if it has one left.
    fn claim(&self, generation: u64) -> Option<usize> {
        let mut s = self.state.load(Ordering::Acquire);
        loop {
            let (parts, next) = ((s >> 16) & 0xffff, s & 0xffff);
            if s >> 32 != generation || next >= parts {
                return None;
            }
            match self
                .state
                .compare_exchange_weak(s, s + 1, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => return Some(next as usize),
                Err(now) => s = now,
            }
        }
    }
}

/// The pool's memory of late joins (see the module docs).
struct Adapt {
    epoch: Instant,
    /// Nanoseconds after `epoch` until which calls run solo.
    solo_until: AtomicU64,
    /// Doublings of the next solo period.
    penalty: AtomicU32,
    /// Joins in time since the last change of `penalty`.
    clean: AtomicU32,
    /// [`Stats`]' counters.
    forks: AtomicU64,
    late: AtomicU64,
    solo: AtomicU64,
    busy: AtomicU64,
}

/// What a [`Pool`] did since it started ([`Pool::stats`]), to see why a
/// second thread does or does not pay off: how many calls split across
/// threads, how many of their joins were late (a worker lost its core),
/// and how many calls of several parts ran on the calling thread alone.
///
/// ```
/// use small_core::threads::Pool;
///
/// let pool = Pool::new(2);
/// let before = pool.stats();
/// pool.run(2, &|_part| {});
/// pool.run(1, &|_part| {}); // one part: never offered to a worker
/// let d = pool.stats().since(&before);
/// assert_eq!(d.forks + d.solo + d.busy, 1);
/// assert!(d.late <= d.forks);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Calls whose parts were offered to the workers.
    pub forks: u64,
    /// Of those, joins that waited past the caller's patience; each one
    /// starts or lengthens a solo period.
    pub late: u64,
    /// Calls of several parts run on the calling thread during a solo
    /// period.
    pub solo: u64,
    /// Calls of several parts run on the calling thread because another
    /// call held the pool.
    pub busy: u64,
}

impl Stats {
    /// The counts since `earlier` (an earlier [`Pool::stats`] of the same
    /// pool).
    pub fn since(&self, earlier: &Stats) -> Stats {
        Stats {
            forks: self.forks.saturating_sub(earlier.forks),
            late: self.late.saturating_sub(earlier.late),
            solo: self.solo.saturating_sub(earlier.solo),
            busy: self.busy.saturating_sub(earlier.busy),
        }
    }
}

impl Adapt {
    fn now(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }
}

/// A fixed set of worker threads (see the module docs).
pub struct Pool {
    shared: Arc<Shared>,
    workers: Vec<JoinHandle<()>>,
    /// One job at a time: a caller that finds the pool busy runs solo.
    turn: Mutex<()>,
    adapt: Adapt,
    trace: trace::Trace,
}

impl Pool {
    /// A pool running jobs on `threads` threads (the caller and
    /// `threads - 1` workers), at most [`MAX_THREADS`]. Unlike
    /// [`set_threads`] it does not cap `threads` at the cores available,
    /// so tests can oversubscribe. If the OS refuses a thread, the pool
    /// keeps those it got (with a warning on stderr).
    pub fn new(threads: usize) -> Pool {
        let threads = threads.clamp(1, MAX_THREADS);
        let shared = Arc::new(Shared {
            state: AtomicU64::new(0),
            job: AtomicPtr::new(core::ptr::null_mut()),
            shutdown: AtomicBool::new(false),
            spin: if threads <= available() { SPIN } else { 64 },
            quiet: AtomicBool::new(false),
            tracing: AtomicBool::new(false),
            epoch: Instant::now(),
            span: Padded([AtomicU64::new(0), AtomicU64::new(0)]),
            done: Padded(AtomicUsize::new(0)),
            sleepers: Padded(AtomicUsize::new(0)),
            sleep: Mutex::new(()),
            wake: Condvar::new(),
        });
        let mut workers = Vec::with_capacity(threads - 1);
        for k in 1..threads {
            let s = shared.clone();
            match std::thread::Builder::new()
                .name(format!("small-rs-{k}"))
                .spawn(move || worker(&s))
            {
                Ok(h) => workers.push(h),
                Err(e) => {
                    eprintln!(
                        "small-rs: could not start worker thread {k} of {}: {e}; running with {k} threads",
                        threads - 1
                    );
                    break;
                }
            }
        }
        Pool {
            shared,
            workers,
            turn: Mutex::new(()),
            adapt: Adapt {
                epoch: Instant::now(),
                solo_until: AtomicU64::new(0),
                penalty: AtomicU32::new(0),
                clean: AtomicU32::new(0),
                forks: AtomicU64::new(0),
                late: AtomicU64::new(0),
                solo: AtomicU64::new(0),
                busy: AtomicU64::new(0),
            },
            trace: trace::Trace::new(),
        }
    }

    /// Starts tracing the pool's forks in `mode` (clearing what was
    /// traced), or stops with [`TraceMode::Off`]. A diagnosis tool: the
    /// main job's `--per-layer` uses it at two threads or more to show,
    /// per layer, how a split call's time divides between the caller, the
    /// worker and the fork and join.
    ///
    /// ```
    /// use small_core::threads::{Pool, TraceMode};
    ///
    /// let pool = Pool::new(2);
    /// pool.set_trace(TraceMode::Serial);
    /// pool.trace_slot(3);
    /// pool.run(2, &|_part| {});
    /// let t = pool.trace();
    /// assert_eq!((t[3].forks, t[3].worker_forks, t[0].forks), (1, 1, 0));
    /// pool.set_trace(TraceMode::Off);
    /// ```
    pub fn set_trace(&self, mode: TraceMode) {
        self.trace.set(mode);
        self.shared
            .tracing
            .store(mode == TraceMode::Threads, Ordering::Relaxed);
    }

    /// Adds the next forks' times to slot `slot` (at most [`SLOTS`]` - 1`).
    pub fn trace_slot(&self, slot: usize) {
        self.trace.select(slot);
    }

    /// What the trace holds, slot by slot ([`SLOTS`] of them).
    pub fn trace(&self) -> Vec<ForkTimes> {
        self.trace.read()
    }

    /// Threads a job can use (workers and the caller).
    pub fn threads(&self) -> usize {
        self.workers.len() + 1
    }

    /// Threads the next job should be split for: [`Pool::threads`], or 1
    /// while the pool runs solo after a late join.
    pub fn width(&self) -> usize {
        if self.workers.is_empty() || self.solo() {
            1
        } else {
            self.threads()
        }
    }

    /// The pool's counts since it started (see [`Stats`]).
    pub fn stats(&self) -> Stats {
        let a = &self.adapt;
        Stats {
            forks: a.forks.load(Ordering::Relaxed),
            late: a.late.load(Ordering::Relaxed),
            solo: a.solo.load(Ordering::Relaxed),
            busy: a.busy.load(Ordering::Relaxed),
        }
    }

    /// Whether a call of several parts runs on the calling thread alone
    /// now (the pool runs solo); counts it in [`Stats::solo`] if so.
    fn solo_call(&self) -> bool {
        let solo = self.solo();
        if solo {
            self.adapt.solo.fetch_add(1, Ordering::Relaxed);
        }
        solo
    }

    /// Whether calls run solo now.
    pub fn solo(&self) -> bool {
        let a = &self.adapt;
        let until = a.solo_until.load(Ordering::Relaxed);
        // 0 = not solo, without reading the clock.
        if until == 0 {
            return false;
        }
        if a.now() < until {
            return true;
        }
        let _ = a
            .solo_until
            .compare_exchange(until, 0, Ordering::Relaxed, Ordering::Relaxed);
        false
    }

    /// Runs `f(0..parts)` and returns when all have run: part 0 on the
    /// calling thread, the others on whichever thread claims them first
    /// (the caller takes every part no worker has started). `parts` is
    /// capped at [`Pool::threads`]. While the pool runs solo, or another
    /// call holds it, every part runs on the calling thread.
    pub fn run(&self, parts: usize, f: &(dyn Fn(usize) + Sync)) {
        let parts = parts.min(self.threads());
        if parts <= 1 {
            return f(0);
        }
        let turn = match self.turn.try_lock() {
            Ok(t) => Some(t),
            Err(std::sync::TryLockError::Poisoned(e)) => Some(e.into_inner()),
            Err(std::sync::TryLockError::WouldBlock) => None,
        };
        if turn.is_none() {
            self.adapt.busy.fetch_add(1, Ordering::Relaxed);
        }
        if turn.is_none() || self.solo_call() {
            return (0..parts).for_each(f);
        }
        if self.trace.mode() == TraceMode::Serial {
            return self.run_serial(parts, f);
        }
        let s = &*self.shared;
        // Workers poll `quiet`: write it only when it changes.
        if s.quiet.load(Ordering::Relaxed) {
            s.quiet.store(false, Ordering::Relaxed);
        }
        let job = Job { f };
        let tracing = s.tracing.load(Ordering::Relaxed);
        if tracing {
            s.span[0].store(0, Ordering::Relaxed);
            s.span[1].store(0, Ordering::Relaxed);
        }
        let published = if tracing { trace::since(s.epoch) } else { 0 };
        // No part of an earlier job is running: `done` is still.
        let base = s.done.load(Ordering::Relaxed);
        // SAFETY of the lifetime erasure: `job` outlives every use, since
        // this function returns only when all its parts are done, and a
        // worker reads the pointer only after claiming one of them.
        s.job.store(
            &job as *const Job<'_> as *mut Job<'static>,
            Ordering::Release,
        );
        let generation = ((s.state.load(Ordering::Relaxed) >> 32) + 1) & 0xffff_ffff;
        // Part 0 is claimed by the caller in the same store. SeqCst pairs
        // with the worker's `sleepers` increment and check: a worker
        // either sees this generation or is counted here.
        s.state.store(pack(generation, parts, 1), Ordering::SeqCst);
        if s.sleepers.load(Ordering::SeqCst) > 0 {
            let _g = s.sleep.lock().unwrap_or_else(|e| e.into_inner());
            s.wake.notify_all();
        }
        let start = Instant::now();
        // The workers use `job` until its parts are done, so even a panic
        // must wait for them before unwinding; later parts are skipped.
        let mut panic = None;
        let mut part = Some(0);
        while let Some(k) = part {
            if panic.is_none() {
                panic = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(k))).err();
            }
            s.done.fetch_add(1, Ordering::Release);
            part = s.claim(generation);
        }
        let caller_done = if tracing { trace::since(s.epoch) } else { 0 };
        // A join within QUICK_POLLS (a few µs) is in time without a look
        // at the clock; after that the caller's share (`mine`, over by at
        // most those polls) sets its patience, and the clock is read every
        // 64 polls; past its patience the caller yields its core (the
        // worker it waits for may need it).
        let mut polls = 0usize;
        let mut mine = None;
        while s.done.load(Ordering::Acquire).wrapping_sub(base) < parts {
            polls += 1;
            if polls < QUICK_POLLS {
                core::hint::spin_loop();
                continue;
            }
            let mine = *mine.get_or_insert_with(|| start.elapsed());
            if polls < s.spin
                && (!polls.is_multiple_of(64) || start.elapsed() < mine + patience(mine))
            {
                core::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
        }
        let late = mine.is_some_and(|mine| start.elapsed() - mine > patience(mine));
        if tracing {
            self.record(published, caller_done);
        }
        // `job` is left dangling: a worker reads it only after claiming a
        // part of its generation, and that generation has none left.
        drop(turn);
        self.judge(late);
        if let Some(panic) = panic {
            std::panic::resume_unwind(panic);
        }
    }

    /// [`TraceMode::Serial`]'s `run`: the parts in order on this thread,
    /// each timed.
    fn run_serial(&self, parts: usize, f: &(dyn Fn(usize) + Sync)) {
        let epoch = self.shared.epoch;
        let t0 = trace::since(epoch);
        f(0);
        let t1 = trace::since(epoch);
        (1..parts).for_each(f);
        let t2 = trace::since(epoch);
        self.trace.add(t1 - t0, Some((0, t2 - t1, 0)));
    }

    /// Adds a traced job's times (after `epoch`: the job's publication,
    /// the end of the caller's parts; the join is seen now).
    fn record(&self, published: u64, caller_done: u64) {
        let s = &*self.shared;
        let seen = trace::since(s.epoch);
        let (start, end) = (
            s.span[0].load(Ordering::Relaxed),
            s.span[1].load(Ordering::Relaxed),
        );
        let worker = (start != 0 && end >= start).then(|| {
            (
                start.saturating_sub(published),
                end - start,
                seen.saturating_sub(end),
            )
        });
        self.trace.add(caller_done - published, worker);
    }

    /// Records a join: a late one makes the pool run solo for a while.
    fn judge(&self, late: bool) {
        let a = &self.adapt;
        a.forks.fetch_add(1, Ordering::Relaxed);
        if late {
            a.late.fetch_add(1, Ordering::Relaxed);
            let p = (a.penalty.load(Ordering::Relaxed) + 1).min(MAX_PENALTY);
            a.penalty.store(p, Ordering::Relaxed);
            a.clean.store(0, Ordering::Relaxed);
            let solo = u64::try_from((SOLO_BASE * (1 << p)).as_nanos()).unwrap_or(u64::MAX);
            a.solo_until
                .store(a.now().saturating_add(solo), Ordering::Relaxed);
            self.shared.quiet.store(true, Ordering::Relaxed);
        } else if a.penalty.load(Ordering::Relaxed) > 0
            && a.clean.fetch_add(1, Ordering::Relaxed) + 1 >= CLEAN_CALLS
        {
            a.clean.store(0, Ordering::Relaxed);
            a.penalty.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

fn worker(s: &Shared) {
    let mut seen = 0u64;
    loop {
        // Wait for the next generation: spin, then sleep.
        let mut polls = 0usize;
        let generation = loop {
            let g = s.state.load(Ordering::Acquire) >> 32;
            if g != seen || s.shutdown.load(Ordering::Acquire) {
                break g;
            }
            polls += 1;
            if polls < s.spin && !s.quiet.load(Ordering::Relaxed) {
                core::hint::spin_loop();
            } else {
                let guard = s.sleep.lock().unwrap_or_else(|e| e.into_inner());
                s.sleepers.fetch_add(1, Ordering::SeqCst);
                if s.state.load(Ordering::SeqCst) >> 32 == seen
                    && !s.shutdown.load(Ordering::SeqCst)
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
        seen = generation;
        // The job's lines travel while the claim waits for `state`.
        prefetch_caller_stack(s.job.load(Ordering::Acquire).cast_const().cast());
        while let Some(k) = s.claim(generation) {
            // SAFETY: the caller published the job before the generation,
            // and keeps it alive until every claimed part counts itself
            // done; no new job is published before that.
            let job = unsafe { &*s.job.load(Ordering::Acquire) };
            let tracing = s.tracing.load(Ordering::Relaxed);
            if tracing {
                s.span[0].store(trace::since(s.epoch), Ordering::Relaxed);
            }
            // A panicking part must still count itself done (the caller
            // waits for it); the kernels themselves never panic.
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| (job.f)(k)));
            if tracing {
                s.span[1].store(trace::since(s.epoch), Ordering::Relaxed);
            }
            s.done.fetch_add(1, Ordering::Release);
        }
    }
}

/// Bytes of the caller's stack above its [`Job`] that a worker prefetches
/// when it takes a part: the frames between `Pool::run` and the layer's
/// `forward` (the closures and the `Problem`), with room to spare.
const CALLER_STACK: usize = 2048;

/// Prefetches the [`CALLER_STACK`] bytes above `job` (the caller's stack,
/// which its thread wrote just before the fork; the pointer may be a
/// finished job's, if a newer fork raced this read: a prefetch of it only
/// costs a little traffic). The part reads those lines as a chain (the
/// job, its closure, the layer's closure, the `Problem`), each read
/// waiting for the line before it; prefetched, they travel together. On
/// an AMD EPYC Zen 1 VM: VWW 0.25 `f32` at two threads about 2 % faster
/// with the cores near (a line's round trip ~60 ns); with them far apart
/// (~470 ns) no change above the noise, so that chain is not what a far
/// core costs a layer. A prefetch neither faults nor counts as a read of
/// the memory, so bytes past the stack's top or not yet written are
/// harmless. Other arches: no-op.
#[inline(always)]
fn prefetch_caller_stack(job: *const u8) {
    #[cfg(target_arch = "x86_64")]
    for at in (0..CALLER_STACK).step_by(64) {
        use core::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        // SAFETY: `prefetch` is a hint: it never faults and is not a memory
        // access, whatever the address.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(job.wrapping_add(at).cast()) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = job;
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

/// Cores this process may run on: its CPU affinity mask and cgroup CPU
/// quota, as `std::thread::available_parallelism` reads them; 1 if
/// unknown.
pub fn available() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// `n` capped at [`available`], with a warning naming `source` when it is
/// above (once per process).
fn capped(n: usize, source: &str) -> usize {
    static WARNED: AtomicBool = AtomicBool::new(false);
    let cores = available();
    if n > cores {
        if !WARNED.swap(true, Ordering::Relaxed) {
            eprintln!(
                "small-rs: {source} asks for {n} threads but this process has {cores} cores; using {cores}"
            );
        }
        cores
    } else {
        n
    }
}

/// The thread count `SMALL_THREADS` asks for, or `Err` with the warning
/// to print when it is not a count from 1 up; `None` when unset.
fn parse_setting(value: Option<&str>) -> Option<Result<usize, std::string::String>> {
    let v = value?;
    Some(match v.trim().parse::<usize>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(format!(
            "small-rs: SMALL_THREADS={v:?} is not a thread count (an integer from 1 up); using the default, {} (the cores available)",
            available()
        )),
    })
}

/// The thread count of the process-wide pool when it starts.
pub fn default_threads() -> usize {
    let value = std::env::var_os("SMALL_THREADS");
    let value = value.as_ref().map(|v| v.to_str().unwrap_or("<not UTF-8>"));
    match parse_setting(value) {
        None => available(),
        Some(Ok(n)) => capped(n, "SMALL_THREADS"),
        Some(Err(warning)) => {
            eprintln!("{warning}");
            available()
        }
    }
}

/// The process-wide pool, started on first use.
pub fn pool() -> Arc<Pool> {
    let lock = POOL.get_or_init(|| RwLock::new(Arc::new(Pool::new(default_threads()))));
    lock.read().unwrap_or_else(|e| e.into_inner()).clone()
}

/// Makes `pool` the process-wide pool (e.g. a [`Pool::new`] with more
/// threads than cores, for a test). The old pool's threads end once no
/// call uses them.
pub fn set_pool(pool: Pool) {
    let new = Arc::new(pool);
    match POOL.get() {
        Some(lock) => *lock.write().unwrap_or_else(|e| e.into_inner()) = new,
        None => {
            if let Err(new) = POOL.set(RwLock::new(new)) {
                // Another thread started the default pool meanwhile.
                let new = new.into_inner().unwrap_or_else(|e| e.into_inner());
                if let Some(lock) = POOL.get() {
                    *lock.write().unwrap_or_else(|e| e.into_inner()) = new;
                }
            }
        }
    }
}

/// Sets the number of threads layers may use (1 = single-threaded), capped
/// at the cores available (with a warning); returns the count in use.
///
/// ```
/// let n = small_core::threads::set_threads(1);
/// assert_eq!((n, small_core::threads::threads()), (1, 1));
/// ```
pub fn set_threads(threads: usize) -> usize {
    let pool = Pool::new(capped(threads.max(1), "set_threads"));
    let n = pool.threads();
    set_pool(pool);
    n
}

/// Threads layers may use now.
pub fn threads() -> usize {
    pool().threads()
}

/// Runs `f(part, parts)` for the parts of the layer call `p`
/// ([`crate::nest::execute`]): `parts = min(threads, p_max)` (SMaLL §4),
/// `p_max` from the call's independent units and its MACs
/// (`Problem::split_macs`: an `i8` broadcast call's count a quarter) over
/// [`MIN_PART_MACS`](crate::nest::MIN_PART_MACS). A call too small for two
/// parts, or one while the pool runs solo, runs on this thread.
pub(crate) fn execute<E: crate::Element>(
    p: &crate::nest::Problem<'_, E>,
    f: &(dyn Fn(usize, usize) + Sync),
) {
    // A call too small for two parts runs here without asking the pool.
    let most = p.split_macs() / crate::nest::MIN_PART_MACS;
    if most < 2 {
        return f(0, 1);
    }
    let pool = pool();
    let parts = pool.threads().min(p.units()).min(most);
    // While the pool runs solo after a late join, one part (the fewest
    // tile set-ups), counted in `Stats::solo`.
    if parts < 2 || pool.solo_call() {
        return f(0, 1);
    }
    pool.run(parts, &|k| f(k, parts));
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
        for round in 0..ROUNDS {
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

    /// Rounds of the stress tests: Miri (the `miri` stage runs
    /// `threads::tests::miri_`) checks the job's lifetime and the parts'
    /// writes in a few.
    const ROUNDS: usize = if cfg!(miri) { 12 } else { 2000 };

    #[test]
    fn miri_parts_write_disjoint_memory_and_the_job_outlives_them() {
        // Plain (non-atomic) writes, as the loop nest's parts do: Miri
        // reports a race if two parts or the caller's read overlap, and a
        // use after free if a worker touched a finished job.
        struct Slots(*mut usize);
        // SAFETY: each part writes only its own slot.
        unsafe impl Sync for Slots {}
        for threads in [2, 3] {
            let pool = Pool::new(threads);
            for round in 0..ROUNDS {
                let parts = 1 + round % threads;
                let mut out = std::vec![usize::MAX; parts];
                let slots = Slots(out.as_mut_ptr());
                pool.run(parts, &|k| {
                    let slots = &slots;
                    // SAFETY: `k < parts` = `out.len()`, and part `k` runs
                    // once, so no two writes alias.
                    unsafe { *slots.0.add(k) = k * round };
                });
                let want: Vec<usize> = (0..parts).map(|k| k * round).collect();
                assert_eq!(out, want, "{threads} threads, round {round}");
            }
        }
    }

    #[test]
    fn miri_concurrent_callers_each_run_every_part_once() {
        let pool = Pool::new(2);
        std::thread::scope(|scope| {
            for _ in 0..3 {
                scope.spawn(|| {
                    for round in 0..ROUNDS {
                        let hits = [AtomicUsize::new(0), AtomicUsize::new(0)];
                        pool.run(2, &|k| {
                            hits[k].fetch_add(1, Ordering::Relaxed);
                        });
                        assert!(
                            hits.iter().all(|h| h.load(Ordering::Relaxed) == 1),
                            "{round}"
                        );
                    }
                });
            }
        });
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
    fn a_trace_counts_each_fork_in_its_slot_and_stops_when_off() {
        let pool = Pool::new(2);
        pool.set_trace(TraceMode::Threads);
        let busy = |_: usize| {
            std::hint::black_box((0..2000u64).sum::<u64>());
        };
        // A late join (a slow worker wake-up under emulation) makes the
        // next calls solo, untraced: wait each call until it will fork.
        let not_solo = || {
            while pool.solo() {
                std::thread::sleep(SOLO_BASE);
            }
        };
        for slot in [1, 2, 2, SLOTS + 5] {
            pool.trace_slot(slot);
            not_solo();
            pool.run(2, &busy);
        }
        let t = pool.trace();
        let forks: Vec<u64> = t.iter().map(|f| f.forks).collect();
        assert_eq!(
            (forks[0], forks[1], forks[2], forks[SLOTS - 1]),
            (0, 1, 2, 1)
        );
        assert_eq!(forks.iter().sum::<u64>(), 4);
        for f in &t {
            assert!(f.worker_forks <= f.forks);
            // A worker that ran a part took some time over it.
            assert!(f.worker_forks == 0 || f.worker_part > 0, "{f:?}");
        }
        // Serial: every part on the caller, part 0 timed apart.
        pool.set_trace(TraceMode::Serial);
        let ran = AtomicUsize::new(0);
        not_solo();
        pool.run(2, &|_| {
            ran.fetch_add(1, Ordering::Relaxed);
        });
        assert_eq!(ran.load(Ordering::Relaxed), 2);
        let t = pool.trace();
        assert_eq!(
            (t[0].forks, t[0].worker_forks, t[0].worker_start),
            (1, 1, 0)
        );
        pool.set_trace(TraceMode::Off);
        pool.run(2, &busy);
        assert!(pool.trace().iter().all(|f| f.forks == 0));
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

    #[test]
    fn a_late_join_runs_the_next_calls_solo_then_probes_again() {
        let pool = Pool::new(2);
        assert_eq!(pool.width(), 2);
        // The worker's part outlasts the caller's by far more than the
        // patience: as if the worker had lost its core. (The caller may
        // take both parts when the worker is slow to see the job.)
        let me = std::thread::current().id();
        let worker_ran = AtomicBool::new(false);
        for _ in 0..100 {
            pool.run(2, &|_| {
                if std::thread::current().id() != me {
                    worker_ran.store(true, Ordering::Relaxed);
                    std::thread::sleep(Duration::from_millis(50));
                } else {
                    // Give the worker up to 10 ms to claim the other part,
                    // so the caller's share is at most a fifth of its wait.
                    let t = Instant::now();
                    while !worker_ran.load(Ordering::Relaxed)
                        && t.elapsed() < Duration::from_millis(10)
                    {
                        std::thread::yield_now();
                    }
                }
            });
            if worker_ran.load(Ordering::Relaxed) {
                break;
            }
        }
        assert!(worker_ran.load(Ordering::Relaxed));
        let late = pool.stats();
        assert!(late.late >= 1 && late.late <= late.forks, "{late:?}");
        // Solo now, unless the 2 ms already passed (under emulation they
        // can): a solo call runs every part here and the stats count it.
        assert!(pool.width() == 1 || !pool.solo());
        let all_here = AtomicBool::new(true);
        pool.run(2, &|_| {
            if std::thread::current().id() != me {
                all_here.store(false, Ordering::Relaxed);
            }
        });
        let d = pool.stats().since(&late);
        if d.solo == 1 {
            assert!(all_here.load(Ordering::Relaxed));
            assert_eq!((d.forks, d.busy), (0, 0));
        } else {
            assert_eq!((d.forks, d.solo, d.busy), (1, 0, 0), "{d:?}");
        }
        // The period ends (a forked call above may have been late too and
        // doubled it): the pool probes its workers again.
        let t = Instant::now();
        while pool.solo() {
            assert!(t.elapsed() < SOLO_BASE * 64, "still solo");
            std::thread::sleep(SOLO_BASE);
        }
        assert_eq!(pool.width(), 2);
    }

    #[test]
    fn a_part_the_worker_never_starts_runs_on_the_caller() {
        // A one-worker pool whose worker is busy in another job's part:
        // a second caller finds the pool busy and runs both parts itself.
        let pool = Pool::new(2);
        let (started, release) = (AtomicBool::new(false), AtomicBool::new(false));
        std::thread::scope(|scope| {
            scope.spawn(|| {
                pool.run(2, &|_| {
                    started.store(true, Ordering::Release);
                    while !release.load(Ordering::Acquire) {
                        std::thread::yield_now();
                    }
                })
            });
            // Wait until the first job runs a part: it holds the pool's
            // turn from before its first part to its join. (Probing with
            // `try_lock` could take the turn for an instant just as the
            // job asked for it; the job then ran both parts on its own
            // thread, without the turn, and this loop waited for ever:
            // a hang under qemu-aarch64 in CI.)
            while !started.load(Ordering::Acquire) {
                std::thread::yield_now();
            }
            assert!(matches!(
                pool.turn.try_lock(),
                Err(std::sync::TryLockError::WouldBlock)
            ));
            let hits = [AtomicUsize::new(0), AtomicUsize::new(0)];
            pool.run(2, &|k| {
                hits[k].fetch_add(1, Ordering::Relaxed);
            });
            assert!(hits.iter().all(|h| h.load(Ordering::Relaxed) == 1));
            release.store(true, Ordering::Release);
        });
    }

    #[test]
    fn settings_are_counts_from_one_up() {
        assert_eq!(parse_setting(None), None);
        assert_eq!(parse_setting(Some("3")), Some(Ok(3)));
        assert_eq!(parse_setting(Some(" 2 ")), Some(Ok(2)));
        for bad in ["0", "abc", "-1", "", "1.5"] {
            let warning = parse_setting(Some(bad)).unwrap().unwrap_err();
            assert!(
                warning.contains(&format!("SMALL_THREADS={bad:?}")),
                "{warning}"
            );
        }
        assert_eq!(capped(usize::MAX, "test"), available());
        assert_eq!(capped(1, "test"), 1);
    }

    /// Run by [`a_failed_spawn_keeps_the_threads_it_got`] in a child
    /// process whose address space is too small for every worker's stack.
    #[test]
    #[ignore = "the child process of a_failed_spawn_keeps_the_threads_it_got"]
    fn spawn_under_a_memory_limit() {
        let pool = Pool::new(MAX_THREADS);
        let sum = AtomicUsize::new(0);
        pool.run(MAX_THREADS, &|k| {
            sum.fetch_add(k + 1, Ordering::Relaxed);
        });
        let n = pool.threads();
        assert_eq!(sum.load(Ordering::Relaxed), n * (n + 1) / 2);
        std::println!("threads started: {n}");
    }

    // The child is this test binary: x86_64 Linux only (the aarch64 one
    // runs under qemu-user, which `sh` would not start).
    #[cfg(all(target_os = "linux", target_arch = "x86_64", not(miri)))]
    #[test]
    fn a_failed_spawn_keeps_the_threads_it_got() {
        let exe = std::env::current_exe().unwrap();
        // 1 GiB of address space: the test binary fits, 255 worker stacks
        // of 64 MiB do not. What a failed spawn leaves is less than one
        // stack; with 2 MiB stacks it was sometimes too little for the
        // next small allocation (an abort, not the error under test), with
        // 64 MiB it almost never is.
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg("ulimit -v 1048576 && exec \"$0\" --exact threads::tests::spawn_under_a_memory_limit --ignored --nocapture --test-threads 1")
            .arg(&exe)
            .env("RUST_MIN_STACK", "67108864")
            .output()
            .unwrap();
        let stdout = std::string::String::from_utf8_lossy(&out.stdout);
        let stderr = std::string::String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{stdout}\n{stderr}");
        let n: usize = stdout
            .lines()
            .find_map(|l| l.split("threads started: ").nth(1))
            .and_then(|n| n.trim().parse().ok())
            .unwrap_or_else(|| panic!("no thread count in {stdout}"));
        assert!((1..MAX_THREADS).contains(&n), "{n} threads");
        assert!(stderr.contains("could not start worker thread"), "{stderr}");
    }

    #[test]
    fn absurd_thread_counts_are_capped() {
        assert_eq!(Pool::new(0).threads(), 1);
        assert_eq!(Pool::new(usize::MAX).threads(), MAX_THREADS);
    }
}
