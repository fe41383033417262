/* A sense-reversing spin barrier for the few threads of one class-parallel pass.
 *
 * The threads of sgd_pass meet once per row (to share the models' scores), a
 * few microseconds apart: spinning is far cheaper there than a mutex and a
 * condition variable. A waiter spins for half a millisecond at most, then naps
 * (50 microseconds at a time), so that it does not keep the core a late thread
 * needs; it says when it had to nap: another thread was not
 * running (a busy machine), and the pass had better go on in one thread (see
 * sgd_pass).
 */
#ifndef SKLEARN_SKETCH_SPIN_BARRIER_H
#define SKLEARN_SKETCH_SPIN_BARRIER_H

#if defined(_MSC_VER)
#include <windows.h>
static inline double sks_seconds(void) {
    LARGE_INTEGER count, frequency;
    QueryPerformanceCounter(&count);
    QueryPerformanceFrequency(&frequency);
    return (double)count.QuadPart / (double)frequency.QuadPart;
}
#define SKS_NAP() Sleep(0)
#define SKS_ADD_FETCH(p) InterlockedIncrement((volatile LONG*)(p))
#define SKS_LOAD(p) InterlockedCompareExchange((volatile LONG*)(p), 0, 0)
#define SKS_STORE(p, v) InterlockedExchange((volatile LONG*)(p), (v))
#define SKS_CAS_FROM_ZERO(p, v) InterlockedCompareExchange((volatile LONG*)(p), (v), 0)
#else
#include <time.h>
static inline double sks_seconds(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return now.tv_sec + now.tv_nsec * 1e-9;
}
static inline void sks_nap(void) {
    struct timespec nap = {0, 50000};
    nanosleep(&nap, NULL);
}
#define SKS_NAP() sks_nap()
#define SKS_ADD_FETCH(p) __atomic_add_fetch((p), 1, __ATOMIC_ACQ_REL)
#define SKS_LOAD(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define SKS_STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define SKS_CAS_FROM_ZERO(p, v) do { long sks_zero = 0; __atomic_compare_exchange_n( \
    (p), &sks_zero, (v), 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE); } while (0)
#endif

typedef struct {
    long count;    /* threads arrived in this round */
    long sense;    /* flips when the last one arrives */
    long n;        /* threads that meet */
    long flag;     /* 0, or the first round after which every thread must stop */
    long solo;     /* 0, or the first round after which the first thread goes on alone */
} sks_barrier;

/* One thread's side: its sense and the rounds it has completed. */
typedef struct {
    long sense;
    long rounds;
} sks_waiter;

static inline void sks_barrier_init(sks_barrier* b, long n) {
    b->count = 0;
    b->sense = 0;
    b->n = n;
    b->flag = 0;
    b->solo = 0;
}

/* Wait until all b->n threads have called this (each with its own waiter,
 * zeroed at first). Everything written before the call is visible after it.
 * Returns 1 when the wait took more than half a millisecond, else 0. */
static inline int sks_barrier_wait(sks_barrier* b, sks_waiter* w) {
    long spins = 0;
    double start = 0.0;
    int slow = 0;
    w->sense = !w->sense;
    w->rounds += 1;
    if (SKS_ADD_FETCH(&b->count) == b->n) {
        SKS_STORE(&b->count, 0);
        SKS_STORE(&b->sense, w->sense);
        return 0;
    }
    while (SKS_LOAD(&b->sense) != w->sense) {
        if ((++spins & 63) == 0) {
            double waited;
            if (start == 0.0) {
                start = sks_seconds();
                continue;
            }
            waited = sks_seconds() - start;
            if (waited > 5e-4) {
                slow = 1;
                SKS_NAP();
            }
        }
    }
    return slow;
}

/* Ask every thread to stop after the next round. Between two rounds all the
 * threads have completed as many, so they all stamp the same round, and one
 * that reads the flag within the current round (raised by another after it
 * passed the last meeting) does not stop before the others. */
static inline void sks_barrier_raise(sks_barrier* b, sks_waiter* w) {
    SKS_CAS_FROM_ZERO(&b->flag, w->rounds + 1);
}

/* Whether the threads stop now: read after a wait. */
static inline long sks_barrier_raised(sks_barrier* b, sks_waiter* w) {
    long flag = SKS_LOAD(&b->flag);
    return flag != 0 && flag <= w->rounds;
}

/* The same two for handing the pass to the first thread. */
static inline void sks_barrier_go_solo(sks_barrier* b, sks_waiter* w) {
    SKS_CAS_FROM_ZERO(&b->solo, w->rounds + 1);
}

static inline long sks_barrier_solo(sks_barrier* b, sks_waiter* w) {
    long solo = SKS_LOAD(&b->solo);
    return solo != 0 && solo <= w->rounds;
}

#endif
