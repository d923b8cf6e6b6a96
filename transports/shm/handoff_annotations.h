// Telling ThreadSanitizer about the hand-over of a single-copy buffer between ranks that are
// threads of one process. The sender publishes the buffer's address with a release store and
// learns that the receiver is done with an acquire load, both on counters in the shared-memory
// segment; but each rank maps that segment at an address of its own, so ThreadSanitizer sees
// two unrelated atomics and no ordering, while the buffer itself, read in place, is at one
// address in both threads. These calls name the same ordering on the buffer's address.
// They compile to nothing outside ThreadSanitizer builds.
#pragma once

#if defined(__SANITIZE_THREAD__)
#define BRAID_THREAD_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define BRAID_THREAD_SANITIZER 1
#endif
#endif

#ifdef BRAID_THREAD_SANITIZER
extern "C" void __tsan_acquire(void* address);
extern "C" void __tsan_release(void* address);
#endif

namespace braid::transport::shm {

/// Everything this thread did to the buffer at `address` happens before what a thread does
/// after handOffAcquire(address).
inline void handOffRelease(const void* address) {
#ifdef BRAID_THREAD_SANITIZER
  __tsan_release(const_cast<void*>(address));
#else
  (void)address;
#endif
}

inline void handOffAcquire(const void* address) {
#ifdef BRAID_THREAD_SANITIZER
  __tsan_acquire(const_cast<void*>(address));
#else
  (void)address;
#endif
}

}  // namespace braid::transport::shm
