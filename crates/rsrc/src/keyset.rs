//! Keyset paging over a sorted list: a page is the items strictly after a position, and
//! the next page's position is the key of the page's last item.
//!
//! A listing that walks a sorted collection (a directory's names, a map's URIs, a git
//! tree's entries, refs by name, rows by key) resumes *after the last key it returned*,
//! never at an offset. Providers use it through three pieces: [`after`] (the rest of a
//! sorted slice) or [`range`] (the rest of a `BTreeMap`), then [`page`] (or [`try_page`]
//! when producing an item can fail), which cuts the page and names its next position.
//!
//! Invariant: when keys are unique and totally ordered, a walk page by page returns every
//! item present throughout the walk exactly once, in key order, whatever is inserted or
//! removed meanwhile: an item inserted behind the position is never returned, one
//! inserted ahead is returned once, a removed one is simply not there. Every page but the
//! last holds at least one item, so a walk always ends.

use std::ops::Bound;

/// One page of a keyset walk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Paged<T, P> {
    /// At most the page's limit of items, in order.
    pub items: Vec<T>,
    /// Where the next page starts (the last item's position), when more items follow.
    pub next: Option<P>,
}

/// The items of `sorted` (ascending by `key`) whose keys are strictly greater than
/// `after`; all of them without a position.
pub fn after<'a, T, K>(sorted: &'a [T], after: Option<&K>, key: impl Fn(&T) -> &K) -> &'a [T]
where
    K: Ord + ?Sized,
{
    match after {
        None => sorted,
        Some(a) => &sorted[sorted.partition_point(|t| key(t) <= a)..],
    }
}

/// The keys strictly after `after`, as bounds for `BTreeMap::range` (every key without a
/// position).
pub fn range<K: ?Sized>(after: Option<&K>) -> (Bound<&K>, Bound<&K>) {
    (
        after.map_or(Bound::Unbounded, Bound::Excluded),
        Bound::Unbounded,
    )
}

/// The page of at most `limit` items taken from `rest`, the items after the position in
/// order (see [`after`], [`range`]). When another item follows the page, `next` is
/// `position` of its last item. At most `limit + 1` items are drawn from `rest`. A `limit`
/// of 0 is taken as 1, so that every page moves the walk on.
pub fn page<T, P>(
    rest: impl IntoIterator<Item = T>,
    limit: usize,
    position: impl FnOnce(&T) -> P,
) -> Paged<T, P> {
    let limit = limit.max(1);
    let mut rest = rest.into_iter();
    let items: Vec<T> = rest.by_ref().take(limit).collect();
    let more = items.len() == limit && rest.next().is_some();
    let next = if more {
        items.last().map(position)
    } else {
        None
    };
    Paged { items, next }
}

/// [`page`] over items whose production can fail: the first failure among the
/// `limit + 1` items drawn is returned instead of a page.
pub fn try_page<T, P, E>(
    rest: impl IntoIterator<Item = Result<T, E>>,
    limit: usize,
    position: impl FnOnce(&T) -> P,
) -> Result<Paged<T, P>, E> {
    let limit = limit.max(1);
    let mut rest = rest.into_iter();
    let mut items = Vec::new();
    for item in rest.by_ref().take(limit) {
        items.push(item?);
    }
    let more = items.len() == limit && rest.next().transpose()?.is_some();
    let next = if more {
        items.last().map(position)
    } else {
        None
    };
    Ok(Paged { items, next })
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};

    use super::*;

    /// A small deterministic generator (xorshift64*), so that the property tests need no
    /// dependency and every failure reproduces.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }

        fn below(&mut self, n: u64) -> u64 {
            self.next() % n.max(1)
        }
    }

    /// One page of `set` after `pos`, through a sorted slice.
    fn slice_page(set: &BTreeSet<u32>, pos: Option<u32>, limit: usize) -> Paged<u32, u32> {
        let sorted: Vec<u32> = set.iter().copied().collect();
        let rest = after(&sorted, pos.as_ref(), |k| k);
        page(rest.iter().copied(), limit, |k| *k)
    }

    /// The same page through a map's range.
    fn map_page(set: &BTreeSet<u32>, pos: Option<u32>, limit: usize) -> Paged<u32, u32> {
        let map: BTreeMap<u32, ()> = set.iter().map(|&k| (k, ())).collect();
        page(
            map.range(range(pos.as_ref())).map(|(k, ())| *k),
            limit,
            |k| *k,
        )
    }

    #[test]
    fn a_walk_returns_every_item_once_in_order() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for case in 0..500 {
            let set: BTreeSet<u32> = (0..rng.below(60))
                .map(|_| u32::try_from(rng.below(200)).unwrap())
                .collect();
            for paging in [slice_page, map_page] {
                let mut seen: Vec<u32> = Vec::new();
                let mut pos = None;
                let mut pages = 0;
                loop {
                    let limit = usize::try_from(rng.below(7)).unwrap();
                    let p = paging(&set, pos, limit);
                    assert!(p.items.len() <= limit.max(1), "case {case}");
                    assert!(p.next.is_none() || !p.items.is_empty(), "case {case}");
                    seen.extend(&p.items);
                    pages += 1;
                    assert!(pages <= set.len() + 1, "case {case}: the walk does not end");
                    match p.next {
                        Some(n) => {
                            assert_eq!(Some(&n), p.items.last(), "case {case}");
                            pos = Some(n);
                        }
                        None => break,
                    }
                }
                assert_eq!(seen, set.iter().copied().collect::<Vec<_>>(), "case {case}");
            }
        }
    }

    #[test]
    fn a_walk_is_stable_while_items_come_and_go() {
        let mut rng = Rng(0x1234_5678_9abc_def1);
        for case in 0..500 {
            let mut set: BTreeSet<u32> = (0..rng.below(80))
                .map(|_| u32::try_from(rng.below(300)).unwrap())
                .collect();
            let start = set.clone();
            let mut ever = set.clone();
            let mut removed = BTreeSet::new();
            let mut seen: Vec<u32> = Vec::new();
            let mut pos: Option<u32> = None;
            loop {
                let limit = 1 + usize::try_from(rng.below(6)).unwrap();
                let p = if rng.below(2) == 0 {
                    slice_page(&set, pos, limit)
                } else {
                    map_page(&set, pos, limit)
                };
                seen.extend(&p.items);
                let Some(next) = p.next else { break };
                pos = Some(next);
                // Insertions and removals on both sides of the position.
                for _ in 0..rng.below(4) {
                    let k = u32::try_from(rng.below(300)).unwrap();
                    if rng.below(2) == 0 {
                        set.insert(k);
                        ever.insert(k);
                    } else if set.remove(&k) {
                        removed.insert(k);
                    }
                }
            }
            // Strictly increasing: nothing twice, nothing out of order.
            assert!(
                seen.windows(2).all(|w| w[0] < w[1]),
                "case {case}: {seen:?}"
            );
            // Everything present throughout was returned.
            for k in start.difference(&removed) {
                assert!(seen.contains(k), "case {case}: {k} was skipped");
            }
            // Nothing that never existed.
            assert!(seen.iter().all(|k| ever.contains(k)), "case {case}");
        }
    }

    #[test]
    fn an_item_inserted_behind_the_position_is_never_returned() {
        let mut set: BTreeSet<u32> = [10, 20, 30, 40].into();
        let first = slice_page(&set, None, 2);
        assert_eq!(
            (first.items.as_slice(), first.next),
            (&[10, 20][..], Some(20))
        );
        set.insert(15);
        set.insert(25);
        set.remove(&10);
        let second = slice_page(&set, first.next, 10);
        assert_eq!(
            (second.items.as_slice(), second.next),
            (&[25, 30, 40][..], None)
        );
    }

    #[test]
    fn a_page_that_ends_the_walk_has_no_next_position() {
        let set: BTreeSet<u32> = [1, 2, 3].into();
        assert_eq!(slice_page(&set, None, 3).next, None);
        assert_eq!(slice_page(&set, None, 2).next, Some(2));
        assert_eq!(
            slice_page(&set, Some(3), 2),
            Paged {
                items: vec![],
                next: None
            }
        );
        assert_eq!(slice_page(&set, Some(0), 0).items, [1], "a limit of 0 is 1");
    }

    #[test]
    fn a_failing_item_fails_the_page() {
        let items = [Ok(1), Ok(2), Err("broken"), Ok(4)];
        assert_eq!(
            try_page(items, 2, |k| *k),
            Err("broken"),
            "the item that tells whether more follow"
        );
        assert_eq!(
            try_page(items[..2].to_vec(), 2, |k| *k),
            Ok(Paged {
                items: vec![1, 2],
                next: None
            })
        );
        assert_eq!(
            try_page(items, 1, |k| *k),
            Ok(Paged {
                items: vec![1],
                next: Some(1)
            })
        );
    }
}
