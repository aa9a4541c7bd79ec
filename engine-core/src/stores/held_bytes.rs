//! For unit tests: the bytes a piece of code leaves allocated, counted by this test
//! binary's global allocator per thread (tests run side by side on their own threads).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// The system allocator, counting each thread's live bytes.
struct Counting;

thread_local! {
    // Const-initialised and without a destructor: reading it never allocates.
    static LIVE_BYTES: Cell<isize> = const { Cell::new(0) };
}

fn count(bytes: isize) {
    // A thread being torn down has no counter left: its bytes no longer matter.
    let _ = LIVE_BYTES.try_with(|live| live.set(live.get() + bytes));
}

// SAFETY: every method forwards to `System` unchanged; the counter is only arithmetic.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let pointer = System.alloc(layout);
        if !pointer.is_null() {
            count(layout.size() as isize);
        }
        pointer
    }

    unsafe fn dealloc(&self, pointer: *mut u8, layout: Layout) {
        System.dealloc(pointer, layout);
        count(-(layout.size() as isize));
    }

    unsafe fn realloc(&self, pointer: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let moved = System.realloc(pointer, layout, new_size);
        if !moved.is_null() {
            count(new_size as isize - layout.size() as isize);
        }
        moved
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// What `work` answers, and the bytes it left allocated on this thread.
pub(crate) fn held_by<T>(work: impl FnOnce() -> T) -> (T, isize) {
    let before = LIVE_BYTES.with(Cell::get);
    let answer = work();
    (answer, LIVE_BYTES.with(Cell::get) - before)
}
