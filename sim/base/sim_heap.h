/* sim_heap — the one binary/d-ary min-heap of servesim, written once as a
 * macro that generates typed, inlined sift functions over a caller-owned
 * array (no allocation, no failure: the caller grows the array).
 *
 * SIM_HEAP_DEFINE(name, T, D, CTX, LESS, PLACE) defines
 *   size_t name_up(CTX ctx, T *h, size_t i)            sift h[i] up
 *   size_t name_down(CTX ctx, T *h, size_t n, size_t i) sift h[i] down in h[0..n)
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
 * (to remove it or change its key in O(log n)): PLACE(ctx, h, i) is called
 * whenever an element lands in h[i], and records i in the owner (as libuv's
 * heap-inl.h keeps the links in the node, here the node keeps its index).
 * SIM_HEAP_NO_PLACE is the hook for heaps nobody indexes into. Each
 * function returns the element's final position. */
#ifndef SIM_HEAP_H
#define SIM_HEAP_H

#include <stddef.h>

#define SIM_HEAP_NO_PLACE(ctx, h, i) ((void)(ctx), (void)(h), (void)(i))

#define SIM_HEAP_DEFINE(name, T, D, CTX, LESS, PLACE)                                  \
    static inline size_t name##_up(CTX ctx, T *h, size_t i)                            \
    {                                                                                  \
        T x_ = h[i];                                                                   \
        while (i > 0) {                                                                \
            size_t p_ = (i - 1) / (D);                                                 \
            if (!LESS(ctx, &x_, &h[p_])) break;                                        \
            h[i] = h[p_];                                                              \
            PLACE(ctx, h, i);                                                          \
            i = p_;                                                                    \
        }                                                                              \
        h[i] = x_;                                                                     \
        PLACE(ctx, h, i);                                                              \
        return i;                                                                      \
    }                                                                                  \
    static inline size_t name##_down(CTX ctx, T *h, size_t n, size_t i)                \
    {                                                                                  \
        T x_ = h[i];                                                                   \
        for (;;) {                                                                     \
            size_t c_ = (D) * i + 1;                                                   \
            if (c_ >= n) break;                                                        \
            size_t best_ = c_;                                                         \
            size_t end_ = c_ + (D) < n ? c_ + (D) : n;                                 \
            for (size_t k_ = c_ + 1; k_ < end_; k_++)                                  \
                if (LESS(ctx, &h[k_], &h[best_])) best_ = k_;                          \
            if (!LESS(ctx, &h[best_], &x_)) break;                                     \
            h[i] = h[best_];                                                           \
            PLACE(ctx, h, i);                                                          \
            i = best_;                                                                 \
        }                                                                              \
        h[i] = x_;                                                                     \
        PLACE(ctx, h, i);                                                              \
        return i;                                                                      \
    }                                                                                  \
    static inline size_t name##_remove(CTX ctx, T *h, size_t n, size_t i)              \
    {                                                                                  \
        if (i == n) return n;                                                          \
        h[i] = h[n];                                                                   \
        return name##_down(ctx, h, n, name##_up(ctx, h, i));                           \
    }                                                                                  \
    static inline void name##_heapify(CTX ctx, T *h, size_t n)                         \
    {                                                                                  \
        /* Every node with a child: D·i + 1 < n. */                                   \
        for (size_t i_ = (n + (D) - 2) / (D); i_-- > 0;) name##_down(ctx, h, n, i_);   \
    }

#endif
