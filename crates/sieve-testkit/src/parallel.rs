//! Running one test's independent cases on the machine's cores.

use std::sync::atomic::{AtomicUsize, Ordering};

/// Calls `check` on every item, on up to four threads that take the next item as they finish
/// one, so a few slow items do not hold the rest back. Returns the sum of what `check`
/// returns (a count of what was checked, say). A panic in `check` fails the caller once every
/// thread has stopped, with the panicking item's message printed where it happened.
pub fn sum_in_parallel<T: Sync>(items: &[T], check: impl Fn(&T) -> usize + Sync) -> usize {
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, 4);
    let next = AtomicUsize::new(0);
    let total = AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                while let Some(item) = items.get(next.fetch_add(1, Ordering::Relaxed)) {
                    total.fetch_add(check(item), Ordering::Relaxed);
                }
            });
        }
    });
    total.into_inner()
}

#[cfg(test)]
mod tests {
    use super::sum_in_parallel;

    #[test]
    fn every_item_is_checked_once() {
        let items: Vec<usize> = (1..=100).collect();
        assert_eq!(sum_in_parallel(&items, |&i| i), 5050);
        assert_eq!(sum_in_parallel(&[] as &[usize], |&i| i), 0);
    }

    #[test]
    #[should_panic]
    fn a_failing_item_fails_the_caller() {
        sum_in_parallel(&[1, 2, 3], |&i| {
            assert_ne!(i, 2, "item 2 fails");
            i
        });
    }
}
