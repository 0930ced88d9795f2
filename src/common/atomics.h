/*
 * atomics.h - the C11 atomics ringlog uses, under names that say the
 * ordering.  Every use of an acquire or release names, in a comment at the
 * call, the operation it pairs with.
 */
#ifndef RLOG_COMMON_ATOMICS_H
#define RLOG_COMMON_ATOMICS_H

#include <stdatomic.h>

#define load_relaxed(p)      atomic_load_explicit((p), memory_order_relaxed)
#define load_acquire(p)      atomic_load_explicit((p), memory_order_acquire)
#define store_relaxed(p, v)  atomic_store_explicit((p), (v), memory_order_relaxed)
#define store_release(p, v)  atomic_store_explicit((p), (v), memory_order_release)
#define store_seq_cst(p, v)  atomic_store_explicit((p), (v), memory_order_seq_cst)
#define load_seq_cst(p)      atomic_load_explicit((p), memory_order_seq_cst)
#define fetch_add_relaxed(p, v) atomic_fetch_add_explicit((p), (v), memory_order_relaxed)
#define exchange_acq_rel(p, v)  atomic_exchange_explicit((p), (v), memory_order_acq_rel)

#endif
