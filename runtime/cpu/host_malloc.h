// Process-wide malloc settings for executor runs, whose values are large (often tens of MiB)
// and short-lived: each instruction allocates its result and frees operands after their last
// use.
//
// With glibc's defaults every allocation above the mmap threshold (at most 32 MiB, usually far
// less) is a fresh mmap, and freeing it is a munmap; so every such result re-faults all its
// pages from the kernel (one fault and one kernel page clear per 4 KiB), which costs several
// times the op's own work on a memory-bound op. Device threads also get arenas of their own,
// which serve any allocation over 64 MiB with mmap whatever the settings.
//
// TuneMallocForExecutor keeps large buffers in the heap instead: M_MMAP_MAX = 0 (no mmap for
// large blocks), M_TRIM_THRESHOLD = -1 (never return the heap's free top to the kernel: a
// verify run frees the reference's GiBs and then allocates the devices' as much again, which
// re-faulted every page when the top was trimmed -- SortWithMovableAndNonMovableDimension
// spent a third of its 59 s clearing pages), and M_ARENA_MAX = 1 (device threads share the main
// heap, so what one device frees another can reuse; the executor allocates per instruction,
// so the shared lock is not contended). A freed value's pages are then reused by the next
// result without faulting. Peak resident memory is not raised: freed blocks are reused before
// the heap grows, and trimming only ever lowers the current, never the peak, footprint (the
// `executor_bench --memory` check bounds it by 2 x live set + 100 MiB). The heap is returned
// at exit.
#ifndef RUNTIME_CPU_HOST_MALLOC_H_
#define RUNTIME_CPU_HOST_MALLOC_H_

namespace runtime {

// Applies the settings above once per process (later calls do nothing); a no-op where the C
// library is not glibc. Call before starting device threads: RunOnDevices does.
void TuneMallocForExecutor();

}  // namespace runtime

#endif  // RUNTIME_CPU_HOST_MALLOC_H_
