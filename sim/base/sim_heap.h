/* sim_heap — the one binary/d-ary min-heap of servesim, written once as a
 * macro that generates typed, inlined sift functions over a caller-owned
 * array (no allocation, no failure: the caller grows the array).
 *
 * SIM_HEAP_DEFINE(name, T, D, CTX, LESS, PLACE) defines
 *   size_t name_up(CTX ctx, T *h, size_t i)            sift h[i] up
 *   size_t name_down(CTX ctx, T *h, size_t n, size_t i) sift h[i] down in h[0..n)
 *   name_up_from / name_down_from(..., i, T x) the same for an element x held
 *       outside the array that is to land at or above/below slot i
 *   size_t name_remove(CTX ctx, T *h, size_t n, size_t i)
 *       removes h[i] from a heap that now holds n elements (the caller has
 *       already decremented its count): the last one, h[n], takes its place
 *   void   name_heapify(CTX ctx, T *h, size_t n)       bottom-up, O(n)
 * with D children per node (children of i at D·i+1 … D·i+D, so D = 4 puts a
 * node's four 16-byte children on one cache line when h[1] is line-aligned).
 * LESS(ctx, const T *a, const T *b) is the strict order: ties keep the first
 * child, so equal keys come out in the order a total LESS gives them.
 *
 * The heap is intrusive when an element's owner wants to know where it is
 * (to remove it or change its key in O(log n)): PLACE(ctx, x, i) is called
 * whenever the element x (a T value) lands in h[i], and records i in x's
 * owner (as libuv's heap-inl.h keeps the links in the node, here the node
 * keeps its index).
 * SIM_HEAP_NO_PLACE is the hook for heaps nobody indexes into. Each
 * function returns the element's final position. */
#ifndef SIM_HEAP_H
#define SIM_HEAP_H

#include <stddef.h>

/* An empty volatile asm in the taken arm of the binary heap's child choice:
 * GCC and clang cannot if-convert an arm holding one, so the choice stays a
 * branch. The choice is a coin toss, but a predicted branch lets the CPU
 * start the next level's loads at once, while a select (cmov) makes them
 * wait for this level's compare, itself waiting on cache-missing keys: with
 * cmov, bench_prefix's evictions ran about a fifth slower. */
#if defined(__GNUC__)
#define SIM_HEAP_BRANCH() __asm__ volatile("")
#else
#define SIM_HEAP_BRANCH() ((void)0)
#endif

#define SIM_HEAP_NO_PLACE(ctx, x, i) ((void)(ctx), (void)(i))

/* A user of the heap calls only the functions it needs; clang warns about
 * unused static inline functions defined in a .c file (where the macro
 * expands), so the generated ones are marked as possibly unused. */
#if defined(__GNUC__)
#define SIM_HEAP_FN static inline __attribute__((unused))
#else
#define SIM_HEAP_FN static inline
#endif

/* The element being moved is held in a local (x_ / v_) and handed to PLACE
 * by value, so the hook never re-reads the array after a store (a store to
 * the owner's position field may alias the array and force a reload). */
#define SIM_HEAP_DEFINE(name, T, D, CTX, LESS, PLACE)                                  \
    SIM_HEAP_FN size_t name##_up_from(CTX ctx, T *h, size_t i, T x_)                   \
    {                                                                                  \
        while (i > 0) {                                                                \
            size_t p_ = (i - 1) / (D);                                                 \
            T v_ = h[p_];                                                              \
            if (!LESS(ctx, &x_, &v_)) break;                                           \
            h[i] = v_;                                                                 \
            PLACE(ctx, v_, i);                                                         \
            i = p_;                                                                    \
        }                                                                              \
        h[i] = x_;                                                                     \
        PLACE(ctx, x_, i);                                                             \
        return i;                                                                      \
    }                                                                                  \
    SIM_HEAP_FN size_t name##_down_from(CTX ctx, T *h, size_t n, size_t i, T x_)       \
    {                                                                                  \
        for (;;) {                                                                     \
            size_t c_ = (D) * i + 1;                                                   \
            if (c_ >= n) break;                                                        \
            if ((D) == 2) {                                                            \
                if (c_ + 1 < n && LESS(ctx, &h[c_ + 1], &h[c_])) {                     \
                    c_++;                                                              \
                    SIM_HEAP_BRANCH();                                                 \
                }                                                                      \
            } else {                                                                   \
                size_t end_ = c_ + (D) < n ? c_ + (D) : n;                             \
                size_t b_ = c_;                                                        \
                for (size_t k_ = c_ + 1; k_ < end_; k_++)                              \
                    if (LESS(ctx, &h[k_], &h[b_])) b_ = k_;                            \
                c_ = b_;                                                               \
            }                                                                          \
            T v_ = h[c_];                                                              \
            if (!LESS(ctx, &v_, &x_)) break;                                           \
            h[i] = v_;                                                                 \
            PLACE(ctx, v_, i);                                                         \
            i = c_;                                                                    \
        }                                                                              \
        h[i] = x_;                                                                     \
        PLACE(ctx, x_, i);                                                             \
        return i;                                                                      \
    }                                                                                  \
    SIM_HEAP_FN size_t name##_up(CTX ctx, T *h, size_t i)                              \
    {                                                                                  \
        return name##_up_from(ctx, h, i, h[i]);                                        \
    }                                                                                  \
    SIM_HEAP_FN size_t name##_down(CTX ctx, T *h, size_t n, size_t i)                  \
    {                                                                                  \
        return name##_down_from(ctx, h, n, i, h[i]);                                   \
    }                                                                                  \
    SIM_HEAP_FN size_t name##_remove(CTX ctx, T *h, size_t n, size_t i)                \
    {                                                                                  \
        /* h[n] fills the hole and goes up or down, never both: where it rose  \
         * to, its children are no less than the ancestor it displaced, which   \
         * it is less than. */                                                  \
        if (i == n) return n;                                                          \
        T x_ = h[n];                                                                   \
        if (i > 0 && LESS(ctx, &x_, &h[(i - 1) / (D)]))                              \
            return name##_up_from(ctx, h, i, x_);                                      \
        return name##_down_from(ctx, h, n, i, x_);                                     \
    }                                                                                  \
    SIM_HEAP_FN void name##_heapify(CTX ctx, T *h, size_t n)                           \
    {                                                                                  \
        /* Every node with a child: D·i + 1 < n. */                                   \
        for (size_t i_ = (n + (D) - 2) / (D); i_-- > 0;) name##_down(ctx, h, n, i_);   \
    }

#endif
