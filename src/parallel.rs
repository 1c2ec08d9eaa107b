//! Bounded work on threads with the results in input order: the one implementation behind
//! `validate`'s parallel run, `catalog resolve-all`'s fetches and `outdated`'s source
//! queries. Workers take the next item as they finish (no static split), so one slow item
//! does not hold up a share of the others.

use std::sync::atomic::{AtomicUsize, Ordering};

/// `f` of every item, on at most `workers` threads, taken in the order `schedule` gives (an
/// ordering of the indices, e.g. largest first; `None`: input order); returns the results
/// in input order. One worker (or one item) runs on the calling thread.
pub fn map<'a, T: Sync, R: Send>(
    items: &'a [T],
    workers: usize,
    schedule: Option<Vec<usize>>,
    f: impl Fn(&'a T) -> R + Sync,
) -> Vec<R> {
    let workers = workers.min(items.len()).max(1);
    let _busy = Busy::hold(workers);
    if workers == 1 {
        return match schedule {
            None => items.iter().map(&f).collect(),
            Some(order) => {
                let mut done: Vec<(usize, R)> =
                    order.into_iter().map(|i| (i, f(&items[i]))).collect();
                done.sort_by_key(|(i, _)| *i);
                done.into_iter().map(|(_, r)| r).collect()
            }
        };
    }
    let order = schedule.unwrap_or_else(|| (0..items.len()).collect());
    let next = AtomicUsize::new(0);
    let mut results: Vec<(usize, R)> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                s.spawn(|| {
                    let mut done = Vec::new();
                    while let Some(&i) = order.get(next.fetch_add(1, Ordering::Relaxed)) {
                        done.push((i, f(&items[i])));
                    }
                    done
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| {
                h.join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .collect()
    });
    results.sort_by_key(|(i, _)| *i);
    results.into_iter().map(|(_, r)| r).collect()
}

/// A schedule for [`map`]: the indices of `items`, largest `size` first, so that one big
/// item does not start last and finish alone.
pub fn largest_first<T>(items: &[T], size: impl Fn(&T) -> u64) -> Vec<usize> {
    let sizes: Vec<u64> = items.iter().map(size).collect();
    let mut order: Vec<usize> = (0..items.len()).collect();
    order.sort_by_key(|i| std::cmp::Reverse(sizes[*i]));
    order
}

/// The threads worth using for CPU-bound work: one per core.
///
/// Asked once per process: `available_parallelism` reads the cgroup's CPU quota from
/// `/proc` and `/sys` on every call (three files), and the nested maps of `validate` ask
/// for every package and every round of its files — 2,400 file reads on the 83-package
/// corpus before this was remembered.
pub fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// Threads of [`map`] running now, in the whole process (the caller's own thread counts when
/// it does the work itself).
static BUSY: AtomicUsize = AtomicUsize::new(0);

/// Holds `n` of [`BUSY`] while a [`map`] runs (released on unwinding too).
struct Busy(usize);

impl Busy {
    fn hold(n: usize) -> Busy {
        BUSY.fetch_add(n, Ordering::Relaxed);
        Busy(n)
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        BUSY.fetch_sub(self.0, Ordering::Relaxed);
    }
}

/// The threads worth using for CPU-bound work nested inside a [`map`] (the files of one
/// package inside the packages of a run): the cores no other worker holds, plus the
/// caller's own. All of them when nothing else runs, one when the outer run already uses
/// every core — more threads than cores only adds contention (measured: 83 packages, 18 %
/// more CPU time when each also split its files two ways).
pub fn spare_cores() -> usize {
    (cores() + 1)
        .saturating_sub(BUSY.load(Ordering::Relaxed))
        .clamp(1, cores())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Results come back in input order whatever the schedule and the number of workers,
    /// and every item runs exactly once.
    #[test]
    fn results_keep_input_order() {
        let items: Vec<u32> = (0..100).collect();
        let runs = AtomicUsize::new(0);
        for workers in [1, 3, 8] {
            for schedule in [None, Some((0..100).rev().collect())] {
                runs.store(0, Ordering::Relaxed);
                let out = map(&items, workers, schedule, |x| {
                    runs.fetch_add(1, Ordering::Relaxed);
                    x * 2
                });
                assert_eq!(out, items.iter().map(|x| x * 2).collect::<Vec<_>>());
                assert_eq!(runs.load(Ordering::Relaxed), 100);
            }
        }
        assert!(map(&Vec::<u32>::new(), 4, None, |x| *x).is_empty());
        // Largest first; equal sizes keep their order.
        assert_eq!(largest_first(&[3u64, 9, 1, 9], |x| *x), [1, 3, 0, 2]);
    }

    /// Work nested inside a run that already has a worker per core gets no more threads
    /// (other tests running `map` at the same time can only lower the count further).
    #[test]
    fn nested_work_takes_only_spare_cores() {
        let items: Vec<usize> = (0..cores()).collect();
        let seen = map(&items, cores(), None, |_| spare_cores());
        assert!(seen.iter().all(|n| *n == 1), "{seen:?}");
        assert!((1..=cores()).contains(&spare_cores()));
    }
}
