//! Bounded work on threads with the results in input order: the one implementation behind
//! `validate`'s parallel run, `catalog resolve-all`'s fetches and `outdated`'s source
//! queries. Workers take the next item as they finish (no static split), so one slow item
//! does not hold up a share of the others.

use std::sync::atomic::{AtomicUsize, Ordering};

/// `f` of every item, on at most `workers` threads, taken in the order `schedule` gives (an
/// ordering of the indices, e.g. largest first; `None`: input order); returns the results
/// in input order. One worker (or one item) runs on the calling thread.
pub fn map<T: Sync, R: Send>(
    items: &[T],
    workers: usize,
    schedule: Option<Vec<usize>>,
    f: impl Fn(&T) -> R + Sync,
) -> Vec<R> {
    let workers = workers.min(items.len()).max(1);
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

/// The threads worth using for CPU-bound work: one per core.
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
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
    }
}
