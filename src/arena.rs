//! A bump arena behind the global allocator, for one thread's throwaway allocations.
//!
//! Why: a cold `validate` parses every module it analyses with ruff's parser, lays the AST
//! out as a [`Tree`](crate::check::static_py::syntax::Tree) and throws the AST away. Here
//! the AST is allocated by bumping a pointer through chunks this thread holds for the parse,
//! and thrown away whole: nothing of it is freed one by one, and the chunks are kept for the
//! next parse. On the 83 real packages that took 5 % of the instructions and 8 % of the wall
//! time of a cold `validate` (docs/benchmarks.md).
//!
//! How: the binary's global allocator is an [`Arena`] around its real allocator. Outside a
//! [`throwaway`] call it forwards every call. Inside one, on the calling thread only, it
//! serves allocations from the scope's chunks; a free of arena memory is nothing (or gives
//! the bytes back when it was the last allocation), and a free of anything else is
//! forwarded. When the global allocator is not an [`Arena`] (the library's fuzz targets),
//! [`throwaway`] still works: nothing is served from an arena, and what was made is dropped.
//!
//! The contract that makes this sound is [`throwaway`]'s: nothing the scope allocates may
//! outlive it except the value it makes, and that value is only read, then forgotten. A
//! panic inside the scope carries its message out in a copy, never the arena's payload.
//! Debug builds (the tests, which install an [`Arena`] around the system allocator) fill a
//! scope's memory with a pattern when it ends, and abort when memory of a chunk is freed
//! outside a scope: what escaped is found there rather than read as garbage later.

use std::alloc::{GlobalAlloc, Layout};
use std::any::Any;
use std::cell::UnsafeCell;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The size of a scope's first chunk; each chunk it adds is at least twice the last.
const FIRST_CHUNK: usize = 1 << 20;
/// Most chunks one scope holds. The last of them would be 2^23 MiB: an allocation that
/// needs more fails as out of memory, as it would anyway.
const MAX_CHUNKS: usize = 24;
/// The alignment chunks are allocated with; an allocation asking for more is aligned
/// inside its chunk.
const CHUNK_ALIGN: usize = 64;

/// One chunk: `size` bytes from `start`, allocated from the real allocator.
#[derive(Clone, Copy)]
struct Chunk {
    start: usize,
    size: usize,
}

impl Chunk {
    const NONE: Chunk = Chunk { start: 0, size: 0 };

    fn contains(&self, at: usize) -> bool {
        at.wrapping_sub(self.start) < self.size
    }

    fn layout(&self) -> Layout {
        Layout::from_size_align(self.size, CHUNK_ALIGN).expect("a chunk's layout was valid")
    }
}

/// The chunks a scope holds: a fixed array, so that holding them allocates nothing.
#[derive(Clone, Copy)]
struct Chunks {
    list: [Chunk; MAX_CHUNKS],
    count: usize,
}

impl Chunks {
    const EMPTY: Chunks = Chunks {
        list: [Chunk::NONE; MAX_CHUNKS],
        count: 0,
    };

    fn holding(&self, at: usize) -> bool {
        self.list[..self.count].iter().any(|c| c.contains(at))
    }
}

/// This thread's arena. No `Drop` and a constant initializer: reading it from inside the
/// allocator allocates nothing and registers no destructor.
struct State {
    /// Whether this thread's allocations are served from [`State::chunks`] now.
    active: bool,
    /// Whether the global allocator served anything from the arena in this scope (it is
    /// an [`Arena`], and what the scope made lives in the chunks).
    served: bool,
    /// The chunk being bumped, and the free part of it: `next..end`.
    current: usize,
    next: usize,
    end: usize,
    chunks: Chunks,
}

thread_local! {
    static STATE: UnsafeCell<State> = const {
        UnsafeCell::new(State {
            active: false,
            served: false,
            current: 0,
            next: 0,
            end: 0,
            chunks: Chunks::EMPTY,
        })
    };
}

/// Chunks of finished scopes, for the next scope on any thread (one set per scope that ran
/// at the same time as others: as many as there are threads parsing).
static POOL: Mutex<Vec<Chunks>> = Mutex::new(Vec::new());

/// Runs `f` on this thread's arena state. `f` must not allocate through the global
/// allocator (which would reach the state again).
fn with_state<R>(f: impl FnOnce(&mut State) -> R) -> R {
    // SAFETY: the state is this thread's, and no caller holds the reference across anything
    // that could reach it again (the allocator calls its inner allocator directly).
    STATE.with(|s| f(unsafe { &mut *s.get() }))
}

fn align_up(at: usize, align: usize) -> Option<usize> {
    at.checked_add(align - 1).map(|a| a & !(align - 1))
}

/// The global allocator: `inner`, with [`throwaway`]'s scopes served from an arena.
pub struct Arena<A> {
    inner: A,
}

impl<A> Arena<A> {
    /// `inner` with arena scopes.
    pub const fn new(inner: A) -> Self {
        Arena { inner }
    }
}

impl<A: GlobalAlloc> Arena<A> {
    /// Bumps `layout` out of the scope's chunks, adding a chunk when none has room.
    #[inline(always)]
    unsafe fn bump(&self, state: &mut State, layout: Layout) -> *mut u8 {
        state.served = true;
        if let Some(start) = align_up(state.next, layout.align())
            && let Some(end) = start.checked_add(layout.size())
            && end <= state.end
        {
            state.next = end;
            return start as *mut u8;
        }
        // SAFETY: as for `bump`.
        unsafe { self.bump_into_next_chunk(state, layout) }
    }

    /// [`Arena::bump`] when the current chunk has no room: out of line, as it is rare.
    #[cold]
    #[inline(never)]
    unsafe fn bump_into_next_chunk(&self, state: &mut State, layout: Layout) -> *mut u8 {
        loop {
            if let Some(start) = align_up(state.next, layout.align())
                && let Some(end) = start.checked_add(layout.size())
                && end <= state.end
            {
                state.next = end;
                return start as *mut u8;
            }
            let chunks = &mut state.chunks;
            if state.current + 1 < chunks.count {
                // A chunk kept from an earlier scope.
                state.current += 1;
            } else {
                if chunks.count == MAX_CHUNKS {
                    return std::ptr::null_mut();
                }
                let last = if chunks.count == 0 {
                    FIRST_CHUNK / 2
                } else {
                    chunks.list[chunks.count - 1].size
                };
                let Some(size) = layout
                    .size()
                    .checked_add(layout.align())
                    .and_then(|need| need.max(last.saturating_mul(2)).checked_next_power_of_two())
                else {
                    return std::ptr::null_mut();
                };
                let Ok(chunk_layout) = Layout::from_size_align(size, CHUNK_ALIGN) else {
                    return std::ptr::null_mut();
                };
                // SAFETY: the layout's size is not zero.
                let start = unsafe { self.inner.alloc(chunk_layout) };
                if start.is_null() {
                    return start;
                }
                let chunk = Chunk {
                    start: start as usize,
                    size,
                };
                debug_registry::add(chunk);
                chunks.list[chunks.count] = chunk;
                chunks.count += 1;
                state.current = chunks.count - 1;
            }
            let chunk = state.chunks.list[state.current];
            state.next = chunk.start;
            state.end = chunk.start + chunk.size;
        }
    }
}

// SAFETY: outside a scope every call is the inner allocator's. Inside one, memory is handed
// out of chunks the inner allocator gave, never twice (the bump only moves forward, except
// back over the last allocation when it is freed or resized), aligned as asked, and freeing
// it is a no-op; memory the arena did not hand out is freed by the inner allocator.
unsafe impl<A: GlobalAlloc> GlobalAlloc for Arena<A> {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let arena = with_state(|state| {
            // SAFETY: as for `alloc`.
            state.active.then(|| unsafe { self.bump(state, layout) })
        });
        // SAFETY: the caller's contract, passed on.
        arena.unwrap_or_else(|| unsafe { self.inner.alloc(layout) })
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let arena = with_state(|state| {
            state.active.then(|| {
                // SAFETY: as for `alloc`.
                let at = unsafe { self.bump(state, layout) };
                if !at.is_null() {
                    // SAFETY: `layout.size()` bytes from `at` were just handed out. Chunks
                    // are reused, so they are not known to be zero.
                    unsafe { at.write_bytes(0, layout.size()) };
                }
                at
            })
        });
        // SAFETY: the caller's contract, passed on.
        arena.unwrap_or_else(|| unsafe { self.inner.alloc_zeroed(layout) })
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        let at = ptr as usize;
        let mine = with_state(|state| {
            if !state.active {
                return false;
            }
            if !state.chunks.holding(at) {
                return false;
            }
            // The last allocation gives its bytes back (a parser's scratch buffers).
            if at.wrapping_add(layout.size()) == state.next
                && state.chunks.list[state.current].contains(at)
            {
                state.next = at;
            }
            true
        });
        if !mine && !retired::holds(at) {
            debug_registry::check_not_arena(at);
            // SAFETY: not arena memory: the inner allocator's, under the caller's contract.
            unsafe { self.inner.dealloc(ptr, layout) }
        }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let at = ptr as usize;
        let arena = with_state(|state| {
            if !state.active || !state.chunks.holding(at) {
                return None;
            }
            // The last allocation grows or shrinks in place when its chunk has room.
            if at.wrapping_add(layout.size()) == state.next
                && state.chunks.list[state.current].contains(at)
                && let Some(end) = at.checked_add(new_size)
                && end <= state.end
            {
                state.next = end;
                return Some(ptr);
            }
            let Ok(new_layout) = Layout::from_size_align(new_size, layout.align()) else {
                return Some(std::ptr::null_mut());
            };
            // SAFETY: as for `alloc`.
            let to = unsafe { self.bump(state, new_layout) };
            if !to.is_null() {
                // SAFETY: both are arena allocations of at least the copied size, and the
                // new one lies past the old one (the bump only moves forward).
                unsafe { std::ptr::copy_nonoverlapping(ptr, to, layout.size().min(new_size)) };
            }
            Some(to)
        });
        match arena {
            Some(to) => to,
            None if retired::holds(at) => {
                // Memory of a scope that panicked: moved to the inner allocator, never freed.
                let Ok(new_layout) = Layout::from_size_align(new_size, layout.align()) else {
                    return std::ptr::null_mut();
                };
                // SAFETY: the caller's contract: `new_size` is not zero.
                let to = unsafe { self.inner.alloc(new_layout) };
                if !to.is_null() {
                    // SAFETY: the old block holds `layout.size()` bytes and stays valid.
                    unsafe { std::ptr::copy_nonoverlapping(ptr, to, layout.size().min(new_size)) };
                }
                to
            }
            None => {
                debug_registry::check_not_arena(at);
                // SAFETY: not arena memory: the inner allocator's, under the caller's contract.
                unsafe { self.inner.realloc(ptr, layout, new_size) }
            }
        }
    }
}

/// Runs `make` with this thread's allocations served from an arena, then `keep` on what it
/// made (with the arena suspended: what `keep` allocates is the real allocator's), and
/// throws what `make` made away whole: forgotten when the arena served it, else given to
/// `discard` (the global allocator is not an [`Arena`]; `discard` drops it). Returns what
/// `keep` returned.
///
/// A panic in `make` is carried on with a copy of its message (its payload lives in the
/// arena); a panic in `keep` is carried on as it is.
///
/// # Safety
///
/// Nothing `make` allocates may outlive this call except through the value it returns: no
/// cache, static or thread-local of the code it runs may keep an allocation. `keep` may only
/// read that value, and must not take from it anything it owns (through interior
/// mutability); what `keep` returns may own only what `keep` allocated itself.
pub unsafe fn throwaway<T, R>(
    make: impl FnOnce() -> T,
    keep: impl FnOnce(&T) -> R,
    discard: impl FnOnce(T, &R),
) -> R {
    if with_state(|state| state.active) {
        // Nested: the outer scope's arena holds everything, and throws it away with its own.
        let made = make();
        let kept = keep(&made);
        discard(made, &kept);
        return kept;
    }
    let chunks = POOL
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .pop()
        .unwrap_or(Chunks::EMPTY);
    with_state(|state| {
        state.active = true;
        state.served = false;
        state.chunks = chunks;
        state.current = 0;
        let first = chunks.list[0];
        state.next = first.start;
        state.end = first.start + first.size;
    });
    let made = catch_unwind(AssertUnwindSafe(make));
    let served = with_state(|state| {
        state.active = false;
        state.served
    });
    let outcome = match made {
        Ok(made) => {
            let kept = catch_unwind(AssertUnwindSafe(|| keep(&made)));
            match (&kept, served) {
                (_, true) => std::mem::forget(made),
                (Ok(kept), false) => discard(made, kept),
                (Err(_), false) => drop(made),
            }
            kept
        }
        Err(payload) => {
            let message = panic_message(&*payload);
            if served {
                std::mem::forget(payload);
            } else {
                drop(payload);
            }
            // The panic hook ran inside the scope: what it allocated (a buffer of captured
            // output, a cache of the backtrace's symbols) may be kept anywhere. The scope's
            // chunks are never reused or freed.
            retire();
            resume_unwind(Box::new(message));
        }
    };
    release();
    match outcome {
        Ok(kept) => kept,
        Err(payload) => resume_unwind(payload),
    }
}

/// A panic payload's message, copied.
fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic with a payload that is not a message".to_string()
    }
}

/// Ends this thread's scope: its chunks, emptied, go back to the pool; of several only the
/// largest is kept (the next scope starts with room for the largest this one needed).
fn release() {
    let mut chunks = with_state(|state| {
        let chunks = state.chunks;
        state.chunks = Chunks::EMPTY;
        state.next = 0;
        state.end = 0;
        chunks
    });
    if chunks.count == 0 {
        return;
    }
    if cfg!(debug_assertions) {
        for chunk in &chunks.list[..chunks.count] {
            // SAFETY: the chunk is this scope's, and nothing of it is live any more.
            unsafe { (chunk.start as *mut u8).write_bytes(0xA5, chunk.size) };
        }
    }
    if chunks.count > 1 {
        let largest = chunks.list[chunks.count - 1];
        for chunk in &chunks.list[..chunks.count - 1] {
            debug_registry::remove(*chunk);
            // SAFETY: the chunk was allocated by the global allocator's inner allocator with
            // this layout; outside a scope the global allocator forwards to it.
            unsafe { std::alloc::dealloc(chunk.start as *mut u8, chunk.layout()) };
        }
        chunks = Chunks::EMPTY;
        chunks.list[0] = largest;
        chunks.count = 1;
    }
    POOL.lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .push(chunks);
}

/// Ends this thread's scope after a panic: its chunks are [`retired`].
fn retire() {
    let chunks = with_state(|state| {
        let chunks = state.chunks;
        state.chunks = Chunks::EMPTY;
        state.next = 0;
        state.end = 0;
        chunks
    });
    for chunk in &chunks.list[..chunks.count] {
        debug_registry::remove(*chunk);
        retired::add(*chunk);
    }
}

/// A fixed set of chunks that the allocator can add to and ask without allocating or
/// locking: slots of atomics, a freed slot reused, asked up to the highest slot ever used.
struct ChunkSet<const N: usize> {
    starts: [AtomicUsize; N],
    sizes: [AtomicUsize; N],
    /// One past the highest slot ever used: asking costs one load while the set is empty.
    used: AtomicUsize,
}

impl<const N: usize> ChunkSet<N> {
    const fn new() -> Self {
        ChunkSet {
            starts: [const { AtomicUsize::new(0) }; N],
            sizes: [const { AtomicUsize::new(0) }; N],
            used: AtomicUsize::new(0),
        }
    }

    /// Adds `chunk`; false when every slot is taken.
    fn add(&self, chunk: Chunk) -> bool {
        for (i, (start, size)) in self.starts.iter().zip(&self.sizes).enumerate() {
            if start
                .compare_exchange(0, chunk.start, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
            {
                size.store(chunk.size, Ordering::Release);
                self.used.fetch_max(i + 1, Ordering::AcqRel);
                return true;
            }
        }
        false
    }

    fn remove(&self, chunk: Chunk) {
        let used = self.used.load(Ordering::Acquire);
        for (start, size) in self.starts[..used].iter().zip(&self.sizes) {
            if start.load(Ordering::Acquire) == chunk.start {
                size.store(0, Ordering::Release);
                start.store(0, Ordering::Release);
                return;
            }
        }
    }

    #[inline]
    fn holds(&self, at: usize) -> bool {
        let used = self.used.load(Ordering::Acquire);
        used != 0
            && self.starts[..used]
                .iter()
                .zip(&self.sizes)
                .any(|(start, size)| {
                    let start = start.load(Ordering::Acquire);
                    start != 0 && at.wrapping_sub(start) < size.load(Ordering::Acquire)
                })
    }
}

/// Chunks of scopes that panicked. Their memory stays valid for the process's life: a free
/// of it is nothing, and a resize moves it to the inner allocator.
mod retired {
    use super::{Chunk, ChunkSet};

    /// A panic while parsing ends the run (it is carried on), so few scopes can ever panic
    /// in one process; past this many the process aborts rather than hand retired memory to
    /// the inner allocator.
    static RETIRED: ChunkSet<64> = ChunkSet::new();

    pub(super) fn add(chunk: Chunk) {
        if !RETIRED.add(chunk) {
            std::process::abort();
        }
    }

    #[inline]
    pub(super) fn holds(at: usize) -> bool {
        RETIRED.holds(at)
    }
}

/// Debug builds: every chunk there is, so that freeing arena memory outside a scope (memory
/// that escaped one) aborts at once. Nothing in release builds.
mod debug_registry {
    use super::{Chunk, ChunkSet};

    /// More chunks than this are not checked.
    static EVERY_CHUNK: ChunkSet<256> = ChunkSet::new();

    pub(super) fn add(chunk: Chunk) {
        if cfg!(debug_assertions) {
            EVERY_CHUNK.add(chunk);
        }
    }

    pub(super) fn remove(chunk: Chunk) {
        if cfg!(debug_assertions) {
            EVERY_CHUNK.remove(chunk);
        }
    }

    pub(super) fn check_not_arena(at: usize) {
        if cfg!(debug_assertions) && EVERY_CHUNK.holds(at) {
            // Printing would allocate: abort with what the core dump and the test harness
            // show.
            std::process::abort();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The library's tests run on an [`Arena`] around the system allocator (src/lib.rs):
    /// what a scope makes is served from the arena, and nothing of it is freed one by one.
    #[test]
    fn a_scope_serves_from_the_arena_and_forgets_what_it_made() {
        let dropped = std::cell::Cell::new(false);
        let kept = unsafe {
            throwaway(
                || {
                    let inside: Vec<u64> = (0..10_000).collect();
                    let at = inside.as_ptr() as usize;
                    let served = with_state(|s| s.chunks.holding(at));
                    (inside, served)
                },
                |(inside, served)| (inside.iter().sum::<u64>(), *served),
                |_, _| dropped.set(true),
            )
        };
        assert_eq!(kept, (49_995_000, true));
        assert!(
            !dropped.get(),
            "the arena's value is forgotten, not dropped"
        );
        // What `keep` returned is the real allocator's: it outlives the scope.
        let after = unsafe { throwaway(|| (), |_| vec![1u8; 100], |_, _| ()) };
        assert!(!with_state(|s| s.chunks.holding(after.as_ptr() as usize)));
        assert_eq!(after, vec![1u8; 100]);
    }

    /// Growing the last allocation stays in place; growing an earlier one copies it; what
    /// is freed last gives its bytes back; a big allocation gets a chunk big enough.
    #[test]
    fn realloc_and_free_keep_every_value() {
        unsafe {
            throwaway(
                || {
                    let mut a: Vec<u32> = Vec::with_capacity(4);
                    let mut b: Vec<u32> = Vec::with_capacity(4);
                    for i in 0..50_000 {
                        a.push(i);
                        if i % 3 == 0 {
                            b.push(i * 2);
                        }
                    }
                    assert!(a.iter().copied().eq(0..50_000));
                    assert!(b.iter().copied().eq((0..50_000).step_by(3).map(|i| i * 2)));
                    let big = vec![7u8; 3 * FIRST_CHUNK];
                    assert!(big.iter().all(|b| *b == 7));
                    assert!(with_state(|s| s.chunks.holding(big.as_ptr() as usize)));
                    let zeroed = vec![0u64; 1000];
                    assert!(zeroed.iter().all(|z| *z == 0));
                    let before = with_state(|s| s.next);
                    let scratch = vec![1u8; 64];
                    drop(scratch);
                    assert_eq!(
                        with_state(|s| s.next),
                        before,
                        "the last allocation came back"
                    );
                    (a, b)
                },
                |(a, b)| a.len() + b.len(),
                |_, _| (),
            )
        };
    }

    /// A panic in `make` arrives as a copy of its message; the scope has ended (later
    /// allocations are the real allocator's).
    #[test]
    fn a_panic_in_the_scope_carries_its_message_out() {
        let caught = catch_unwind(|| unsafe {
            throwaway(
                || -> Vec<u8> { panic!("lexer lost at byte {}", 17) },
                |v| v.len(),
                |_, _| (),
            )
        });
        let payload = caught.expect_err("the panic went on");
        assert_eq!(
            payload.downcast_ref::<String>().map(String::as_str),
            Some("lexer lost at byte 17")
        );
        assert!(!with_state(|s| s.active));
        let after = Box::new([3u8; 10]);
        assert!(!with_state(|s| s.chunks.holding(after.as_ptr() as usize)));
        assert!(!retired::holds(after.as_ptr() as usize));
    }

    /// What a panicking scope allocated and something outside keeps is never reused: a
    /// free of it is nothing, a resize copies it out.
    #[test]
    fn memory_kept_from_a_panicking_scope_stays_valid() {
        let kept: std::sync::Mutex<Vec<u8>> = std::sync::Mutex::new(Vec::new());
        let caught = catch_unwind(AssertUnwindSafe(|| unsafe {
            throwaway(
                || {
                    kept.lock()
                        .unwrap()
                        .extend_from_slice(b"allocated in the scope");
                    panic!("after keeping");
                },
                |_: &()| (),
                |_, _| (),
            )
        }));
        assert!(caught.is_err());
        let mut kept = kept.into_inner().unwrap();
        assert!(retired::holds(kept.as_ptr() as usize));
        // Later scopes do not hand the retired chunk out again.
        unsafe { throwaway(|| vec![0xEEu8; 4096], |v| v.len(), |_, _| ()) };
        assert_eq!(kept, b"allocated in the scope");
        kept.extend_from_slice(&[b'!'; 1000]);
        assert!(!retired::holds(kept.as_ptr() as usize));
        assert!(kept.starts_with(b"allocated in the scope!"));
    }
}
