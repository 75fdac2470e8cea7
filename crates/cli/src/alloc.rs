//! How the process's allocator hands memory back: on Linux with glibc, blocks of 1 MiB and more get their own
//! mapping, returned to the system when freed. glibc's default raises that threshold after the first large
//! block is freed (up to 32 MiB), so the buffers of large answers (a 4 MB answer is copied a few times per
//! turn) then come from its arenas and stay resident: 20 answers of 4 MB left a server at ~650 MiB, against
//! ~63 MiB with the threshold fixed (bench/memory). `MALLOC_MMAP_THRESHOLD_` in the environment still wins.

/// Fixes glibc's mmap threshold at 1 MiB unless the environment sets one.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[allow(unsafe_code)]
pub(crate) fn return_large_blocks() {
    if std::env::var_os("MALLOC_MMAP_THRESHOLD_").is_some() {
        return;
    }
    // SAFETY: mallopt only sets an allocator parameter; it is called once at start-up, before any other
    // thread exists, with a documented option and value (M_MMAP_THRESHOLD accepts 0..HEAP_MAX/2).
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 1 << 20);
    }
}

/// Nothing to do with other allocators.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub(crate) fn return_large_blocks() {}
